// Herald admin UI: vanilla JS, hash routing, cookie session with CSRF header.
// Every piece of user-provided text is rendered with textContent.
'use strict';

(() => {
  const VIEWS = ['signin', 'channels', 'messages', 'keys', 'devices', 'folders'];
  const DEFAULT_VIEW = 'channels';
  const COLOR_RE = /^#[0-9A-Fa-f]{6}$/;
  const HOUR_MS = 60 * 60 * 1000;
  const PAGE_SIZE = 50;          // messages shown at first and added by "More"
  const MAX_LIMIT = 200;         // the largest page GET /v1/messages gives
  const HTTP_URL_RE = /^https?:\/\//i;
  const STREAM_EVENTS = ['message.created', 'message.updated', 'message.deleted'];
  const REFRESH_DELAY_MS = 200;  // live updates are gathered this long before a re-fetch
  const RETRY_DELAY_MS = 5000;   // a failed background refresh or a closed stream waits this long
  const STREAM_RETRY_MAX_MS = 60 * 1000;

  const $ = (id) => document.getElementById(id);

  // ---- state ----
  let user = null;           // the signed-in user, or null
  let providers = null;      // cached GET /v1/auth/providers answer
  let currentView = null;    // the view whose section is shown
  let routedHash = null;     // the hash the current view was routed for
  let navSeq = 0;            // bumped on every navigation; stale loads are dropped
  let busy = 0;              // requests/operations in flight
  let channelNames = new Map(); // id → name of the channels last rendered
  let folderNames = new Map();  // id → name of the folders last rendered
  let messagesChannel = '';     // the channel filter of the messages view ('' = all)
  let messagesWanted = PAGE_SIZE; // how many messages the view shows at most
  let messagesLoadSeq = 0;      // bumped on every messages load; only the newest renders
  let messageChannels = new Map(); // channel id → name, for the messages view
  let messageNodes = new Map(); // message id → {sig, node} of the articles on the page
  let fieldSeq = 0;             // for unique ids of form fields
  let stream = null;            // the EventSource of GET /v1/stream while signed in
  let streamRetry = null;       // timer that reopens a stream the server ended
  let streamRetryMs = RETRY_DELAY_MS;
  let refreshTimer = null;      // pending live refresh of the messages view

  // ---- busy / ready markers for tests ----
  function begin() {
    busy++;
    document.body.dataset.loading = 'true';
  }

  function end() {
    busy = Math.max(0, busy - 1);
    if (busy === 0) {
      if (currentView) document.body.dataset.view = currentView;
      document.body.dataset.loading = 'false';
    }
  }

  // run marks the page busy while fn runs and reports its failure in #error.
  async function run(fn) {
    begin();
    try {
      await fn();
    } catch (err) {
      handleError(err);
    } finally {
      end();
    }
  }

  // ---- errors ----
  class ApiError extends Error {
    constructor(status, code, message) {
      super(message);
      this.status = status;
      this.code = code;
    }
  }

  function showError(message) {
    $('error').textContent = message || 'Something went wrong.';
  }

  function clearError() {
    $('error').textContent = '';
  }

  function handleError(err) {
    if (err instanceof ApiError && err.status === 401 && err.sessionLost) {
      // The session expired or was ended elsewhere: back to sign-in.
      setUser(null);
      go('#/signin');
      showError(err.message);
      return;
    }
    showError(err && err.message ? err.message : String(err));
  }

  // ---- API ----
  function cookie(name) {
    for (const part of document.cookie.split(';')) {
      const eq = part.indexOf('=');
      if (eq < 0) continue;
      if (part.slice(0, eq).trim() === name) {
        const raw = part.slice(eq + 1).trim();
        try {
          return decodeURIComponent(raw);
        } catch (_) {
          return raw;
        }
      }
    }
    return '';
  }

  // api sends one request. opts.public marks calls where a 401 is not a
  // lost session (sign-in, the first /v1/auth/me).
  async function api(method, path, body, opts = {}) {
    const init = { method, credentials: 'same-origin', headers: { Accept: 'application/json' } };
    if (method !== 'GET' && method !== 'HEAD') {
      init.headers['X-CSRF-Token'] = cookie('herald_csrf');
    }
    if (body !== undefined) {
      init.headers['Content-Type'] = 'application/json';
      init.body = JSON.stringify(body);
    }
    let res;
    try {
      res = await fetch(path, init);
    } catch (err) {
      throw new ApiError(0, 'network_error', 'Could not reach the server. Check your connection and try again.');
    }
    const text = await res.text();
    let data = null;
    if (text) {
      try {
        data = JSON.parse(text);
      } catch (_) {
        data = null;
      }
    }
    if (!res.ok) {
      const message = data && typeof data.message === 'string' && data.message
        ? data.message
        : `Request failed (HTTP ${res.status}).`;
      const err = new ApiError(res.status, data && data.error ? data.error : `http_${res.status}`, message);
      err.sessionLost = res.status === 401 && !opts.public;
      throw err;
    }
    return data || {};
  }

  const enc = encodeURIComponent;

  // ---- small DOM helpers ----
  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    if (attrs) {
      for (const [k, v] of Object.entries(attrs)) {
        if (v === undefined || v === null || v === false) continue;
        if (k === 'className') node.className = v;
        else if (k === 'text') node.textContent = v;
        else if (k === 'dataset') Object.assign(node.dataset, v);
        else node.setAttribute(k, v === true ? '' : String(v));
      }
    }
    for (const child of children) {
      if (child === null || child === undefined || child === false) continue;
      node.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
    return node;
  }

  function button(className, text, label) {
    return el('button', { type: 'button', className, text, 'aria-label': label });
  }

  function formatTime(iso) {
    if (!iso) return '';
    const d = new Date(iso);
    if (Number.isNaN(d.getTime())) return iso;
    return d.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });
  }

  function timeEl(iso) {
    return el('time', { datetime: iso, title: iso, text: formatTime(iso) });
  }

  function swatch(color) {
    if (!color || !COLOR_RE.test(color)) return null;
    const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="12" height="12"><rect width="12" height="12" rx="3" fill="${color}"/></svg>`;
    return el('img', {
      className: 'swatch',
      src: 'data:image/svg+xml,' + enc(svg),
      alt: '',
      width: 12,
      height: 12,
      'aria-hidden': 'true',
    });
  }

  function fillBody(tbody, rows) {
    tbody.replaceChildren(...rows);
  }

  // ---- session / nav ----
  function setUser(u) {
    user = u;
    $('nav').hidden = !u;
    $('whoami').textContent = u ? u.email : '';
    $('whoami').title = u && u.name ? u.name : '';
    if (u) openStream();
    else closeStream();
  }

  // ---- live updates ----
  // One EventSource while signed in (same origin: the session cookie goes
  // with it, and a GET needs no CSRF header). Any message event re-fetches
  // the messages view when it is showing. Stream errors are never shown:
  // EventSource reconnects by itself after a network error, and a stream the
  // server refused (an HTTP error ends an EventSource for good) is reopened
  // here after a pause. body.dataset.stream is "open" while connected.
  function openStream() {
    if (stream || streamRetry || !user || typeof EventSource !== 'function') return;
    const es = new EventSource('/v1/stream');
    stream = es;
    document.body.dataset.stream = 'connecting';
    es.addEventListener('open', () => {
      if (stream !== es) return;
      streamRetryMs = RETRY_DELAY_MS;
      document.body.dataset.stream = 'open';
      // Whatever was sent while (re)connecting came before the stream's
      // start: fetch it.
      scheduleRefresh();
    });
    for (const type of STREAM_EVENTS) {
      es.addEventListener(type, () => {
        if (stream === es) scheduleRefresh();
      });
    }
    es.addEventListener('error', () => {
      if (stream !== es) return;
      if (es.readyState !== EventSource.CLOSED) {
        document.body.dataset.stream = 'connecting';
        return;
      }
      es.close();
      stream = null;
      document.body.dataset.stream = 'closed';
      const wait = streamRetryMs;
      streamRetryMs = Math.min(streamRetryMs * 2, STREAM_RETRY_MAX_MS);
      streamRetry = setTimeout(() => {
        streamRetry = null;
        openStream();
      }, wait);
    });
  }

  function closeStream() {
    clearTimeout(streamRetry);
    streamRetry = null;
    clearTimeout(refreshTimer);
    refreshTimer = null;
    streamRetryMs = RETRY_DELAY_MS;
    if (stream) {
      stream.close();
      stream = null;
    }
    document.body.dataset.stream = 'closed';
  }

  // scheduleRefresh re-fetches the messages view after delay, once for all
  // the events that arrive meanwhile (a burst makes one request, and a
  // steady flow at most one per delay).
  function scheduleRefresh(delay = REFRESH_DELAY_MS) {
    if (!user || currentView !== 'messages' || refreshTimer) return;
    refreshTimer = setTimeout(() => {
      refreshTimer = null;
      if (!user || currentView !== 'messages') return;
      const seq = navSeq;
      begin();
      loadMessages(seq, { background: true })
        .catch((err) => {
          // Busy or unreachable server: try again later, quietly (the stream
          // also refreshes when it reconnects). Anything else is real.
          if (err instanceof ApiError && (err.status === 0 || err.status === 429 || err.status >= 500)) {
            setTimeout(() => scheduleRefresh(0), RETRY_DELAY_MS);
            return;
          }
          handleError(err);
        })
        .finally(end);
    }, delay);
  }

  function showView(name) {
    currentView = name;
    for (const v of VIEWS) {
      $('view-' + v).hidden = v !== name;
    }
    for (const v of VIEWS) {
      const link = $('nav-' + v);
      if (!link) continue;
      if (v === name) link.setAttribute('aria-current', 'page');
      else link.removeAttribute('aria-current');
    }
    document.title = name === 'signin' ? 'Sign in · Herald' : `${$(name + '-title').textContent} · Herald`;
  }

  function hashView() {
    const m = /^#\/([a-z]+)/.exec(location.hash);
    return m ? m[1] : '';
  }

  // go navigates to hash and routes at once (the hashchange that follows is
  // then ignored, since routedHash already matches).
  function go(hash) {
    if (location.hash !== hash) location.hash = hash;
    route();
  }

  function route() {
    const seq = ++navSeq;
    clearError();
    hideKeyCreated();
    let name = hashView();
    if (!user) {
      if (name !== 'signin') history.replaceState(null, '', '#/signin');
      name = 'signin';
    } else if (name === 'signin' || !VIEWS.includes(name)) {
      history.replaceState(null, '', '#/' + DEFAULT_VIEW);
      name = DEFAULT_VIEW;
    }
    routedHash = location.hash;
    showView(name);
    run(() => loaders[name](seq));
  }

  // reload re-fetches the current view after a change, unless the user has
  // navigated away meanwhile.
  function reload(view, seq) {
    if (seq !== navSeq || view !== currentView) return Promise.resolve();
    return loaders[view](seq);
  }

  // action runs a change and re-renders the current view's list afterwards.
  function action(fn) {
    const view = currentView;
    const seq = navSeq;
    return run(async () => {
      await fn();
      clearError();
      await reload(view, seq);
    });
  }

  // ---- inline rename ----
  // startRename swaps a name cell's content for a small form that renames one
  // item. kind ("channel" or "folder") prefixes the classes, and save(name)
  // sends the trimmed name. A save re-renders the list like the other
  // actions; an error leaves the form open with what was typed; Escape or
  // Cancel puts the cell back as it was, without a request. Focus returns to
  // the row's Rename button (in the re-rendered row after a save).
  function startRename(cell, kind, current, save) {
    const open = cell.querySelector(`input.${kind}-rename-input`);
    if (open) {
      open.focus();
      return;
    }
    const tbody = cell.closest('tbody');
    const row = cell.closest('tr');
    const rowSel = row ? `tr[data-${kind}-id="${CSS.escape(row.getAttribute(`data-${kind}-id`) || '')}"]` : '';
    const focusRenameButton = () => {
      const again = tbody && rowSel ? tbody.querySelector(`${rowSel} button.${kind}-rename`) : null;
      if (again) again.focus();
    };
    const saved = [...cell.childNodes];
    const input = el('input', {
      type: 'text',
      className: `${kind}-rename-input`,
      autocomplete: 'off',
      'aria-label': `New name for ${kind} ${current}`,
    });
    input.value = current;
    const cancel = button(`${kind}-rename-cancel secondary`, 'Cancel');
    const form = el('form', { className: 'rename-form', novalidate: true },
      input,
      el('button', { type: 'submit', className: `${kind}-rename-save`, text: 'Save' }),
      cancel);
    let pending = false;

    function restore() {
      if (!cell.contains(form)) return;
      cell.replaceChildren(...saved);
      cell.classList.remove('is-editing');
      clearError();
      focusRenameButton();
    }

    form.addEventListener('submit', (ev) => {
      ev.preventDefault();
      if (pending) return;
      pending = true;
      const name = input.value.trim();
      action(async () => {
        try {
          await save(name);
        } catch (err) {
          if (input.isConnected) input.focus();
          throw err;
        }
      }).then(() => {
        pending = false;
        // The list was re-rendered: the focus fell to the page.
        if (!input.isConnected && (!document.activeElement || document.activeElement === document.body)) {
          focusRenameButton();
        }
      });
    });
    form.addEventListener('keydown', (ev) => {
      if (ev.key !== 'Escape' || ev.isComposing) return;
      ev.preventDefault();
      restore();
    });
    cancel.addEventListener('click', restore);

    cell.classList.add('is-editing');
    cell.replaceChildren(form);
    input.focus();
    input.select();
  }

  // ---- sign-in ----
  async function loadSignin(seq) {
    if (!providers) {
      try {
        providers = await api('GET', '/v1/auth/providers', undefined, { public: true });
      } catch (err) {
        // Without the list, offer the password form and say why.
        if (seq === navSeq) showError(err.message);
      }
    }
    if (seq !== navSeq) return;
    renderSignin();
  }

  function renderSignin() {
    const local = providers ? providers.local !== false : true;
    const list = providers && Array.isArray(providers.providers) ? providers.providers : [];
    $('signin-form').hidden = !local;
    const links = list.map((p) => el('a', {
      className: 'provider-login button-link',
      href: p.login_url,
      dataset: { provider: p.name },
      text: `Sign in with ${p.name}`,
    }));
    $('providers').replaceChildren(...links);
    $('providers').hidden = links.length === 0;
    $('signin-none').hidden = local || links.length > 0;
    $('signin-setup').hidden = !(providers && providers.setup_needed === true);
  }

  function onSignin(ev) {
    ev.preventDefault();
    const email = $('signin-email').value.trim();
    const password = $('signin-password').value;
    run(async () => {
      const data = await api('POST', '/auth/local', { email, password }, { public: true });
      $('signin-password').value = '';
      setUser(data.user || null);
      go('#/' + DEFAULT_VIEW);
    });
  }

  function onSignout() {
    run(async () => {
      await api('POST', '/auth/logout', undefined, { public: true });
      setUser(null);
      go('#/signin');
    });
  }

  // ---- channels ----
  async function loadChannels(seq) {
    const [c, p, f] = await Promise.all([
      api('GET', '/v1/channels'),
      api('GET', '/v1/pins'),
      api('GET', '/v1/folders'),
    ]);
    if (seq !== navSeq) return;
    renderChannels(c.channels || [], p.pins || [], f.folders || []);
  }

  function renderFolderOptions(folders) {
    const select = $('channel-folder');
    const keep = select.value;
    const options = [el('option', { value: '', text: 'No folder' })];
    for (const f of folders) options.push(el('option', { value: f.id, text: f.name }));
    select.replaceChildren(...options);
    select.value = folders.some((f) => f.id === keep) ? keep : '';
  }

  function isMuted(ch) {
    if (!ch.muted_until) return false;
    const t = Date.parse(ch.muted_until);
    return !Number.isNaN(t) && t > Date.now();
  }

  function renderChannels(channels, pins, folders) {
    renderFolderOptions(folders);
    channelNames = new Map(channels.map((c) => [c.id, c.name]));
    const folderName = new Map(folders.map((f) => [f.id, f.name]));
    const byId = new Map(channels.map((c) => [c.id, c]));
    const pinned = [...pins]
      .sort((a, b) => a.position - b.position)
      .map((p) => p.channel_id)
      .filter((id, i, all) => byId.has(id) && all.indexOf(id) === i);
    const pinnedSet = new Set(pinned);
    const ordered = [
      ...pinned.map((id) => byId.get(id)),
      ...channels.filter((c) => !pinnedSet.has(c.id)),
    ];

    const rows = ordered.map((ch) => {
      const isPinned = pinnedSet.has(ch.id);
      const muted = isMuted(ch);
      const nameCell = el('td', { className: 'channel-name' }, swatch(ch.color), ch.name);
      const urlCell = el('td', { className: 'channel-webhook' }, el('code', { text: ch.webhook_url }));
      const folderCell = el('td', { className: 'channel-folder', text: folderName.get(ch.folder_id) || '' });

      const rename = button('channel-rename', 'Rename', `Rename ${ch.name}`);
      const pin = button('channel-pin', isPinned ? 'Unpin' : 'Pin', `${isPinned ? 'Unpin' : 'Pin'} ${ch.name}`);
      const mute = button('channel-mute', muted ? 'Unmute' : 'Mute 1h', muted ? `Unmute ${ch.name}` : `Mute ${ch.name} for one hour`);
      if (muted) mute.title = `Muted until ${formatTime(ch.muted_until)}`;
      const regen = button('channel-regenerate secondary', 'New URL', `New webhook URL for ${ch.name}`);
      regen.title = 'Replace the webhook URL; the old one stops working at once';
      const del = button('channel-delete danger', 'Delete', `Delete ${ch.name}`);
      const actions = el('td', { className: 'actions' }, rename, pin, mute, regen, del);

      const classes = [];
      if (isPinned) classes.push('is-pinned');
      if (muted) classes.push('is-muted');
      return el('tr', { className: classes.join(' ') || null, dataset: { channelId: ch.id } },
        nameCell, urlCell, folderCell, actions);
    });
    fillBody($('channels').tBodies[0], rows);
    $('channels-empty').hidden = ordered.length > 0;
  }

  function onChannelCreate(ev) {
    ev.preventDefault();
    const name = $('channel-name').value;
    const color = $('channel-color').value.trim();
    const folderId = $('channel-folder').value;
    const view = currentView;
    const seq = navSeq;
    action(async () => {
      const body = { name };
      if (color) body.color = color;
      // POST /v1/channels takes no folder_id (unknown fields are refused):
      // the folder is set by a PATCH right after.
      const ch = await api('POST', '/v1/channels', body);
      $('channel-name').value = '';
      $('channel-color').value = '';
      if (folderId) {
        try {
          await api('PATCH', `/v1/channels/${enc(ch.id)}`, { folder_id: folderId });
        } catch (err) {
          // The channel exists even so: show it, then the error.
          try {
            await reload(view, seq);
          } catch (_) {
            // the original error is the one worth showing
          }
          throw err;
        }
      }
      $('channel-folder').value = '';
    });
  }

  function onChannelClick(ev) {
    const btn = ev.target.closest('button');
    if (!btn) return;
    const row = btn.closest('tr[data-channel-id]');
    if (!row) return;
    const id = row.dataset.channelId;
    const path = `/v1/channels/${enc(id)}`;
    if (btn.classList.contains('channel-rename')) {
      const cell = row.querySelector('td.channel-name');
      if (cell) startRename(cell, 'channel', channelNames.get(id) || '', (name) => api('PATCH', path, { name }));
    } else if (btn.classList.contains('channel-pin')) {
      if (btn.textContent === 'Unpin') action(() => api('DELETE', `/v1/pins?channel_id=${enc(id)}`));
      else action(() => api('POST', '/v1/pins', { channel_id: id }));
    } else if (btn.classList.contains('channel-mute')) {
      const until = btn.textContent === 'Unmute' ? null : new Date(Date.now() + HOUR_MS).toISOString();
      action(() => api('PATCH', path, { muted_until: until }));
    } else if (btn.classList.contains('channel-regenerate')) {
      action(() => api('POST', `${path}/regenerate`));
    } else if (btn.classList.contains('channel-delete')) {
      action(() => api('DELETE', path));
    }
  }

  // ---- messages ----
  async function listChannels() {
    const data = await api('GET', '/v1/channels');
    return Array.isArray(data.channels) ? data.channels : [];
  }

  // fetchMessages reads the newest wanted messages (of one channel, or of
  // all when channelId is ''), in pages of at most MAX_LIMIT, each page
  // after the cursor (next_before) of the one before. total may be capped
  // by the server (total_exact false).
  async function fetchMessages(channelId, wanted) {
    const seen = new Set();
    const list = [];
    let total = 0;
    let exact = true;
    let before = '';
    while (list.length < wanted) {
      const limit = Math.min(MAX_LIMIT, wanted - list.length);
      const params = new URLSearchParams({ limit: String(limit) });
      if (before) params.set('before', before);
      if (channelId) params.set('channel_id', channelId);
      const data = await api('GET', `/v1/messages?${params}`);
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

  // loadMessages renders the messages view. A background load (a live
  // update) reads the channels again only when it needs their names.
  async function loadMessages(seq, opts = {}) {
    const mine = ++messagesLoadSeq;
    let channels = opts.background ? null : await listChannels();
    if (channels && messagesChannel && !channels.some((c) => c.id === messagesChannel)) {
      messagesChannel = ''; // the chosen channel was deleted
    }
    let filter = messagesChannel;
    let page;
    try {
      page = await fetchMessages(filter, messagesWanted);
    } catch (err) {
      if (!(err instanceof ApiError && err.status === 404 && filter)) throw err;
      channels = await listChannels();
      if (channels.some((c) => c.id === filter)) throw err;
      filter = ''; // deleted meanwhile: show all
      page = await fetchMessages(filter, messagesWanted);
    }
    if (!channels && page.list.some((m) => !messageChannels.has(m.channel_id))) {
      channels = await listChannels();
    }
    if (seq !== navSeq || mine !== messagesLoadSeq) return;
    messagesChannel = filter;
    if (channels) renderMessageChannels(channels);
    renderMessages(page.list, page.total, page.exact);
  }

  function renderMessageChannels(channels) {
    messageChannels = new Map(channels.map((c) => [c.id, c.name]));
    const sorted = [...channels].sort((a, b) => a.name.localeCompare(b.name) || a.id.localeCompare(b.id));
    const select = $('messages-channel');
    select.replaceChildren(
      el('option', { value: '', text: 'All channels' }),
      ...sorted.map((c) => el('option', { value: c.id, text: c.name })));
    select.value = messagesChannel;
  }

  function renderMessages(list, total, exact = true) {
    const next = new Map();
    const nodes = list.map((m) => {
      const channel = messageChannels.get(m.channel_id) || m.channel_id;
      const sig = JSON.stringify(m) + '\u0000' + channel;
      const old = messageNodes.get(m.id);
      const node = old && old.sig === sig ? old.node : renderMessage(m, channel);
      next.set(m.id, { sig, node });
      return node;
    });
    messageNodes = next;
    syncChildren($('messages'), nodes);
    $('messages-empty').hidden = list.length > 0;
    $('messages-more').hidden = total <= list.length;
    $('messages-count').textContent = list.length > 0
      ? `Showing ${list.length} of ${total}${exact ? '' : '+'} message${total === 1 ? '' : 's'}`
      : '';
  }

  // syncChildren makes nodes the children of parent, in order, moving as
  // little as it can: an unchanged article keeps its place, its form's
  // contents and the focus while live updates arrive.
  function syncChildren(parent, nodes) {
    const keep = new Set(nodes);
    for (const child of [...parent.children]) {
      if (!keep.has(child)) child.remove();
    }
    let cursor = parent.firstElementChild;
    for (const node of nodes) {
      if (node === cursor) {
        cursor = cursor.nextElementSibling;
      } else {
        parent.insertBefore(node, cursor);
      }
    }
  }

  // A message can be answered while it is pending without a response.
  function canAnswer(m) {
    return m.status === 'pending' && (m.response === null || m.response === undefined);
  }

  function renderMessage(m, channel) {
    const title = typeof m.title === 'string' ? m.title : '';
    const status = typeof m.status === 'string' ? m.status : '';
    const meta = el('div', { className: 'message-meta' },
      el('span', { className: 'message-channel', text: channel }),
      el('span', { className: 'message-priority', dataset: { priority: m.priority || '' }, text: m.priority || '' }),
      m.created_at ? el('time', { className: 'message-time', datetime: m.created_at, title: m.created_at, text: formatTime(m.created_at) }) : null,
      m.muted ? el('span', { className: 'message-muted', title: 'The channel was muted: stored without a push', text: 'muted' }) : null);
    const article = el('article', {
      className: `message priority-${m.priority || 'normal'}`,
      dataset: { messageId: m.id, status },
      tabindex: '-1',
      'aria-label': title,
    },
    el('header', { className: 'message-head' },
      el('h3', { className: 'message-title', text: title }),
      el('span', { className: 'message-status', dataset: { status }, text: status })),
    meta,
    el('div', { className: 'message-body', text: typeof m.body === 'string' ? m.body : '' }),
    renderApproval(m.approval),
    canAnswer(m) ? renderActions(m) : null,
    el('div', { className: 'message-footer' },
      button('message-delete danger', 'Delete', `Delete message ${title}`)));
    return article;
  }

  function renderApproval(a) {
    if (!a || typeof a !== 'object') return null;
    const parts = [`Approval ${a.status || 'pending'}`,
      `${a.approvals_received || 0} of ${a.required_count || 0} approvals`];
    if (a.rejections_received) parts.push(`${a.rejections_received} rejected`);
    return el('p', { className: 'message-approval', text: parts.join(' · ') });
  }

  function styleClass(style) {
    return style === 'primary' || style === 'destructive' ? ` style-${style}` : ' style-default';
  }

  function renderActions(m) {
    const actions = Array.isArray(m.actions) ? m.actions : [];
    const row = [];
    const forms = [];
    actions.forEach((a, i) => {
      if (!a || typeof a !== 'object') return;
      const label = typeof a.label === 'string' ? a.label : '';
      const dataset = { index: String(i) };
      if (typeof a.key === 'string' && a.key !== '') dataset.key = a.key;
      if (a.type === 'button') {
        row.push(el('button', { type: 'button', className: 'message-action' + styleClass(a.style), dataset, text: label }));
      } else if (a.type === 'url') {
        const url = typeof a.value === 'string' ? a.value : '';
        if (HTTP_URL_RE.test(url)) {
          row.push(el('a', {
            className: 'message-link button-link' + styleClass(a.style),
            href: url,
            target: '_blank',
            rel: 'noopener noreferrer',
            title: url,
            dataset,
            text: label,
          }));
        } else {
          // Only http(s) addresses become links; anything else (javascript:,
          // data:) is shown as inert text.
          row.push(el('span', { className: 'message-link-blocked', title: 'Not an http or https address: not a link', dataset, text: label }));
        }
      } else if (a.type === 'form') {
        forms.push(renderForm(a, dataset));
      }
    });
    if (row.length === 0 && forms.length === 0) return null;
    return el('div', { className: 'message-actions' },
      row.length ? el('div', { className: 'message-buttons' }, ...row) : null,
      ...forms);
  }

  function renderForm(a, dataset) {
    const fields = Array.isArray(a.fields) ? a.fields : [];
    const label = typeof a.label === 'string' ? a.label : '';
    return el('form', { className: 'message-form', dataset, novalidate: true, 'aria-label': label },
      ...fields.filter((f) => f && typeof f === 'object').map(renderField),
      el('div', { className: 'message-form-buttons' },
        el('button', { type: 'submit', className: 'message-form-submit' + styleClass(a.style || 'primary'), text: label })));
  }

  // renderField is one labelled input, of the types a form field can have:
  // text, textarea, number, select, checkbox (others are shown as text).
  function renderField(f) {
    const id = `message-field-${++fieldSeq}`;
    const type = typeof f.type === 'string' ? f.type : 'text';
    const common = {
      id,
      name: f.key,
      required: f.required === true,
      'aria-required': f.required === true ? 'true' : null,
      dataset: { fieldKey: f.key, fieldType: type },
    };
    const placeholder = typeof f.placeholder === 'string' && f.placeholder ? f.placeholder : null;
    const label = el('label', { for: id }, f.label || f.key,
      f.required === true ? el('span', { className: 'hint', text: ' (required)' }) : null);
    switch (type) {
      case 'checkbox':
        return el('div', { className: 'field field-checkbox' }, el('input', { ...common, type: 'checkbox' }), label);
      case 'textarea':
        return el('div', { className: 'field' }, label, el('textarea', { ...common, rows: 3, placeholder }));
      case 'number':
        return el('div', { className: 'field' }, label, el('input', { ...common, type: 'number', step: 'any', inputmode: 'decimal', placeholder }));
      case 'select': {
        const options = Array.isArray(f.options) ? f.options : [];
        return el('div', { className: 'field' }, label,
          el('select', common,
            el('option', { value: '', text: 'Choose…' }),
            ...options.map((o) => el('option', { value: String(o), text: String(o) }))));
      }
      default:
        return el('div', { className: 'field' }, label, el('input', { ...common, type: 'text', autocomplete: 'off', placeholder }));
    }
  }

  // formResponses collects a form's values by field key: numbers as numbers,
  // checkboxes as true/false, and no value at all for an empty field (the API
  // decides what is required).
  function formResponses(form) {
    const responses = {};
    for (const input of form.querySelectorAll('[data-field-key]')) {
      const key = input.dataset.fieldKey;
      const type = input.dataset.fieldType;
      if (type === 'checkbox') {
        responses[key] = input.checked;
      } else if (type === 'number') {
        if (input.value.trim() !== '') responses[key] = Number(input.value);
      } else if (input.value !== '') {
        responses[key] = input.value;
      }
    }
    return responses;
  }

  // respond answers a message once; its controls are inert meanwhile.
  function respond(article, body) {
    if (article.dataset.responding === 'true') return;
    article.dataset.responding = 'true';
    const id = article.dataset.messageId;
    action(async () => {
      try {
        await api('POST', `/v1/messages/${enc(id)}/respond`, body);
      } finally {
        delete article.dataset.responding;
      }
    });
  }

  function onMessagesClick(ev) {
    const btn = ev.target.closest('button');
    if (!btn || btn.type === 'submit') return;
    const article = btn.closest('article[data-message-id]');
    if (!article) return;
    if (btn.classList.contains('message-action') && btn.dataset.key !== undefined) {
      respond(article, { action: btn.dataset.key });
    } else if (btn.classList.contains('message-delete')) {
      const following = article.nextElementSibling || article.previousElementSibling;
      const followingId = following ? following.dataset.messageId : '';
      action(() => api('DELETE', `/v1/messages/${enc(article.dataset.messageId)}`)).then(() => {
        // The article is gone: put the focus on its neighbour.
        if (article.isConnected || (document.activeElement && document.activeElement !== document.body)) return;
        const next = followingId ? $('messages').querySelector(`article[data-message-id="${CSS.escape(followingId)}"]`) : null;
        (next || $('content')).focus();
      });
    }
  }

  function onMessagesSubmit(ev) {
    const form = ev.target.closest('form.message-form');
    if (!form) return;
    ev.preventDefault();
    const article = form.closest('article[data-message-id]');
    if (!article || form.dataset.key === undefined) return;
    respond(article, { action: form.dataset.key, responses: formResponses(form) });
  }

  function onMessagesChannel() {
    messagesChannel = $('messages-channel').value;
    messagesWanted = PAGE_SIZE;
    const seq = navSeq;
    run(() => loadMessages(seq));
  }

  function onMessagesMore() {
    const shown = $('messages').children.length;
    messagesWanted = Math.max(messagesWanted, shown) + PAGE_SIZE;
    const seq = navSeq;
    run(async () => {
      await loadMessages(seq);
      // The first of the new messages gets the focus (the button may be
      // hidden now that everything is shown).
      const first = $('messages').children[shown];
      if (first) first.focus();
    });
  }

  // ---- API keys ----
  async function loadKeys(seq) {
    const data = await api('GET', '/v1/keys');
    if (seq !== navSeq) return;
    const keys = data.keys || [];
    const rows = keys.map((k) => el('tr', { dataset: { keyId: k.id } },
      el('td', { className: 'key-name', text: k.name }),
      el('td', { className: 'key-prefix' }, el('code', { text: k.prefix ? `${k.prefix}…` : '' })),
      el('td', { className: 'key-created' }, timeEl(k.created_at)),
      el('td', { className: 'key-last-used', title: k.last_used_at || null, text: k.last_used_at ? formatTime(k.last_used_at) : 'never' }),
      el('td', { className: 'actions' }, button('key-revoke danger', 'Revoke', `Revoke ${k.name}`)),
    ));
    fillBody($('keys').tBodies[0], rows);
    $('keys-empty').hidden = keys.length > 0;
  }

  function hideKeyCreated() {
    $('key-created').hidden = true;
    $('key-secret').textContent = '';
  }

  function onKeyCreate(ev) {
    ev.preventDefault();
    const name = $('key-name').value;
    action(async () => {
      const data = await api('POST', '/v1/keys', { name });
      $('key-name').value = '';
      $('key-secret').textContent = data.key || '';
      $('key-created').hidden = false;
    });
  }

  function onKeyClick(ev) {
    const btn = ev.target.closest('button.key-revoke');
    if (!btn) return;
    const row = btn.closest('tr[data-key-id]');
    if (!row) return;
    action(() => api('DELETE', `/v1/keys/${enc(row.dataset.keyId)}`));
  }

  // ---- devices ----
  async function loadDevices(seq) {
    const data = await api('GET', '/v1/devices');
    if (seq !== navSeq) return;
    const devices = data.devices || [];
    const rows = devices.map((d) => el('tr', { dataset: { deviceId: d.id }, className: d.active === false ? 'is-inactive' : null },
      el('td', { className: 'device-name', text: d.name || '' }),
      el('td', { className: 'device-platform', text: d.platform }),
      el('td', { className: 'device-created' }, timeEl(d.created_at)),
      el('td', { className: 'actions' }, button('device-delete danger', 'Remove', `Remove ${d.name || d.platform + ' device'}`)),
    ));
    fillBody($('devices').tBodies[0], rows);
    $('devices-empty').hidden = devices.length > 0;
  }

  function onDeviceClick(ev) {
    const btn = ev.target.closest('button.device-delete');
    if (!btn) return;
    const row = btn.closest('tr[data-device-id]');
    if (!row) return;
    action(() => api('DELETE', `/v1/devices/${enc(row.dataset.deviceId)}`));
  }

  // ---- folders ----
  async function loadFolders(seq) {
    const data = await api('GET', '/v1/folders');
    if (seq !== navSeq) return;
    const folders = data.folders || [];
    folderNames = new Map(folders.map((f) => [f.id, f.name]));
    const rows = folders.map((f) => el('tr', { dataset: { folderId: f.id } },
      el('td', { className: 'folder-name', text: f.name }),
      el('td', { className: 'folder-created' }, timeEl(f.created_at)),
      el('td', { className: 'actions' },
        button('folder-rename', 'Rename', `Rename folder ${f.name}`),
        button('folder-delete danger', 'Delete', `Delete folder ${f.name}`)),
    ));
    fillBody($('folders').tBodies[0], rows);
    $('folders-empty').hidden = folders.length > 0;
  }

  function onFolderCreate(ev) {
    ev.preventDefault();
    const name = $('folder-name').value;
    action(async () => {
      await api('POST', '/v1/folders', { name });
      $('folder-name').value = '';
    });
  }

  function onFolderClick(ev) {
    const btn = ev.target.closest('button');
    if (!btn) return;
    const row = btn.closest('tr[data-folder-id]');
    if (!row) return;
    const id = row.dataset.folderId;
    const path = `/v1/folders/${enc(id)}`;
    if (btn.classList.contains('folder-rename')) {
      const cell = row.querySelector('td.folder-name');
      if (cell) startRename(cell, 'folder', folderNames.get(id) || '', (name) => api('PATCH', path, { name }));
    } else if (btn.classList.contains('folder-delete')) {
      action(() => api('DELETE', path));
    }
  }

  const loaders = {
    signin: loadSignin,
    channels: loadChannels,
    messages: loadMessages,
    keys: loadKeys,
    devices: loadDevices,
    folders: loadFolders,
  };

  // ---- wiring ----
  function onNavClick(ev) {
    const link = ev.target.closest('a[href^="#/"]');
    if (!link) return;
    if (ev.button !== 0 || ev.metaKey || ev.ctrlKey || ev.shiftKey || ev.altKey) return;
    ev.preventDefault();
    go(link.getAttribute('href'));
  }

  function onHashChange() {
    if (location.hash !== routedHash) route();
  }

  function boot() {
    $('signin-form').addEventListener('submit', onSignin);
    $('signout').addEventListener('click', onSignout);
    $('nav').addEventListener('click', onNavClick);
    $('channel-create').addEventListener('submit', onChannelCreate);
    $('channels').tBodies[0].addEventListener('click', onChannelClick);
    $('messages-channel').addEventListener('change', onMessagesChannel);
    $('messages').addEventListener('click', onMessagesClick);
    $('messages').addEventListener('submit', onMessagesSubmit);
    $('messages-more').addEventListener('click', onMessagesMore);
    $('key-create').addEventListener('submit', onKeyCreate);
    $('keys').tBodies[0].addEventListener('click', onKeyClick);
    $('devices').tBodies[0].addEventListener('click', onDeviceClick);
    $('folder-create').addEventListener('submit', onFolderCreate);
    $('folders').tBodies[0].addEventListener('click', onFolderClick);
    window.addEventListener('hashchange', onHashChange);

    run(async () => {
      let failure = null;
      try {
        setUser(await api('GET', '/v1/auth/me', undefined, { public: true }));
      } catch (err) {
        setUser(null);
        if (!(err instanceof ApiError && err.status === 401)) failure = err;
      }
      route();
      if (failure) showError(failure.message);
    });
  }

  boot();
})();
