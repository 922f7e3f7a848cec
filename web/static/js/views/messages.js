// Messages: the list (newest first, live over the stream), filters by
// channel, state and words, answering buttons and forms, what answered a
// message and the votes of an approval, the callback's delivery log with
// Redeliver, and deletion.
import { $, el, button, timeEl, confirmed, syncChildren } from '../dom.js';
import { enc, transient } from '../api.js';
import { renderMarkdown } from '../markdown.js';

const PAGE_SIZE = 50; // shown at first and added by "More"
const MAX_LIMIT = 200; // the largest page GET /v1/messages gives
const REFRESH_DELAY_MS = 200; // live updates are gathered this long
const RETRY_DELAY_MS = 5000;
const HTTP_URL = /^https?:\/\//i;

// Polling states and approval states in words.
const STATUS_WORDS = {
  pending: 'Waiting for an answer',
  submitted: 'Answered',
  already_read: 'Answered · collected',
  expired: 'Answered · not collected in time',
  failed: 'Failed',
};
const APPROVAL_WORDS = { pending: 'Waiting for approval', approved: 'Approved', rejected: 'Rejected', expired: 'Expired: no decision in time' };
const DELIVERY_WORDS = { pending: 'Callback queued', delivered: 'Callback delivered', failed: 'Callback failed' };

const str = (v) => (typeof v === 'string' ? v : '');

function formatValue(v) {
  if (v === true) return 'yes';
  if (v === false) return 'no';
  if (v === null || v === undefined) return '';
  return typeof v === 'object' ? JSON.stringify(v) : String(v);
}

export class MessagesView {
  constructor(ctx) {
    this.ctx = ctx;
    this.title = 'Messages';
    this.section = $('view-messages');
    this.channel = ''; // channel filter ('' = all)
    this.state = ''; // state filter, applied to the loaded messages
    this.q = ''; // search words
    this.wanted = PAGE_SIZE;
    this.loadSeq = 0; // only the newest load renders
    this.channelNames = new Map();
    this.nodes = new Map(); // message id → {sig, node}
    this.logs = new Map(); // message id → delivery log shown, while open
    this.fieldSeq = 0;
    this.refreshTimer = null;
    $('messages-channel').addEventListener('change', () => this.refilter());
    $('messages-state').addEventListener('change', () => this.refilter());
    $('messages-search').addEventListener('submit', (ev) => {
      ev.preventDefault();
      this.refilter();
    });
    $('messages-q').addEventListener('search', () => this.refilter());
    $('messages').addEventListener('click', (ev) => this.click(ev));
    $('messages').addEventListener('submit', (ev) => this.submit(ev));
    $('messages-more').addEventListener('click', () => this.more());
  }

  leave() {
    clearTimeout(this.refreshTimer);
    this.refreshTimer = null;
  }

  // live is called for each stream event: one re-fetch for a burst.
  live(delay = REFRESH_DELAY_MS) {
    const { router } = this.ctx;
    if (this.refreshTimer) return;
    this.refreshTimer = setTimeout(() => {
      this.refreshTimer = null;
      if (router.current !== 'messages') return;
      const seq = router.seq;
      router.begin();
      this.load(seq, { background: true }).catch((err) => {
        if (transient(err)) setTimeout(() => this.live(0), RETRY_DELAY_MS);
        else router.fail(err);
      }).finally(() => router.end());
    }, delay);
  }

  refilter() {
    this.channel = $('messages-channel').value;
    this.state = $('messages-state').value;
    this.q = $('messages-q').value.trim();
    this.wanted = PAGE_SIZE;
    const seq = this.ctx.router.seq;
    this.ctx.router.run(() => this.load(seq));
  }

  more() {
    const shown = $('messages').children.length;
    this.wanted = Math.max(this.wanted, this.loaded || 0) + PAGE_SIZE;
    const seq = this.ctx.router.seq;
    this.ctx.router.run(async () => {
      await this.load(seq);
      const first = $('messages').children[shown];
      if (first) first.focus();
    });
  }

  // fetch reads the newest wanted messages in pages of at most MAX_LIMIT,
  // each after the cursor of the one before.
  async fetch(channelId, wanted) {
    const seen = new Set();
    const list = [];
    let total = 0;
    let exact = true;
    let before = '';
    while (list.length < wanted) {
      const params = new URLSearchParams({ limit: String(Math.min(MAX_LIMIT, wanted - list.length)) });
      if (before) params.set('before', before);
      if (channelId) params.set('channel_id', channelId);
      if (this.q) params.set('q', this.q);
      const data = await this.ctx.api('GET', `/v1/messages?${params}`);
      const page = Array.isArray(data.messages) ? data.messages : [];
      if (!before) {
        total = typeof data.total === 'number' ? data.total : page.length;
        exact = data.total_exact !== false;
      }
      for (const m of page) {
        if (m && !seen.has(m.id)) {
          seen.add(m.id);
          list.push(m);
        }
      }
      before = str(data.next_before);
      if (!before) break;
    }
    return { list, total: Math.max(total, list.length), exact };
  }

  async channels() {
    const data = await this.ctx.api('GET', '/v1/channels');
    return Array.isArray(data.channels) ? data.channels : [];
  }

  // load renders the view. A background load (a live update) reads the
  // channels only when it meets one it cannot name. The first load reads
  // channels and messages at once.
  async load(seq, opts = {}) {
    const { router } = this.ctx;
    const mine = ++this.loadSeq;
    let channels = null;
    let page;
    try {
      if (opts.background) page = await this.fetch(this.channel, this.wanted);
      else [channels, page] = await Promise.all([this.channels(), this.fetch(this.channel, this.wanted)]);
    } catch (err) {
      if (!(err && err.status === 404 && this.channel)) throw err;
      this.channel = ''; // the chosen channel was deleted meanwhile
      [channels, page] = await Promise.all([this.channels(), this.fetch('', this.wanted)]);
    }
    if (!channels && page.list.some((m) => !this.channelNames.has(m.channel_id))) channels = await this.channels();
    if (router.stale(seq) || mine !== this.loadSeq) return;
    if (channels) this.renderChannels(channels);
    this.render(page);
  }

  renderChannels(channels) {
    this.channelNames = new Map(channels.map((c) => [c.id, c.name]));
    const sorted = [...channels].sort((a, b) => a.name.localeCompare(b.name) || a.id.localeCompare(b.id));
    $('messages-channel').replaceChildren(el('option', { value: '', text: 'All channels' }),
      ...sorted.map((c) => el('option', { value: c.id, text: c.name })));
    $('messages-channel').value = this.channel;
  }

  matches(m) {
    switch (this.state) {
      case 'open': return this.canAnswer(m) || (m.approval && m.approval.status === 'pending');
      case 'answered': return m.status !== 'pending' || (m.approval && m.approval.status !== 'pending');
      case 'delivery-failed': return !!m.delivery && m.delivery.state === 'failed';
      default: return true;
    }
  }

  render({ list, total, exact }) {
    this.loaded = list.length;
    const me = this.ctx.session.user ? this.ctx.session.user.id : '';
    const next = new Map();
    const shown = list.filter((m) => this.matches(m));
    const nodes = shown.map((m) => {
      const channel = this.channelNames.get(m.channel_id) || m.channel_id;
      const log = this.logs.get(m.id);
      const sig = JSON.stringify(m) + '\u0000' + channel + '\u0000' + JSON.stringify(log || null) + me;
      const old = this.nodes.get(m.id);
      const node = old && old.sig === sig ? old.node : this.article(m, channel, log);
      next.set(m.id, { sig, node });
      return node;
    });
    this.nodes = next;
    syncChildren($('messages'), nodes);
    $('messages-empty').hidden = nodes.length > 0;
    $('messages-empty-text').textContent = list.length === 0 && !this.q && !this.channel
      ? "No messages yet. Send one with curl to a channel's webhook URL: the Channels page has a ready example."
      : 'No message matches. Change the filters or the search words.';
    $('messages-more').hidden = total <= list.length;
    const filtered = this.state ? ` (${nodes.length} match the filter)` : '';
    $('messages-count').textContent = list.length > 0
      ? `Showing ${list.length} of ${total}${exact ? '' : '+'} message${total === 1 ? '' : 's'}${filtered}`
      : '';
  }

  // ---- one message ----
  isApprover(m) {
    const me = this.ctx.session.user;
    return !!(me && m.approval && Array.isArray(m.approval.approvers) && m.approval.approvers.includes(me.id));
  }

  hasVoted(m) {
    const me = this.ctx.session.user;
    return !!(me && m.approval && Array.isArray(m.approval.votes) && m.approval.votes.some((v) => v.user_id === me.id));
  }

  // canAnswer: there is something this user can still answer.
  canAnswer(m) {
    if (m.status !== 'pending' || (m.response !== null && m.response !== undefined)) return false;
    const actions = Array.isArray(m.actions) ? m.actions : [];
    if (!actions.some((a) => a && (a.type === 'button' || a.type === 'form'))) return false;
    if (m.approval) return m.approval.status === 'pending' && this.isApprover(m) && !this.hasVoted(m);
    return true;
  }

  statusWords(m) {
    if (m.approval) return APPROVAL_WORDS[m.approval.status] || m.approval.status;
    if (m.status === 'pending') return this.canAnswer(m) ? STATUS_WORDS.pending : '';
    return STATUS_WORDS[m.status] || m.status;
  }

  article(m, channel, log) {
    const title = str(m.title);
    const words = this.statusWords(m);
    const status = m.approval ? `approval-${m.approval.status}` : str(m.status);
    return el('article', { className: `message priority-${m.priority || 'normal'}`, dataset: { messageId: m.id, status: str(m.status) }, tabindex: '-1', 'aria-label': title },
      el('header', { className: 'message-head' },
        el('h3', { className: 'message-title', text: title }),
        words ? el('span', { className: 'message-status', dataset: { status }, text: words }) : null),
      el('div', { className: 'message-meta' },
        el('span', { className: 'message-channel', text: channel }),
        m.priority && m.priority !== 'normal' ? el('span', { className: 'message-priority', dataset: { priority: m.priority }, text: `${m.priority} priority` }) : null,
        m.created_at ? timeEl(m.created_at, 'message-time') : null,
        m.muted ? el('span', { className: 'message-muted', title: 'The channel was muted: stored without a push', text: 'muted' }) : null),
      el('div', { className: 'message-body' }, renderMarkdown(str(m.body))),
      this.approval(m),
      this.outcome(m),
      this.actions(m),
      this.delivery(m, log),
      m.approval && !this.isOwner(m) ? null : el('div', { className: 'message-footer' }, button('message-delete danger small', 'Delete', `Delete message ${title}`)));
  }

  isOwner(m) {
    // The owner sees callback_url (even null) and the outcome; an approver
    // of someone else's channel never has the channel in its list.
    return this.channelNames.has(m.channel_id);
  }

  approval(m) {
    const a = m.approval;
    if (!a || typeof a !== 'object') return null;
    const votes = Array.isArray(a.votes) ? a.votes : [];
    const needed = a.required_count || 0;
    const approvers = Array.isArray(a.approvers) ? a.approvers.length : 0;
    return el('div', { className: 'message-approval', dataset: { approvalStatus: a.status } },
      el('p', { className: 'approval-summary' },
        `${a.approvals_received || 0} of ${needed} approval${needed === 1 ? '' : 's'} needed`,
        a.rejections_received ? ` · ${a.rejections_received} rejected` : '',
        ` · rule: ${needed} of ${approvers} approver${approvers === 1 ? '' : 's'}`,
        a.status === 'pending' && a.deadline ? el('span', {}, ' · closes ', timeEl(a.deadline)) : null),
      votes.length ? el('ul', { className: 'votes' }, ...votes.map((v) => {
        const data = v.response_data && typeof v.response_data === 'object' ? Object.entries(v.response_data) : [];
        return el('li', { className: 'vote', dataset: { action: str(v.action), userId: str(v.user_id) } },
          el('strong', { className: 'vote-who', text: str(v.user_name) || str(v.user_id) }), ' ',
          el('span', { className: `vote-action vote-${str(v.action)}`, text: v.action === 'approve' ? 'approved' : v.action === 'reject' ? 'rejected' : str(v.action) }), ' ',
          v.responded_at ? timeEl(v.responded_at) : null,
          ...data.map(([k, val]) => el('span', { className: 'vote-note', text: ` · ${k}: ${formatValue(val)}` })));
      })) : null,
      this.isApprover(m) && this.hasVoted(m) && a.status === 'pending' ? el('p', { className: 'note voted', text: 'You have voted.' }) : null);
  }

  outcome(m) {
    const o = m.outcome;
    if (!o || typeof o !== 'object') return null;
    const actions = Array.isArray(m.actions) ? m.actions : [];
    const act = actions.find((a) => a && a.key === o.action) || {};
    const fields = new Map((Array.isArray(act.fields) ? act.fields : []).map((f) => [f.key, f.label || f.key]));
    const responses = o.responses && typeof o.responses === 'object' ? Object.entries(o.responses) : [];
    const by = o.by && typeof o.by === 'object' ? (str(o.by.name) ? `${o.by.name} (${str(o.by.email)})` : str(o.by.email)) : '';
    return el('div', { className: 'message-outcome', dataset: { action: str(o.action) } },
      el('p', {}, el('span', { className: 'outcome-label', text: str(act.label) || str(o.action) }),
        by ? el('span', { className: 'outcome-by', text: ` · by ${by}` }) : null,
        o.at ? el('span', {}, ' · ', timeEl(o.at, 'outcome-at')) : null),
      responses.length ? el('dl', { className: 'outcome-values' }, ...responses.flatMap(([k, v]) => [
        el('dt', { text: fields.get(k) || k }), el('dd', { dataset: { fieldKey: k }, text: formatValue(v) })])) : null);
  }

  actions(m) {
    const actions = Array.isArray(m.actions) ? m.actions : [];
    const answering = this.canAnswer(m);
    const row = [];
    const forms = [];
    actions.forEach((a, i) => {
      if (!a || typeof a !== 'object') return;
      const label = str(a.label);
      const dataset = { index: String(i) };
      if (str(a.key)) dataset.key = a.key;
      const style = a.style === 'primary' || a.style === 'destructive' ? ` style-${a.style}` : ' style-default';
      if (a.type === 'url') {
        // Links stay after an answer. Only http(s) becomes a link.
        const url = str(a.value);
        row.push(HTTP_URL.test(url)
          ? el('a', { className: 'message-link button-link' + style, href: url, target: '_blank', rel: 'noopener noreferrer', title: url, dataset, text: label })
          : el('span', { className: 'message-link-blocked', title: 'Not an http or https address: not a link', dataset, text: label }));
      } else if (!answering) {
        // answered, or not this user's to answer
      } else if (a.type === 'button') {
        row.push(el('button', { type: 'button', className: 'message-action' + style, dataset, text: label }));
      } else if (a.type === 'form') {
        forms.push(this.form(a, dataset, style));
      }
    });
    if (!row.length && !forms.length) return null;
    return el('div', { className: 'message-actions' }, row.length ? el('div', { className: 'message-buttons' }, ...row) : null, ...forms);
  }

  form(a, dataset, style) {
    const fields = (Array.isArray(a.fields) ? a.fields : []).filter((f) => f && typeof f === 'object');
    return el('form', { className: 'message-form', dataset, novalidate: true, 'aria-label': str(a.label) },
      ...fields.map((f) => this.field(f)),
      el('div', { className: 'message-form-buttons' },
        el('button', { type: 'submit', className: 'message-form-submit' + (a.style ? style : ' style-primary'), text: str(a.label) })));
  }

  field(f) {
    const id = `message-field-${++this.fieldSeq}`;
    const type = str(f.type) || 'text';
    const common = { id, name: f.key, required: f.required === true, 'aria-required': f.required === true ? 'true' : null, dataset: { fieldKey: f.key, fieldType: type } };
    const placeholder = str(f.placeholder) || null;
    const label = el('label', { for: id }, f.label || f.key, f.required === true ? el('span', { className: 'hint', text: ' (required)' }) : null);
    switch (type) {
      case 'checkbox':
        return el('div', { className: 'field field-checkbox' }, el('input', { ...common, type: 'checkbox' }), label);
      case 'textarea':
        return el('div', { className: 'field' }, label, el('textarea', { ...common, rows: 3, placeholder }));
      case 'number':
        return el('div', { className: 'field' }, label, el('input', { ...common, type: 'number', step: 'any', inputmode: 'decimal', placeholder }));
      case 'select':
        return el('div', { className: 'field' }, label, el('select', common, el('option', { value: '', text: 'Choose…' }),
          ...(Array.isArray(f.options) ? f.options : []).map((o) => el('option', { value: String(o), text: String(o) }))));
      default:
        return el('div', { className: 'field' }, label, el('input', { ...common, type: 'text', autocomplete: 'off', placeholder }));
    }
  }

  delivery(m, log) {
    const d = m.delivery;
    if (!d || typeof d !== 'object' || !this.isOwner(m)) return null;
    const parts = [DELIVERY_WORDS[d.state] || d.state, `${d.attempts || 0} attempt${d.attempts === 1 ? '' : 's'}`];
    if (d.last_status_code) parts.push(`last answer ${d.last_status_code}`);
    return el('div', { className: 'message-delivery', dataset: { deliveryState: str(d.state) } },
      el('p', {}, el('span', { className: 'delivery-summary', text: parts.join(' · ') }),
        d.state === 'pending' && d.next_attempt_at ? el('span', {}, ' · next try ', timeEl(d.next_attempt_at)) : null),
      el('div', { className: 'button-row' },
        button('delivery-log-toggle secondary small', log ? 'Hide delivery log' : 'Delivery log', null, { open: log ? 'true' : 'false' }),
        d.state === 'failed' || d.state === 'delivered' ? button('message-redeliver secondary small', 'Redeliver', `Send the callback of ${str(m.title)} again`) : null),
      log ? this.logTable(log) : null);
  }

  logTable(log) {
    const rows = Array.isArray(log.deliveries) ? log.deliveries : [];
    if (!rows.length) return el('p', { className: 'note delivery-log', text: 'No attempt yet.' });
    return el('div', { className: 'table-wrap delivery-log' }, el('table', {},
      el('thead', {}, el('tr', {}, ...['Attempt', 'When', 'Status', 'Error', 'Took'].map((h) => el('th', { scope: 'col', text: h })))),
      el('tbody', {}, ...rows.map((r) => el('tr', { className: 'attempt' },
        el('td', { text: String(r.attempt) }),
        el('td', {}, timeEl(r.at)),
        el('td', { className: 'attempt-code', text: r.status_code ? String(r.status_code) : '—' }),
        el('td', { className: 'attempt-error', text: str(r.error) || 'ok' }),
        el('td', { text: `${r.duration_ms || 0} ms` }))))));
  }

  // ---- events ----
  formResponses(form) {
    const responses = {};
    for (const input of form.querySelectorAll('[data-field-key]')) {
      const key = input.dataset.fieldKey;
      const type = input.dataset.fieldType;
      if (type === 'checkbox') responses[key] = input.checked;
      else if (type === 'number') {
        if (input.value.trim() !== '') responses[key] = Number(input.value);
      } else if (input.value !== '') responses[key] = input.value;
    }
    return responses;
  }

  // respond answers once, then re-reads the list (the answer carries only
  // the new status; the list shows the outcome).
  respond(article, body) {
    if (article.dataset.responding === 'true') return;
    article.dataset.responding = 'true';
    const id = article.dataset.messageId;
    const { api, router } = this.ctx;
    const seq = router.seq;
    router.change(async () => {
      try {
        await api('POST', `/v1/messages/${enc(id)}/respond`, body);
      } finally {
        delete article.dataset.responding;
      }
      await this.load(seq, { background: true });
    });
  }

  click(ev) {
    const btn = ev.target.closest('button');
    if (!btn || btn.type === 'submit') return;
    const article = btn.closest('article[data-message-id]');
    if (!article) return;
    const id = article.dataset.messageId;
    const { api, router } = this.ctx;
    if (btn.classList.contains('message-action') && btn.dataset.key !== undefined) {
      this.respond(article, { action: btn.dataset.key });
    } else if (btn.classList.contains('message-delete')) {
      const title = article.querySelector('.message-title').textContent;
      if (!confirmed(`Delete the message "${title}"?`)) return;
      const following = article.nextElementSibling || article.previousElementSibling;
      const followingId = following ? following.dataset.messageId : '';
      router.change(async () => {
        await api('DELETE', `/v1/messages/${enc(id)}`);
        article.remove();
        this.nodes.delete(id);
        $('messages-empty').hidden = $('messages').children.length > 0;
      }).then(() => {
        if (article.isConnected) return;
        const next = followingId ? $('messages').querySelector(`article[data-message-id="${CSS.escape(followingId)}"]`) : null;
        (next || $('content')).focus();
      });
    } else if (btn.classList.contains('delivery-log-toggle')) {
      if (btn.dataset.open === 'true') {
        this.logs.delete(id);
        this.live(0);
        return;
      }
      router.run(async () => {
        this.logs.set(id, await api('GET', `/v1/messages/${enc(id)}/deliveries`));
        await this.load(router.seq, { background: true });
        const again = $('messages').querySelector(`article[data-message-id="${CSS.escape(id)}"] .delivery-log-toggle`);
        if (again) again.focus();
      });
    } else if (btn.classList.contains('message-redeliver')) {
      if (!confirmed('Send this callback again, with a fresh set of attempts?')) return;
      router.change(async () => {
        const res = await api('POST', `/v1/messages/${enc(id)}/redeliver`);
        if (this.logs.has(id)) this.logs.set(id, { delivery: res.delivery, deliveries: [] });
        await this.load(router.seq, { background: true });
      });
    }
  }

  submit(ev) {
    const form = ev.target.closest('form.message-form');
    if (!form) return;
    ev.preventDefault();
    const article = form.closest('article[data-message-id]');
    if (!article || form.dataset.key === undefined) return;
    this.respond(article, { action: form.dataset.key, responses: this.formResponses(form) });
  }
}
