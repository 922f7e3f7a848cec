// The installable app's page side: registers the service worker, has it keep
// what this page loaded (the shell, for offline use), and says so when the
// server cannot be reached.
import { registerServiceWorker } from './sw-register.js';

const PROBE_MS = 15000;

// keepShell hands the service worker the same-origin files this page
// loaded, whatever they are, so that the next visit works offline.
async function keepShell() {
  const reg = await registerServiceWorker();
  if (!reg || !reg.active) return;
  const urls = new Set(['/']);
  for (const e of performance.getEntriesByType('resource')) {
    const u = new URL(e.name);
    if (u.origin === location.origin && !/^\/(v1|auth)\//.test(u.pathname)) urls.add(u.pathname);
  }
  reg.active.postMessage({ type: 'cache-shell', urls: [...urls] });
}

// The banner says the page is offline while the server does not answer.
function banner() {
  let b = document.getElementById('offline-banner');
  if (!b) {
    b = document.createElement('div');
    b.id = 'offline-banner';
    b.className = 'offline-banner';
    b.setAttribute('role', 'status');
    b.textContent = 'You are offline: Herald is shown from this device\'s copy, and nothing can be loaded or answered until the server is back.';
    b.hidden = true;
    document.body.prepend(b);
  }
  return b;
}

async function probe() {
  let online = navigator.onLine !== false;
  if (online) {
    try {
      const res = await fetch('/healthz', { cache: 'no-store' });
      online = res.ok;
    } catch (_) {
      online = false;
    }
  }
  banner().hidden = online;
  document.body.dataset.offline = online ? 'false' : 'true';
}

probe();
setInterval(probe, PROBE_MS);
window.addEventListener('online', probe);
window.addEventListener('offline', probe);
registerServiceWorker().then(() => {
  if (document.readyState === 'complete') keepShell();
  else window.addEventListener('load', keepShell, { once: true });
});
