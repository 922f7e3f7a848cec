// DOM helpers. Every piece of user-provided text goes in as text nodes or
// attribute values, never as markup (Markdown bodies go through markdown.js).

export const $ = (id) => document.getElementById(id);

// el makes an element: attrs are attributes, except className, text (its
// text content) and dataset; false, null and undefined are left out.
export function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'className') node.className = v;
    else if (k === 'text') node.textContent = v;
    else if (k === 'dataset') Object.assign(node.dataset, v);
    else node.setAttribute(k, v === true ? '' : String(v));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

export function button(className, text, label, dataset) {
  return el('button', { type: 'button', className, text, 'aria-label': label, dataset });
}

const rtf = new Intl.RelativeTimeFormat(undefined, { numeric: 'auto' });
const UNITS = [['year', 31536e6], ['month', 2592e6], ['week', 6048e5], ['day', 864e5], ['hour', 36e5], ['minute', 6e4]];

export function exactTime(iso) {
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? String(iso) : d.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'medium' });
}

// relativeTime says "3 minutes ago" or "in 2 hours".
export function relativeTime(iso, now = Date.now()) {
  const t = Date.parse(iso);
  if (Number.isNaN(t)) return String(iso || '');
  const diff = t - now;
  for (const [unit, ms] of UNITS) {
    if (Math.abs(diff) >= ms) return rtf.format(Math.round(diff / ms), unit);
  }
  return Math.abs(diff) < 45e3 ? 'just now' : rtf.format(Math.round(diff / 6e4), 'minute');
}

// timeEl is a relative time with the exact time on hover; refreshTimes
// keeps the words current.
export function timeEl(iso, className) {
  if (!iso) return el('span', { className, text: 'never' });
  return el('time', { className, datetime: iso, title: exactTime(iso), text: relativeTime(iso) });
}

export function refreshTimes(root = document) {
  for (const t of root.querySelectorAll('time[datetime]')) t.textContent = relativeTime(t.getAttribute('datetime'));
}

const COLOR_RE = /^#[0-9A-Fa-f]{6}$/;

export function swatch(color) {
  if (!color || !COLOR_RE.test(color)) return null;
  return el('span', { className: 'swatch', 'aria-hidden': 'true', dataset: { color } });
}

// paintSwatches sets swatch colours through the CSSOM, which the
// style-src 'self' policy allows (inline style attributes it does not).
export function paintSwatches(root) {
  for (const s of root.querySelectorAll('.swatch[data-color]')) s.style.backgroundColor = s.dataset.color;
}

// confirmed asks before a destructive action.
export function confirmed(question) {
  return window.confirm(question);
}

// copyButton copies text to the clipboard and says so for a moment.
export function copyButton(text, label, className = 'copy') {
  return button(`${className} secondary small`, 'Copy', label, { copy: text });
}

export async function copyFrom(btn) {
  const text = btn.dataset.copy || '';
  let ok = false;
  try {
    await navigator.clipboard.writeText(text);
    ok = true;
  } catch {
    // No clipboard access (plain http, a denied permission): select a
    // hidden textarea's text and use the older command.
    const ta = el('textarea', { className: 'visually-hidden', readonly: true });
    ta.value = text;
    document.body.append(ta);
    ta.select();
    try {
      ok = document.execCommand('copy');
    } catch {
      ok = false;
    }
    ta.remove();
  }
  btn.dataset.copied = ok ? 'true' : 'false';
  btn.textContent = ok ? 'Copied' : 'Copy failed';
  setTimeout(() => {
    btn.textContent = 'Copy';
    delete btn.dataset.copied;
  }, 1500);
}

// syncChildren makes nodes the children of parent, in order, moving as
// little as it can: an unchanged node keeps its place, its form's contents
// and the focus.
export function syncChildren(parent, nodes) {
  const keep = new Set(nodes);
  for (const child of [...parent.children]) if (!keep.has(child)) child.remove();
  let cursor = parent.firstElementChild;
  for (const node of nodes) {
    if (node === cursor) cursor = cursor.nextElementSibling;
    else parent.insertBefore(node, cursor);
  }
}
