// The one place that reaches the browser-notifications module (notify.js).
// It is imported when first needed, and a browser that cannot load it gets
// a page whose every call here does nothing, instead of no page at all.
let loaded = null;

function notify() {
  if (!loaded) loaded = import('./notify.js').catch(() => null);
  return loaded;
}

export async function mountNotifications(root) {
  const m = await notify();
  if (m && typeof m.mountNotifications === 'function') m.mountNotifications(root);
}

export async function mountNotificationsHint(root) {
  const m = await notify();
  if (m && typeof m.mountNotificationsHint === 'function') m.mountNotificationsHint(root);
}

// thisBrowserDeviceId is the id of the device this browser registered, or
// null.
export async function thisBrowserDeviceId() {
  const m = await notify();
  if (!m || typeof m.thisBrowserDeviceId !== 'function') return null;
  try {
    return await m.thisBrowserDeviceId();
  } catch {
    return null;
  }
}
