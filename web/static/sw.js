// Herald's service worker: shows Web Push notifications, answers them from
// their buttons, follows their message's updates, re-registers a rotated
// subscription, and keeps the app's shell for offline use.
//
// What it never does: cache the API (/v1/), sign-in (/auth/) or anything
// else that carries a user's data; read the CSRF cookie (it cannot). An
// answer is authenticated by the session cookie, which same-origin requests
// carry, and by the credential the push carried for this device and message.
'use strict';

const SHELL_CACHE = 'herald-shell-v1';
// The device this browser registered (id and the worker token that lets
// this worker hand in a rotated subscription), written by the page
// (js/sw-register.js).
const DEVICE_CACHE = 'herald-device';
const DEVICE_KEY = '/__herald/device';
const ICON = '/icons/icon-192.png';
const BADGE = '/icons/badge-96.png';

self.addEventListener('install', () => self.skipWaiting());
self.addEventListener('activate', (event) => event.waitUntil(self.clients.claim()));

// ---- offline shell ----

// cacheable reports whether a same-origin GET may be kept: the shell (the
// page, its scripts, styles, icons and manifest), never the API, sign-in,
// health or metrics, which are per-user or live.
function cacheable(url) {
  if (url.origin !== self.location.origin) return false;
  return !/^\/(v1|auth)\//.test(url.pathname) && url.pathname !== '/healthz' && url.pathname !== '/metrics';
}

// keep stores a successful, storable answer in the shell cache.
async function keep(request, response) {
  if (!response || response.status !== 200 || response.type !== 'basic') return;
  if (/no-store/.test(response.headers.get('Cache-Control') || '')) return;
  const cache = await caches.open(SHELL_CACHE);
  await cache.put(request, response);
}

// Network first, so that an upgrade of Herald reaches the browser at once;
// the cache only when the server cannot be reached. A page navigation falls
// back to the cached page ("/"), whatever its hash route.
self.addEventListener('fetch', (event) => {
  const req = event.request;
  if (req.method !== 'GET') return;
  const url = new URL(req.url);
  if (!cacheable(url)) return;
  const key = req.mode === 'navigate' ? '/' : url.pathname;
  event.respondWith((async () => {
    try {
      const res = await fetch(req);
      event.waitUntil(keep(key, res.clone()));
      return res;
    } catch (err) {
      const cached = await caches.match(key, { cacheName: SHELL_CACHE });
      if (cached) return cached;
      throw err;
    }
  })());
});

// The page tells which of its files it loaded before this worker controlled
// it (the first visit), so they are kept too: no list of the app's files here.
self.addEventListener('message', (event) => {
  const msg = event.data || {};
  if (msg.type !== 'cache-shell' || !Array.isArray(msg.urls)) return;
  event.waitUntil((async () => {
    for (const u of msg.urls.slice(0, 100)) {
      let url;
      try {
        url = new URL(u, self.location.origin);
      } catch (_) {
        continue;
      }
      if (!cacheable(url)) continue;
      const key = url.pathname === '/index.html' ? '/' : url.pathname;
      try {
        await keep(key, await fetch(url.pathname, { credentials: 'same-origin' }));
      } catch (_) {
        // Offline already: what was kept stays.
      }
    }
    if (event.source) event.source.postMessage({ type: 'shell-cached' });
  })());
});

// ---- notifications ----

self.addEventListener('push', (event) => {
  let data = null;
  try {
    data = event.data ? event.data.json() : null;
  } catch (_) {
    data = null;
  }
  event.waitUntil(data && data.type === 'update' ? showUpdate(data) : showMessage(data));
});

// buttonsOf turns a message's actions into notification actions: as many as
// this browser shows (Notification.maxActions); the others are in the app.
function buttonsOf(actions) {
  const max = (self.Notification && self.Notification.maxActions) || 0;
  return (Array.isArray(actions) ? actions : [])
    .filter((a) => a && typeof a.label === 'string' && ['button', 'form', 'url', 'http'].includes(a.type))
    .slice(0, max)
    .map((a, i) => ({ action: `${i}:${a.type}:${a.key || ''}`, title: a.label }));
}

async function showMessage(d) {
  if (!d || typeof d.message_id !== 'string') {
    // A push must show something; one this worker cannot read says so.
    return self.registration.showNotification('Herald', { body: 'A new notification arrived. Open Herald to read it.', icon: ICON, badge: BADGE });
  }
  // A silent push (its user's quiet hours) is shown, without sound,
  // vibration or insistence, whatever its priority.
  const quiet = d.silent === true;
  const high = d.priority === 'high' && !quiet;
  const low = d.priority === 'low';
  return self.registration.showNotification(d.title || 'Herald', {
    body: (d.channel ? d.channel + '\n' : '') + (d.body || ''),
    tag: d.tag,
    icon: ICON,
    badge: BADGE,
    timestamp: Date.now(),
    // An urgent message's notification stays until acted on, and each
    // repeat alerts again.
    requireInteraction: high || d.require_interaction === true,
    // A sequence's later message replaces the earlier one under the same
    // tag, and alerts again.
    renotify: high || (d.renotify === true && !quiet),
    silent: low || quiet,
    image: typeof d.image === 'string' && /^https?:/.test(d.image) ? d.image : undefined,
    actions: buttonsOf(d.actions),
    data: { message_id: d.message_id, channel: d.channel || '', url: d.url || '/', actions: d.actions || [], answer: d.answer || null,
      click: typeof d.click === 'string' && /^(https?:|mailto:)/.test(d.click) ? d.click : '' },
  });
}

const STATUS_TEXT = {
  answered: 'Answered',
  approved: 'Approved',
  rejected: 'Rejected',
  expired: 'Expired',
  acknowledged: 'Acknowledged',
  cancelled: 'Cancelled',
};

// replace shows a notification's final state under the same tag, silently
// and without buttons, if it is still displayed; a notification the user
// already dismissed stays dismissed.
async function replace(tag, title, body, data) {
  const shown = await self.registration.getNotifications({ tag });
  if (shown.length === 0) return;
  await self.registration.showNotification(title, { tag, body, icon: ICON, badge: BADGE, silent: true, actions: [], data });
}

// showUpdate: the message was answered elsewhere (another device, the API,
// an approval resolving or expiring).
function showUpdate(d) {
  const status = STATUS_TEXT[d.status] || 'Answered';
  const body = (d.channel ? d.channel + '\n' : '') + status + ' elsewhere.';
  return replace(d.tag, d.title || 'Herald', body, { message_id: d.message_id, url: d.url || '/', actions: [], answer: null });
}

// onNotificationClick answers a tapped button, or opens the app (the body,
// a form, a link). A named function, so that a test can hand it an event.
function onNotificationClick(event) {
  const n = event.notification;
  const d = n.data || {};
  const [index, type] = (event.action || '').split(':');
  const act = event.action ? (d.actions || []).filter((a) => a && ['button', 'form', 'url', 'http'].includes(a.type))[Number(index)] : null;
  // An http action answers as a button does; Herald then makes its request.
  if (act && (type === 'button' || type === 'http') && d.answer) {
    event.waitUntil(answer(n, act));
    return;
  }
  n.close();
  if (act && type === 'url' && /^https?:/.test(act.value || '')) {
    event.waitUntil(self.clients.openWindow(act.value));
    return;
  }
  // The body of a message with a click URL opens it.
  if (!act && d.click) {
    event.waitUntil(self.clients.openWindow(d.click));
    return;
  }
  // The body, a form (filled in the app) or a button this device cannot
  // answer: open the app at the message.
  event.waitUntil(openApp(d.url || '/'));
}
self.addEventListener('notificationclick', onNotificationClick);

// openApp focuses an open Herald window (moving it to url) or opens one.
async function openApp(url) {
  const target = new URL(url, self.location.origin).href;
  const wins = await self.clients.matchAll({ type: 'window', includeUncontrolled: true });
  for (const w of wins) {
    if (new URL(w.url).origin !== self.location.origin) continue;
    let shown = w;
    try {
      shown = (w.url === target ? w : await w.navigate(target)) || w;
    } catch (_) {
      // A window this worker does not control cannot be moved: focus it.
    }
    // Focusing needs the click's user activation; without it the window
    // is at the message all the same.
    return shown.focus().catch(() => shown);
  }
  return self.clients.openWindow(target);
}

// answer sends the tapped button without opening a page, then shows the
// outcome in place of the notification.
async function answer(n, act) {
  const d = n.data;
  const title = n.title;
  let res;
  try {
    res = await fetch(d.answer.url, {
      method: 'POST',
      credentials: 'same-origin',
      headers: { 'Content-Type': 'application/json', Accept: 'application/json' },
      body: JSON.stringify({ action: act.key, responses: {}, device_id: d.answer.device_id, token: d.answer.token }),
    });
  } catch (_) {
    res = null;
  }
  let out = null;
  if (res) {
    try {
      out = await res.json();
    } catch (_) {
      out = null;
    }
  }
  const channel = d.channel ? d.channel + '\n' : '';
  const done = { message_id: d.message_id, url: d.url, actions: [], answer: null };
  if (res && res.ok) {
    const waiting = out && out.approval_status === 'pending';
    const text = waiting ? `You voted ${act.label}; waiting for the other approvers.` : `Answered: ${act.label}`;
    return self.registration.showNotification(title, { tag: n.tag, body: channel + text, icon: ICON, badge: BADGE, silent: true, data: done });
  }
  if (res && res.status === 409) {
    const text = (out && out.message) || 'This message was already answered.';
    return self.registration.showNotification(title, { tag: n.tag, body: channel + text, icon: ICON, badge: BADGE, silent: true, data: done });
  }
  // Signed out, a removed device, a network failure: the app can answer.
  n.close();
  return openApp(d.url || '/');
}

// ---- a rotated subscription ----

function base64urlToBytes(s) {
  const b64 = s.replace(/-/g, '+').replace(/_/g, '/') + '==='.slice((s.length + 3) % 4);
  const bin = atob(b64);
  return Uint8Array.from(bin, (c) => c.charCodeAt(0));
}

async function registeredDevice() {
  const cache = await caches.open(DEVICE_CACHE);
  const res = await cache.match(DEVICE_KEY);
  return res ? res.json() : null;
}

// The browser replaced the subscription (it expired, or the push service
// rotated it): subscribe again if the browser did not, and hand the new
// one to Herald for this device, with the worker token of its registration.
self.addEventListener('pushsubscriptionchange', (event) => {
  event.waitUntil((async () => {
    const dev = await registeredDevice();
    if (!dev || !dev.id || !dev.worker_token) return;
    let sub = event.newSubscription;
    if (!sub) {
      const key = await (await fetch('/v1/push/vapid-public-key')).json();
      sub = await self.registration.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: base64urlToBytes(key.public_key) });
    }
    const res = await fetch(`/v1/devices/${encodeURIComponent(dev.id)}/subscription`, {
      method: 'POST',
      credentials: 'same-origin',
      headers: { 'Content-Type': 'application/json', Accept: 'application/json' },
      body: JSON.stringify({ token: dev.worker_token, push_token: JSON.stringify(sub) }),
    });
    if (res.ok) {
      const cache = await caches.open(DEVICE_CACHE);
      await cache.put(DEVICE_KEY, new Response(JSON.stringify({ ...dev, endpoint: sub.endpoint }), { headers: { 'Content-Type': 'application/json' } }));
    }
  })());
});
