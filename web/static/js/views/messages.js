// Messages: the list (newest first, live over the stream), filters by
// channel, state and words, answering buttons and forms, what answered a
// message and the votes of an approval, the callback's delivery log with
// Redeliver, and deletion.
import { $, el, confirmed, syncChildren } from '../dom.js';
import { enc, transient } from '../api.js';
import { MessageCard } from './message.js';

const PAGE_SIZE = 50; // shown at first and added by "More"
const MAX_LIMIT = 200; // the largest page GET /v1/messages gives
const REFRESH_DELAY_MS = 200; // live updates are gathered this long
const RETRY_DELAY_MS = 5000;

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
    this.card = new MessageCard(this);
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
      before = typeof data.next_before === 'string' ? data.next_before : '';
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
      case 'open': return this.card.canAnswer(m) || (m.approval && m.approval.status === 'pending');
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
      const node = old && old.sig === sig ? old.node : this.card.article(m, channel, log);
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
