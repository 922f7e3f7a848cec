// Messages: the list (newest first, live over the stream), filters by
// channel, state and words (all applied by the server), answering buttons
// and forms, what answered a message and the votes of an approval, the
// callback's delivery log with Redeliver, and deletion. The same view, on
// its own page, is an approver's list: the approvals asked of them in
// every channel (GET /v1/messages?approver=me), with the vote buttons,
// below the invitations to approve (invitations.js).
import { $, el, confirmed, syncChildren, paintSwatches } from '../dom.js';
import { enc, listAll, transient } from '../api.js';
import { MessageCard } from './message.js';
import { InvitationsCard } from './invitations.js';
import { fieldErrorHandler } from '../fielderrors.js';
import { ACK_KEY, acknowledgement, resolve } from '../alert.js';

const PAGE_SIZE = 50; // shown at first and added by "More"
const MAX_LIMIT = 200; // the largest page GET /v1/messages gives
const REFRESH_DELAY_MS = 200; // live updates are gathered this long
const RETRY_DELAY_MS = 5000;

export class MessagesView {
  // opts.name is the view's route and the prefix of its elements' ids;
  // opts.approver lists the approvals asked of the user instead.
  constructor(ctx, { name = 'messages', title = 'Messages', approver = false } = {}) {
    this.ctx = ctx;
    this.name = name;
    this.title = title;
    this.approver = approver;
    this.section = $(`view-${name}`);
    this.channel = ''; // channel filter ('' = all)
    this.state = ''; // state filter (GET /v1/messages?state=)
    this.q = ''; // search words
    this.wanted = PAGE_SIZE;
    this.loadSeq = 0; // only the newest load renders
    this.channelNames = new Map();
    this.channelColors = new Map();
    this.nodes = new Map(); // message id → {sig, node}
    this.logs = new Map(); // message id → delivery log shown, while open
    this.card = new MessageCard(this);
    this.invitations = approver ? new InvitationsCard(ctx, () => this.live(0)) : null;
    this.refreshTimer = null;
    if (this.part('-channel')) this.part('-channel').addEventListener('change', () => this.refilter());
    this.part('-state').addEventListener('change', () => this.refilter());
    this.part('-search').addEventListener('submit', (ev) => {
      ev.preventDefault();
      this.refilter();
    });
    this.part('-q').addEventListener('search', () => this.refilter());
    this.part('').addEventListener('click', (ev) => this.click(ev));
    this.part('').addEventListener('submit', (ev) => this.submit(ev));
    this.part('-more').addEventListener('click', () => this.more());
  }

  // part is one of the view's elements: id prefix + suffix.
  part(suffix) {
    return $(this.name + suffix);
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
      if (router.current !== this.name) return;
      const seq = router.seq;
      router.begin();
      this.load(seq, { background: true }).catch((err) => {
        if (transient(err)) setTimeout(() => this.live(0), RETRY_DELAY_MS);
        else router.fail(err);
      }).finally(() => router.end());
    }, delay);
  }

  refilter() {
    this.channel = this.part('-channel') ? this.part('-channel').value : '';
    this.state = this.part('-state').value;
    this.q = this.part('-q').value.trim();
    this.wanted = PAGE_SIZE;
    const seq = this.ctx.router.seq;
    this.ctx.router.run(() => this.load(seq));
  }

  more() {
    const shown = this.part('').children.length;
    this.wanted = Math.max(this.wanted, this.loaded || 0) + PAGE_SIZE;
    const seq = this.ctx.router.seq;
    this.ctx.router.run(async () => {
      await this.load(seq);
      const first = this.part('').children[shown];
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
      if (this.approver) params.set('approver', 'me');
      if (this.state) params.set('state', this.state);
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
      before = typeof data.next_before === 'string' ? data.next_before : '';
      if (!before) break;
    }
    return { list, total: Math.max(total, list.length), exact };
  }

  async channels() {
    const data = await listAll(this.ctx.api, '/v1/channels', 'channels');
    return Array.isArray(data.channels) ? data.channels : [];
  }

  // load renders the view. A background load (a live update) reads the
  // channels only when it meets one it cannot name. The first load reads
  // channels and messages at once.
  async load(seq, opts = {}) {
    const { router } = this.ctx;
    const mine = ++this.loadSeq;
    const invited = this.invitations ? this.invitations.load() : null;
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
    await invited;
    if (router.stale(seq) || mine !== this.loadSeq) return;
    if (channels) this.renderChannels(channels);
    this.render(page);
  }

  renderChannels(channels) {
    this.channelNames = new Map(channels.map((c) => [c.id, c.name]));
    this.channelColors = new Map(channels.map((c) => [c.id, c.color || '']));
    if (!this.part('-channel')) return;
    const sorted = [...channels].sort((a, b) => a.name.localeCompare(b.name) || a.id.localeCompare(b.id));
    this.part('-channel').replaceChildren(el('option', { value: '', text: 'All channels' }),
      ...sorted.map((c) => el('option', { value: c.id, text: c.name })));
    this.part('-channel').value = this.channel;
  }

  render({ list, total, exact }) {
    this.loaded = list.length;
    // A sequence's messages replace one another: only its newest (the
    // list is newest first) is shown.
    const sequences = new Set();
    list = list.filter((m) => {
      if (!m.sequence_id) return true;
      const k = `${m.channel_id}\u0000${m.sequence_id}`;
      if (sequences.has(k)) return false;
      sequences.add(k);
      return true;
    });
    const me = this.ctx.session.user ? this.ctx.session.user.id : '';
    const next = new Map();
    const nodes = list.map((m) => {
      // An approver is not shown the names of others' channels.
      const channel = this.channelNames.get(m.channel_id) || (this.approver ? "Someone else's channel" : m.channel_id);
      const color = this.channelColors.get(m.channel_id) || '';
      const log = this.logs.get(m.id);
      const sig = JSON.stringify(m) + '\u0000' + channel + '\u0000' + color + '\u0000' + JSON.stringify(log || null) + me;
      const old = this.nodes.get(m.id);
      const node = old && old.sig === sig ? old.node : this.card.article(m, channel, log, color);
      next.set(m.id, { sig, node });
      return node;
    });
    this.nodes = next;
    syncChildren(this.part(''), nodes);
    paintSwatches(this.part(''));
    this.part('-empty').hidden = nodes.length > 0;
    const unfiltered = !this.q && !this.channel && !this.state;
    if (this.approver) {
      this.part('-empty-text').textContent = unfiltered
        ? 'No approval has been asked of you. When a channel names you as an approver, its messages appear here for your vote.'
        : 'No approval matches. Change the filters or the search words.';
    } else {
      this.part('-empty-text').textContent = unfiltered
        ? "No messages yet. Send one with curl to a channel's webhook URL: the Channels page has a ready example."
        : 'No message matches. Change the filters or the search words.';
    }
    this.part('-more').hidden = total <= list.length;
    const noun = this.approver ? 'approval' : 'message';
    this.part('-count').textContent = list.length > 0
      ? `Showing ${list.length} of ${total}${exact ? '' : '+'} ${noun}${total === 1 ? '' : 's'}`
      : '';
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
  // the new status; the list shows the outcome). handle is the router's.
  respond(article, body, handle) {
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
    }, handle);
  }

  click(ev) {
    const btn = ev.target.closest('button');
    if (!btn || btn.type === 'submit') return;
    const article = btn.closest('article[data-message-id]');
    if (!article) return;
    const id = article.dataset.messageId;
    const { api, router } = this.ctx;
    if (btn.classList.contains('message-action') && btn.dataset.key === ACK_KEY) {
      acknowledgement().then((body) => this.respond(article, body));
    } else if (btn.classList.contains('message-action') && btn.dataset.key !== undefined) {
      this.respond(article, { action: btn.dataset.key });
    } else if (btn.classList.contains('message-alert-cancel')) {
      resolve(this.ctx, id, article.querySelector('.message-title').textContent, () => this.load(router.seq, { background: true }));
    } else if (btn.classList.contains('message-delete')) {
      const title = article.querySelector('.message-title').textContent;
      if (!confirmed(`Delete the message "${title}"?`)) return;
      const following = article.nextElementSibling || article.previousElementSibling;
      const followingId = following ? following.dataset.messageId : '';
      router.change(async () => {
        await api('DELETE', `/v1/messages/${enc(id)}`);
        article.remove();
        this.nodes.delete(id);
        this.part('-empty').hidden = this.part('').children.length > 0;
      }).then(() => {
        if (article.isConnected) return;
        const next = followingId ? this.part('').querySelector(`article[data-message-id="${CSS.escape(followingId)}"]`) : null;
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
        const again = this.part('').querySelector(`article[data-message-id="${CSS.escape(id)}"] .delivery-log-toggle`);
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
    // A value the server refuses is shown at its field ("responses.<key>").
    const fields = [...form.querySelectorAll('[data-field-key]')].map((input) => ({
      key: `responses.${input.dataset.fieldKey}`, input, name: input.dataset.fieldLabel || input.dataset.fieldKey }));
    this.respond(article, { action: form.dataset.key, responses: this.formResponses(form) }, fieldErrorHandler(form, fields));
  }
}
