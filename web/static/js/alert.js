// An urgent message's alert, as a message article shows it: where it
// stands, how often it repeated, who was alerted and when, who
// acknowledged it, when and from where; the owner's Resolve button while it
// is active. And the two clicks it adds to the message list: Acknowledge
// (which names this browser's device when it is registered) and Resolve.
import { el, button, timeEl, confirmed } from './dom.js';
import { enc } from './api.js';
import { thisBrowserDeviceId } from './notify.js';

// ACK_KEY is the key of an urgent message's Acknowledge button.
export const ACK_KEY = 'acknowledge';

const STATE_WORDS = {
  active: 'Alerting until acknowledged',
  acknowledged: 'Acknowledged',
  cancelled: 'Resolved',
  expired: 'Expired: nobody acknowledged in time',
};

const str = (v) => (typeof v === 'string' ? v : '');

function who(u) {
  if (!u || typeof u !== 'object') return 'someone';
  return str(u.name) || str(u.email) || str(u.id) || 'someone';
}

// every says a repeat interval in words: "every 5 minutes".
function every(seconds) {
  const s = Number(seconds) || 0;
  if (s % 3600 === 0) return `every ${s / 3600} hour${s === 3600 ? '' : 's'}`;
  if (s % 60 === 0) return `every ${s / 60} minute${s === 60 ? '' : 's'}`;
  return `every ${s} seconds`;
}

// fromWhere says where an acknowledgement came from.
function fromWhere(device) {
  const d = str(device);
  if (d === '') return '';
  if (d === 'session') return 'from the web app';
  if (d === 'ntfy') return 'from an ntfy client';
  if (d.startsWith('key_')) return `with API key ${d}`;
  return `from device ${d}`;
}

// isActive reports whether m's alert still repeats.
export function isActive(m) {
  return !!(m && m.alert && m.alert.state === 'active');
}

// alertSection draws m's alert; null when m has none. owner: the viewer
// owns the channel, and may resolve the alert.
export function alertSection(m, owner) {
  const a = m.alert;
  if (!a || typeof a !== 'object') return null;
  const state = str(a.state);
  const summary = [STATE_WORDS[state] || state];
  summary.push(`repeated ${a.repeats || 0} time${a.repeats === 1 ? '' : 's'}, ${every(a.repeat_seconds)}`);
  const lines = [];
  if (state === 'active') {
    lines.push(el('p', { className: 'alert-timing' },
      a.next_repeat_at ? el('span', {}, 'next ', timeEl(a.next_repeat_at, 'alert-next'), ' · ') : null,
      'expires ', timeEl(a.expires_at, 'alert-expires')));
  }
  if (state === 'acknowledged') {
    const where = fromWhere(a.device);
    lines.push(el('p', { className: 'alert-ack' }, 'Acknowledged by ', el('strong', { className: 'alert-ack-by', text: who(a.acknowledged_by) }),
      ' ', timeEl(a.acknowledged_at, 'alert-ack-at'), where ? el('span', { className: 'alert-ack-device', text: ` ${where}` }) : null));
  }
  if (state === 'cancelled') {
    const by = a.cancelled_by === 'sender' ? 'by the sender' : 'by the channel owner';
    lines.push(el('p', { className: 'alert-resolved' }, `Resolved ${by} `, timeEl(a.resolved_at, 'alert-resolved-at')));
  }
  if (state === 'expired') {
    lines.push(el('p', { className: 'alert-resolved' }, 'Expired ', timeEl(a.resolved_at || a.expires_at, 'alert-resolved-at')));
  }
  const alerted = Array.isArray(a.alerted) ? a.alerted : [];
  return el('div', { className: 'message-alert', dataset: { alertState: state }, role: 'group', 'aria-label': 'Urgent alert' },
    el('p', { className: 'alert-summary' }, el('span', { className: 'badge urgent-badge', text: 'urgent' }), ' ', summary.join(' · ')),
    ...lines,
    alerted.length ? el('ul', { className: 'alert-alerted plain-list', 'aria-label': 'Alerted' }, ...alerted.map((r) =>
      el('li', { className: 'alerted', dataset: { userId: str(r.id), level: String(r.level || 0) } },
        el('span', { className: 'alerted-who', text: who(r) }),
        r.level ? el('span', { className: 'alerted-level', text: ` · escalation ${r.level}` }) : null,
        ' · alerted ', timeEl(r.alerted_at, 'alerted-at')))) : null,
    owner && state === 'active' ? el('div', { className: 'button-row' },
      button('message-alert-cancel secondary small', 'Resolve', `Resolve the alert of ${str(m.title)}: no more repeats`)) : null);
}

// acknowledgement is the answer an Acknowledge click sends: with this
// browser's device, when it is registered for notifications.
export async function acknowledgement() {
  const body = { action: ACK_KEY };
  const id = await thisBrowserDeviceId().catch(() => '');
  if (id) body.device_id = id;
  return body;
}

// resolve asks, then ends the alert of message id; it reports whether it
// was asked to.
export function resolve(ctx, id, title, reload) {
  if (!confirmed(`Resolve the alert of "${title}"? Nobody is alerted again.`)) return false;
  ctx.router.change(async () => {
    await ctx.api('POST', `/v1/messages/${enc(id)}/alert/cancel`);
    await reload();
  });
  return true;
}
