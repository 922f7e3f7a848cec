// One message as an article: the status in words, the Markdown body, the
// approval's votes, what answered it, its actions (answerable only while
// there is something to answer), and its callback's delivery. The list
// (messages.js) decides which messages to show; this module, how.
import { el, button, timeEl, swatch } from '../dom.js';
import { renderMarkdown } from '../markdown.js';
import { alertSection, isActive, ACK_KEY } from '../alert.js';
import { attachmentOf } from '../attachment.js';

const HTTP_URL = /^https?:\/\//i;
const CLICK_URL = /^(?:https?:\/\/|mailto:)/i;

// Polling states and approval states in words.
const STATUS_WORDS = {
  pending: 'Waiting for an answer',
  submitted: 'Answered',
  already_read: 'Answered · the sender has the answer',
  expired: 'Answered · the sender did not fetch it in time',
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

export class MessageCard {
  // view gives the session (who is looking) and the channels' names (the
  // channels this user owns).
  constructor(view) {
    this.view = view;
    this.fieldSeq = 0;
  }

  // isApprover: the message's rule names this user, by id or by email.
  isApprover(m) {
    const me = this.view.ctx.session.user;
    if (!me || !m.approval || !Array.isArray(m.approval.approvers)) return false;
    const email = String(me.email || '').trim().toLowerCase();
    return m.approval.approvers.includes(me.id) || (email !== '' && m.approval.approvers.includes(email));
  }

  hasVoted(m) {
    const me = this.view.ctx.session.user;
    return !!(me && m.approval && Array.isArray(m.approval.votes) && m.approval.votes.some((v) => v.user_id === me.id));
  }

  // canAnswer: there is something this user can still answer.
  canAnswer(m) {
    if (m.status !== 'pending' || (m.response !== null && m.response !== undefined)) return false;
    const actions = Array.isArray(m.actions) ? m.actions : [];
    // An urgent message's Acknowledge button counts only while it alerts.
    if (!actions.some((a) => a && (a.type === 'button' || a.type === 'form' || a.type === 'http') && (a.key !== ACK_KEY || !m.alert || isActive(m)))) return false;
    if (m.approval) return m.approval.status === 'pending' && this.isApprover(m) && !this.hasVoted(m);
    return true;
  }

  statusWords(m) {
    if (m.deliver_at) return 'Scheduled';
    if (m.approval) return APPROVAL_WORDS[m.approval.status] || m.approval.status;
    if (m.status === 'pending') return this.canAnswer(m) ? STATUS_WORDS.pending : '';
    // With a callback the sender was sent the answer: not fetching it by
    // polling is no news (the callback's own state is shown below).
    if (m.status === 'expired' && m.callback_url) return STATUS_WORDS.submitted;
    return STATUS_WORDS[m.status] || m.status;
  }

  // article draws m, sent to the channel named channel (its colour color,
  // if any), with its delivery log if open.
  article(m, channel, log, color) {
    const title = str(m.title);
    const words = this.statusWords(m);
    const status = m.deliver_at ? 'scheduled' : m.approval ? `approval-${m.approval.status}` : str(m.status);
    const click = str(m.click_url);
    const icon = str(m.icon_url);
    return el('article', { className: `message priority-${m.priority || 'normal'}`, dataset: { messageId: m.id, status: str(m.status) }, tabindex: '-1', 'aria-label': title },
      el('header', { className: 'message-head' },
        HTTP_URL.test(icon) ? el('img', { className: 'message-icon', src: icon, alt: '', width: 32, height: 32, loading: 'lazy', referrerpolicy: 'no-referrer' }) : null,
        // A message with a click URL opens it when its title is tapped.
        el('h3', { className: 'message-title' }, CLICK_URL.test(click)
          ? el('a', { className: 'message-click', href: click, target: '_blank', rel: 'noopener noreferrer nofollow', title: click, text: title })
          : title),
        words ? el('span', { className: 'message-status', dataset: { status }, text: words }) : null),
      el('div', { className: 'message-meta' },
        el('span', { className: 'message-channel' }, swatch(color), channel),
        m.priority && m.priority !== 'normal' ? el('span', { className: 'message-priority', dataset: { priority: m.priority }, text: `${m.priority} priority` }) : null,
        m.created_at ? timeEl(m.created_at, 'message-time') : null,
        m.muted ? el('span', { className: 'message-muted', title: 'The channel was muted: stored without a push', text: 'muted' }) : null,
        m.deliver_at ? el('span', { className: 'message-scheduled', dataset: { deliverAt: str(m.deliver_at) } }, 'delivered ', timeEl(m.deliver_at)) : null),
      this.tags(m),
      el('div', { className: 'message-body' }, renderMarkdown(str(m.body))),
      this.attachment(m),
      this.approval(m),
      alertSection(m, this.isOwner(m)),
      this.outcome(m),
      this.actions(m),
      this.delivery(m, log),
      m.approval && !this.isOwner(m) ? null : el('div', { className: 'message-footer' }, button('message-delete danger small', 'Delete', `Delete message ${title}`)));
  }

  tags(m) {
    const tags = (Array.isArray(m.tags) ? m.tags : []).filter((t) => typeof t === 'string' && t !== '');
    if (!tags.length) return null;
    return el('ul', { className: 'message-tags', 'aria-label': 'Tags' }, ...tags.map((t) => el('li', { className: 'tag-chip', text: t })));
  }

  // attachment: a stored picture or file, or the sender's link
  // (attachment.js).
  attachment(m) {
    return attachmentOf(m);
  }

  isOwner(m) {
    // The owner sees callback_url (even null) and the outcome; an approver
    // of someone else's channel never has the channel in its list.
    return this.view.channelNames.has(m.channel_id);
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
    const fields = new Map((Array.isArray(act.fields) ? act.fields : []).filter((f) => f && typeof f === 'object')
      .map((f) => [f.key, str(f.label) || str(f.key)]));
    // The values in the form's order (the answer's keys come sorted), then
    // any the form does not name.
    const given = o.responses && typeof o.responses === 'object' ? o.responses : {};
    const order = [...fields.keys()].filter((k) => Object.hasOwn(given, k));
    const responses = [...order, ...Object.keys(given).filter((k) => !fields.has(k))].map((k) => [k, given[k]]);
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
      } else if (a.key === ACK_KEY && m.alert && !isActive(m)) {
        // the alert is over: nothing left to acknowledge
      } else if (a.type === 'button' || a.type === 'http') {
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
    const common = { id, name: f.key, required: f.required === true, 'aria-required': f.required === true ? 'true' : null, dataset: { fieldKey: f.key, fieldType: type, fieldLabel: str(f.label) || str(f.key) } };
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
}
