// A message's attachment, as the message card shows it: a file Herald
// stores (m.attachment: a picture, or a download link with its name and
// size), one it could not fetch (m.attachment.error), or a link the sender
// gave (m.attach_url) that Herald did not fetch.
import { el } from './dom.js';

const HTTP_URL = /^https?:\/\//i;
// Herald's own attachment route: the only same-origin address a stored
// attachment may name (a relative URL, read with the session's cookie).
const STORED_URL = /^\/v1\/attachments\/[A-Za-z0-9_-]+(?:\?thumbnail=1)?$/;
const IMAGE_PATH = /\.(?:jpe?g|png|gif|webp|avif)$/i;
// The box a picture is drawn in at most, in CSS pixels; CSS narrows it to
// the card on a phone.
const BOX_W = 480;
const BOX_H = 320;

const str = (v) => (typeof v === 'string' ? v : '');

// looksLikeImage: the URL's path ends like a picture's file name (as
// push.LooksLikeImage decides for notifications).
function looksLikeImage(url) {
  try {
    return IMAGE_PATH.test(new URL(url).pathname);
  } catch (_) {
    return false;
  }
}

// formatSize says a byte count as people read it: "830 bytes", "12 KB",
// "1.4 MB" (1 KB = 1024 bytes, as file managers count).
export function formatSize(n) {
  if (typeof n !== 'number' || !Number.isFinite(n) || n < 0) return '';
  if (n < 1024) return `${n} byte${n === 1 ? '' : 's'}`;
  const units = ['KB', 'MB', 'GB'];
  let v = n / 1024;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${v < 10 ? Math.round(v * 10) / 10 : Math.round(v)} ${units[i]}`;
}

// fit is the size a w×h picture is drawn at within the box (never larger
// than it is), so that the page keeps its place before the picture loads.
export function fit(w, h) {
  if (!(w > 0 && h > 0)) return null;
  const scale = Math.min(1, BOX_W / w, BOX_H / h);
  return { width: Math.max(1, Math.round(w * scale)), height: Math.max(1, Math.round(h * scale)) };
}

// attachmentOf is the attachment's element for message m, or null.
export function attachmentOf(m) {
  const a = m.attachment;
  if (a && typeof a === 'object') return stored(a);
  return linked(str(m.attach_url));
}

function stored(a) {
  const name = str(a.name) || 'attachment';
  if (str(a.error)) {
    const url = str(a.url);
    // The reason may say "not fetched" itself: said once.
    const reason = a.error.replace(/^(?:picture )?not fetched:\s*/i, '') || a.error;
    return el('p', { className: 'message-attachment-error', role: 'note' },
      el('span', { className: 'attachment-error-text', text: `Picture not fetched: ${reason}` }),
      HTTP_URL.test(url) ? el('span', {}, ' · ', el('a', { href: url, target: '_blank', rel: 'noopener noreferrer nofollow', text: name })) : null);
  }
  const url = str(a.url);
  if (!STORED_URL.test(url)) return null;
  if (a.image === true) {
    const thumb = str(a.thumbnail_url);
    const size = fit(a.width, a.height);
    return el('a', { className: 'message-attachment message-picture', href: url, target: '_blank', rel: 'noopener',
      title: `${name} · open the full picture` },
    el('img', { src: STORED_URL.test(thumb) ? thumb : url, alt: name, loading: 'lazy', decoding: 'async',
      width: size ? size.width : null, height: size ? size.height : null }));
  }
  const size = formatSize(a.size);
  return el('p', { className: 'message-attachment-file' },
    el('a', { href: url, download: name, type: str(a.content_type) || null },
      el('span', { className: 'attachment-name', text: name }),
      size ? el('span', { className: 'attachment-size', text: ` · ${size}` }) : null));
}

// linked shows attach_url as a picture when it looks like one, else as a
// link named after its file. Both come from where the sender put them,
// without a referrer.
function linked(url) {
  if (!HTTP_URL.test(url)) return null;
  if (looksLikeImage(url)) {
    return el('a', { className: 'message-attachment', href: url, target: '_blank', rel: 'noopener noreferrer nofollow' },
      el('img', { src: url, alt: 'Attached picture', loading: 'lazy', referrerpolicy: 'no-referrer' }));
  }
  let name = url;
  try {
    name = decodeURIComponent(new URL(url).pathname.split('/').filter(Boolean).pop() || url);
  } catch (_) { /* the URL as it is */ }
  return el('p', { className: 'message-attachment-link' },
    el('a', { href: url, target: '_blank', rel: 'noopener noreferrer nofollow', text: `Attachment: ${name}` }));
}
