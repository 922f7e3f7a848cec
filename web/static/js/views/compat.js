// The "Use with ntfy and Gotify" card of a channel: the server URL, the
// channel's ntfy topic and Gotify application token (both its webhook
// token), the ntfy Android app's subscribe link with its QR code (drawn by
// the server, GET /v1/channels/:id/qr.png), and snippets to copy. Built
// from the channel as listed; nothing is asked of the server but the QR
// code.
import { $, el, copyButton, copyFrom } from '../dom.js';
import { enc } from '../api.js';

// serverURL is base_url, as the server put it in the webhook URL.
export function serverURL(ch) {
  const tail = `/v1/send/${ch.webhook_token}`;
  return ch.webhook_url.endsWith(tail) ? ch.webhook_url.slice(0, -tail.length) : location.origin;
}

// queryEscape encodes as Go's url.QueryEscape does, a space as %20 (the
// server's link in the QR code is the same string).
function queryEscape(s) {
  return encodeURIComponent(s).replace(/[!'()*]/g, (c) => '%' + c.charCodeAt(0).toString(16).toUpperCase());
}

// ntfyLink is the link that subscribes the ntfy Android app to topic
// (ntfy.SubscribeLink): ntfy://host[:port]/topic, https unless
// secure=false. The app reads one path segment: a server under a path
// has no link (null).
export function ntfyLink(base, topic, display) {
  const u = new URL(base);
  if (u.pathname.replace(/\/+$/, '') !== '') return null;
  const q = [];
  if (display) q.push(`display=${queryEscape(display)}`);
  if (u.protocol === 'http:') q.push('secure=false');
  return `ntfy://${u.host}/${topic}${q.length ? '?' + q.join('&') : ''}`;
}

// appriseURL is Apprise's ntfy URL for the topic: ntfys:// for https.
export function appriseURL(base, topic) {
  const u = new URL(base);
  const path = u.pathname.replace(/\/+$/, '');
  if (path !== '') return null;
  return `${u.protocol === 'https:' ? 'ntfys' : 'ntfy'}://${u.host}/${topic}`;
}

export function ntfyCurl(base, topic) {
  return `curl -H 'Title: Backup done' -H 'Tags: floppy_disk' \\\n  -d '42 GB in 3 minutes' \\\n  ${base}/${topic}`;
}

export function gotifyCurl(base, token) {
  return `curl -H 'X-Gotify-Key: ${token}' -H 'Content-Type: application/json' \\\n  -d '{"title":"Backup done","message":"42 GB in 3 minutes","priority":5}' \\\n  ${base}/message`;
}

function value(id, text, label) {
  return [el('dt', { text: label }), el('dd', {}, el('code', { id, text }), copyButton(text, `Copy the ${label.toLowerCase()}`))];
}

function snippet(id, title, text) {
  return el('div', { className: 'compat-snippet' }, el('h3', { text: title }),
    el('pre', {}, el('code', { id, text })), copyButton(text, `Copy the ${title}`));
}

export class CompatCard {
  constructor() {
    this.card = $('compat-card');
    this.channelId = null;
    $('compat-close').addEventListener('click', () => this.close());
    this.card.addEventListener('click', (ev) => {
      const b = ev.target.closest('button[data-copy]');
      if (b) copyFrom(b);
    });
  }

  open(ch) {
    this.channelId = ch.id;
    const base = serverURL(ch);
    const topic = ch.webhook_token;
    const link = ntfyLink(base, topic, ch.name);
    const apprise = appriseURL(base, topic);
    $('compat-title').textContent = `Use ${ch.name} with ntfy and Gotify`;
    $('compat-values').replaceChildren(
      ...value('compat-server', base, 'Server URL'),
      ...value('compat-topic', topic, 'ntfy topic'),
      ...value('compat-gotify-token', topic, 'Gotify app token'));
    const app = $('compat-app');
    if (link) {
      app.replaceChildren(
        el('img', { id: 'compat-qr', src: `/v1/channels/${enc(ch.id)}/qr.png?for=ntfy`, width: '256', height: '256',
          alt: `QR code: subscribe the ntfy app to ${ch.name}` }),
        el('p', { className: 'note' }, 'Scan with the phone\'s camera, or open this link on the phone: ',
          el('a', { id: 'compat-ntfy-link', href: link, text: link })),
        el('p', { className: 'note', text: 'The app then receives this channel\'s messages. In the app\'s settings, add a user for this server: your email and password, or an API key as the password.' }));
    } else {
      app.replaceChildren(el('p', { id: 'compat-no-link', className: 'note',
        text: 'The ntfy app\'s subscribe link names only a host, and this server\'s URL has a path: in the app, subscribe to the topic and enter the server URL by hand.' }));
    }
    $('compat-snippets').replaceChildren(
      snippet('compat-curl-ntfy', 'curl, ntfy style', ntfyCurl(base, topic)),
      snippet('compat-curl-gotify', 'curl, Gotify style', gotifyCurl(base, topic)),
      apprise ? snippet('compat-apprise', 'Apprise URL', apprise) : null);
    this.card.hidden = false;
    this.card.scrollIntoView({ block: 'nearest' });
    $('compat-close').focus();
  }

  // close hides the card; the channel's button gets the focus back.
  close() {
    const id = this.channelId;
    this.channelId = null;
    this.card.hidden = true;
    $('compat-values').replaceChildren();
    $('compat-app').replaceChildren();
    $('compat-snippets').replaceChildren();
    const b = id && $('channels').querySelector(`tr[data-channel-id="${CSS.escape(id)}"] button.channel-compat`);
    if (b) b.focus();
  }
}
