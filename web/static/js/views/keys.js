// API keys: create (the secret is shown once), list, revoke.
import { $, el, button, timeEl, confirmed, copyButton, copyFrom } from '../dom.js';
import { enc, listAll } from '../api.js';
import { fieldErrorHandler } from '../fielderrors.js';

export class KeysView {
  constructor(ctx) {
    this.ctx = ctx;
    this.title = 'API keys';
    this.section = $('view-keys');
    $('key-create').addEventListener('submit', (ev) => this.create(ev));
    $('keys').tBodies[0].addEventListener('click', (ev) => this.click(ev));
    $('key-created').addEventListener('click', (ev) => {
      const b = ev.target.closest('button[data-copy]');
      if (b) copyFrom(b);
    });
  }

  async load(seq) {
    this.hideCreated();
    const data = await listAll(this.ctx.api, '/v1/keys', 'keys');
    if (this.ctx.router.stale(seq)) return;
    const keys = data.keys || [];
    $('keys').tBodies[0].replaceChildren(...keys.map((k) => el('tr', { dataset: { keyId: k.id, name: k.name } },
      el('td', { className: 'key-name', text: k.name }),
      el('td', { className: 'key-prefix' }, el('code', { text: k.prefix ? `${k.prefix}…` : '' })),
      el('td', { className: 'key-created' }, timeEl(k.created_at)),
      el('td', { className: 'key-last-used' }, timeEl(k.last_used_at)),
      el('td', { className: 'actions' }, button('key-revoke danger', 'Revoke', `Revoke ${k.name}`)))));
    $('keys-empty').hidden = keys.length > 0;
  }

  hideCreated() {
    $('key-created').hidden = true;
    $('key-secret').textContent = '';
    const old = $('key-created').querySelector('button[data-copy]');
    if (old) old.remove();
  }

  create(ev) {
    ev.preventDefault();
    const name = $('key-name').value;
    let secret = '';
    this.ctx.router.action(async () => {
      const data = await this.ctx.api('POST', '/v1/keys', { name });
      $('key-name').value = '';
      secret = data.key || '';
    }, fieldErrorHandler($('key-create'), [{ key: 'name', input: $('key-name'), name: 'Name' }])).then(() => {
      if (!secret) return;
      $('key-secret').textContent = secret;
      $('key-secret').after(copyButton(secret, 'Copy the new API key'));
      $('key-created').hidden = false;
    });
  }

  click(ev) {
    const btn = ev.target.closest('button.key-revoke');
    const row = btn && btn.closest('tr[data-key-id]');
    if (!row) return;
    if (!confirmed(`Revoke the API key "${row.dataset.name}"? Scripts using it stop working at once.`)) return;
    this.ctx.router.change(async () => {
      await this.ctx.api('DELETE', `/v1/keys/${enc(row.dataset.keyId)}`);
      row.remove();
      $('keys-empty').hidden = $('keys').tBodies[0].rows.length > 0;
    });
  }
}
