// Notifications in this browser: the control that turns Web Push on and
// off, the hint shown after sign-in, and which device is this browser.
// Loaded by notifications.js when first needed; its calls go through the
// page's one API client.
import { api, enc } from './api.js';
import { registerServiceWorker, storedDevice, storeDevice } from './sw-register.js';

const HINT_KEY = 'herald.notifications.hint-dismissed';

// SUBSCRIBE_MS is how long the browser's push service gets to answer
// pushManager.subscribe. Without a way to reach it (a LAN without
// internet, a browser without a push service) the call never settles.
const SUBSCRIBE_MS = 10000;

const UNREACHABLE = 'This browser could not reach its push service within 10 seconds, so notifications were not turned on. ' +
  'Notifications travel through the push service of the browser\'s maker (Google for Chrome and Edge, Mozilla for Firefox, ' +
  'Apple for Safari): this device needs internet access to it, and Herald must be open over https. Check the connection and try again.';

let hintRoot = null; // where the hint is shown, cleared once notifications are on

// ---- state ----

function isIOS() {
  return /iPad|iPhone|iPod/.test(navigator.userAgent) ||
    (navigator.platform === 'MacIntel' && navigator.maxTouchPoints > 1);
}

function standalone() {
  return navigator.standalone === true || (window.matchMedia && window.matchMedia('(display-mode: standalone)').matches);
}

function supported() {
  return 'serviceWorker' in navigator && 'PushManager' in window && 'Notification' in window && window.isSecureContext;
}

// currentState is on, off, blocked or unsupported (with why).
async function currentState() {
  if (!supported()) {
    if (!window.isSecureContext) return { state: 'unsupported', insecure: true };
    // Safari on iOS offers push only to an app added to the home screen.
    return { state: 'unsupported', ios: isIOS() && !standalone() };
  }
  if (Notification.permission === 'denied') return { state: 'blocked' };
  if (Notification.permission !== 'granted') return { state: 'off' };
  const dev = await thisBrowserDevice();
  return dev ? { state: 'on', device: dev } : { state: 'off' };
}

// thisBrowserDevice is the registered device of this browser, if its
// subscription is still the browser's and the signed-in user still has it.
async function thisBrowserDevice() {
  const dev = await storedDevice();
  if (!dev || !dev.id) return null;
  const reg = await registerServiceWorker();
  const sub = reg && reg.pushManager ? await reg.pushManager.getSubscription().catch(() => null) : null;
  if (!sub || sub.endpoint !== dev.endpoint) return null;
  try {
    const data = await api('GET', '/v1/devices');
    return (data.devices || []).some((d) => d.id === dev.id && d.active !== false) ? dev : null;
  } catch (_) {
    return null;
  }
}

// withTimeout settles as promise does, or fails with message after ms.
function withTimeout(promise, ms, message) {
  let timer;
  const late = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(message)), ms);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

function base64urlToBytes(s) {
  const b64 = s.replace(/-/g, '+').replace(/_/g, '/') + '==='.slice((s.length + 3) % 4);
  return Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
}

function deviceName() {
  const ua = navigator.userAgent;
  const browser = /Edg\//.test(ua) ? 'Edge' : /Firefox\//.test(ua) ? 'Firefox' : /Chrom(e|ium)\//.test(ua) ? 'Chrome'
    : /Safari\//.test(ua) ? 'Safari' : 'Browser';
  const os = /Android/.test(ua) ? 'Android' : isIOS() ? 'iOS' : /Mac OS X/.test(ua) ? 'macOS' : /Windows/.test(ua) ? 'Windows'
    : /Linux/.test(ua) ? 'Linux' : '';
  return os ? `${browser} on ${os}` : browser;
}

// register sends subscription sub to Herald as this browser's web device
// and remembers it for the page and the service worker.
async function register(sub) {
  const dev = await api('POST', '/v1/devices', { platform: 'web', push_token: JSON.stringify(sub), name: deviceName() });
  await storeDevice({ id: dev.id, worker_token: dev.worker_token || '', endpoint: sub.endpoint });
  return dev;
}

// turnOn asks permission, subscribes with the server's key and registers.
async function turnOn() {
  const reg = await registerServiceWorker();
  if (!reg) throw new Error('This browser cannot run Herald\'s service worker.');
  const permission = await Notification.requestPermission();
  if (permission !== 'granted') return;
  const { public_key: key } = await api('GET', '/v1/push/vapid-public-key');
  let sub = await reg.pushManager.getSubscription();
  if (sub && sub.options && sub.options.applicationServerKey) {
    // A subscription made with another key (a reinstalled server) cannot
    // receive Herald's pushes.
    const had = new Uint8Array(sub.options.applicationServerKey);
    const want = base64urlToBytes(key);
    if (had.length !== want.length || had.some((b, i) => b !== want[i])) {
      await sub.unsubscribe();
      sub = null;
    }
  }
  if (!sub) {
    const subscribing = reg.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: base64urlToBytes(key) })
      .catch((err) => {
        throw new Error(`This browser could not subscribe to its push service (${err && err.message ? err.message : err}).`);
      });
    // A subscription that arrives after the wait is found by the next try
    // (getSubscription above).
    sub = await withTimeout(subscribing, SUBSCRIBE_MS, UNREACHABLE);
  }
  await register(sub);
}

// turnOff unsubscribes and removes the device.
async function turnOff() {
  const dev = await storedDevice();
  const reg = await registerServiceWorker();
  const sub = reg && reg.pushManager ? await reg.pushManager.getSubscription().catch(() => null) : null;
  if (sub) await sub.unsubscribe().catch(() => false);
  if (dev && dev.id) {
    try {
      await api('DELETE', `/v1/devices/${enc(dev.id)}`);
    } catch (err) {
      if (err.status !== 404) throw err;
    }
  }
  await storeDevice(null);
}

// ---- rendering ----

function el(tag, props = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(props)) {
    if (k === 'text') e.textContent = v;
    else if (k === 'className') e.className = v;
    else if (k === 'dataset') Object.assign(e.dataset, v);
    else e.setAttribute(k, v);
  }
  e.append(...children.filter(Boolean));
  return e;
}

const TEXT = {
  on: 'On: Herald\'s notifications appear on this device, even when this page is closed.',
  off: 'Off: notifications appear only while this page is open.',
  blocked: 'Blocked by the browser. Allow notifications for this site in the browser\'s site settings, then reload.',
  unsupported: 'This browser cannot receive push notifications.',
  ios: 'On iPhone and iPad, add Herald to the home screen first (Share, then Add to Home Screen), open it from there, and turn notifications on in the app.',
  insecure: 'Browsers allow notifications only on https:// pages (or on localhost). Open Herald over https.',
};

// working shows that btn is at work: disabled, reading text, with note in a
// status line appended to box. The function it returns undoes that.
function working(btn, box, text, note) {
  const label = btn.textContent;
  btn.disabled = true;
  btn.textContent = text;
  for (const old of box.querySelectorAll('.notify-error, .notify-progress')) old.remove();
  const line = note ? el('p', { className: 'notify-progress', role: 'status', text: note }) : null;
  if (line) box.append(line);
  return () => {
    btn.disabled = false;
    btn.textContent = label;
    if (line) line.remove();
  };
}

const PROGRESS = 'Waiting for the browser and its push service; this takes a few seconds.';

// mountNotifications renders the "Notifications in this browser" control
// into root; root.dataset.state tells its state (on, off, blocked,
// unsupported, busy).
export async function mountNotifications(root) {
  if (!root) return;
  const render = async (error) => {
    root.dataset.state = 'busy';
    const s = await currentState();
    const status = s.ios ? TEXT.ios : s.insecure ? TEXT.insecure : TEXT[s.state];
    const children = [
      el('h2', { text: 'Notifications in this browser' }),
      el('p', { className: 'notify-status', text: status }),
    ];
    if (s.state === 'on' || s.state === 'off') {
      const btn = el('button', { type: 'button', className: 'notify-toggle' + (s.state === 'on' ? ' secondary' : ''),
        text: s.state === 'on' ? 'Turn off' : 'Turn on notifications' });
      btn.addEventListener('click', () => {
        working(btn, btn.parentElement, s.state === 'on' ? 'Turning off…' : 'Turning on…', s.state === 'on' ? '' : PROGRESS);
        change(s.state === 'on' ? turnOff : turnOn);
      });
      children.push(btn);
    }
    if (error) children.push(el('p', { className: 'notify-error', role: 'alert', text: error }));
    root.replaceChildren(el('div', { className: 'card notify-card' }, ...children));
    root.dataset.state = s.state;
  };
  const change = async (fn) => {
    root.dataset.state = 'busy';
    let error = '';
    try {
      await fn();
    } catch (err) {
      error = err && err.message ? err.message : String(err);
    }
    await render(error);
    if (root.dataset.state !== 'off' && hintRoot) hintRoot.replaceChildren();
  };
  await registerServiceWorker();
  // A subscription this browser still holds is registered again, for the
  // session signed in now (an answer from a notification must come from it).
  const dev = await storedDevice();
  if (dev && supported() && Notification.permission === 'granted') {
    const reg = await registerServiceWorker();
    const sub = reg ? await reg.pushManager.getSubscription().catch(() => null) : null;
    if (sub) await register(sub).catch(() => null);
  }
  await render('');
}

// mountNotificationsHint renders, into root, a dismissable suggestion to
// turn notifications on; nothing when they are on, blocked, unsupported or
// the hint was dismissed before.
export async function mountNotificationsHint(root) {
  if (!root) return;
  hintRoot = root;
  root.replaceChildren();
  let dismissed = false;
  try {
    dismissed = localStorage.getItem(HINT_KEY) === '1';
  } catch (_) {
    dismissed = false;
  }
  if (dismissed) return;
  await registerServiceWorker();
  const s = await currentState();
  if (s.state !== 'off') return;
  const on = el('button', { type: 'button', className: 'notify-hint-on', text: 'Turn on notifications' });
  const close = el('button', { type: 'button', className: 'notify-hint-dismiss secondary', text: 'Not now' });
  const box = el('div', { className: 'notice notify-hint', role: 'status' },
    el('p', { text: 'Get Herald\'s messages on this device even when this page is closed, and answer them from the notification.' }),
    on, close);
  const dismiss = () => {
    try {
      localStorage.setItem(HINT_KEY, '1');
    } catch (_) {
      // Private mode: the hint comes back next time.
    }
    root.replaceChildren();
  };
  close.addEventListener('click', dismiss);
  on.addEventListener('click', async () => {
    const done = working(on, box, 'Turning on…', PROGRESS);
    try {
      await turnOn();
      dismiss();
    } catch (err) {
      done();
      box.append(el('p', { className: 'notify-error', role: 'alert', text: err && err.message ? err.message : String(err) }));
    }
  });
  root.append(box);
}

// thisBrowserDeviceId resolves to the id of the device this browser
// registered, or null.
export async function thisBrowserDeviceId() {
  const dev = await thisBrowserDevice();
  return dev ? dev.id : null;
}
