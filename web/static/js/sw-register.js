// Registering Herald's service worker, shared by the page's modules.

const DEVICE_CACHE = 'herald-device';
const DEVICE_KEY = '/__herald/device';

let registration = null;

// registerServiceWorker registers /sw.js at the root scope once per page
// and resolves to its registration once it is active (null where service
// workers are not available: an http page other than localhost, an old
// browser).
export function registerServiceWorker() {
  if (!('serviceWorker' in navigator)) return Promise.resolve(null);
  if (!registration) {
    registration = navigator.serviceWorker.register('/sw.js', { scope: '/' })
      .then(() => navigator.serviceWorker.ready)
      .catch(() => null);
  }
  return registration;
}

// storedDevice is the device this browser registered ({id, worker_token,
// endpoint}), kept where the service worker reads it too; null when none.
export async function storedDevice() {
  if (!('caches' in self)) return null;
  try {
    const cache = await caches.open(DEVICE_CACHE);
    const res = await cache.match(DEVICE_KEY);
    return res ? await res.json() : null;
  } catch (_) {
    return null;
  }
}

// storeDevice keeps dev (or forgets it, with null).
export async function storeDevice(dev) {
  if (!('caches' in self)) return;
  const cache = await caches.open(DEVICE_CACHE);
  if (!dev) {
    await cache.delete(DEVICE_KEY);
    return;
  }
  await cache.put(DEVICE_KEY, new Response(JSON.stringify(dev), { headers: { 'Content-Type': 'application/json' } }));
}
