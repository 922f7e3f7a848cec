// Channels: create, rename, pin and reorder pins, mute, a new webhook URL,
// delete, copy the webhook URL or a curl example, the approval rule editor
// (approvers by email) and the ntfy and Gotify card (compat.js). State is the lists as last loaded; each
// change renders from its answer.
import { $, el, button, timeEl, swatch, paintSwatches, confirmed, copyButton, copyFrom, exactTime } from '../dom.js';
import { enc, listAll } from '../api.js';
import { startRename } from '../rename.js';
import { fieldErrorHandler, clearFieldErrors } from '../fielderrors.js';
import { PeopleList } from '../people.js';
import { CompatCard } from './compat.js';
import { UrgentCard } from './urgent.js';

const FOREVER = '9999-12-31T00:00:00.000Z'; // "until turned off"
const UNSET_COLOR = '#8c959f'; // what the picker shows before a colour is picked
const MUTES = [['3600', 'for 1 hour'], ['28800', 'for 8 hours'], ['86400', 'for 1 day'], ['forever', 'until turned off']];

function mutedUntil(ch) {
  const t = ch.muted_until ? Date.parse(ch.muted_until) : NaN;
  return !Number.isNaN(t) && t > Date.now() ? t : 0;
}

// The API's keys of the forms' fields, and the inputs they name.
const CREATE_FIELDS = () => [
  { key: 'name', input: $('channel-name'), name: 'Name' },
  { key: 'color', input: $('channel-color'), name: 'Colour' },
];
const RULE_FIELDS = () => [
  { key: 'approval.approvers', input: $('approval-email'), name: 'Approvers' },
  { key: 'approval.required_count', input: $('approval-required'), name: 'Approvals needed' },
  { key: 'approval.window_seconds', input: $('approval-window'), name: 'Decide within' },
];

// curlExample is a command that sends to url, one option a line (as a
// shell reads it, and as it wraps on a phone).
export function curlExample(url) {
  return `curl -H 'Content-Type: application/json' \\\n  -d '{"title":"Backup done","body":"**42 GB** in 3 min"}' \\\n  ${url}`;
}

export class ChannelsView {
  constructor(ctx) {
    this.ctx = ctx;
    this.title = 'Channels';
    this.section = $('view-channels');
    this.channels = [];
    this.pins = []; // [{channel_id, position}]
    this.folders = [];
    this.editing = null; // the approval editor: {id, name, required, window, hasRule}
    this.compat = new CompatCard();
    this.urgent = new UrgentCard(ctx, (ch) => this.replace(ch));
    $('channel-create').addEventListener('submit', (ev) => this.create(ev));
    $('channel-color').addEventListener('input', () => this.pickColor(true));
    $('channel-color-clear').addEventListener('click', () => {
      this.pickColor(false);
      $('channel-color').focus();
    });
    $('channels').tBodies[0].addEventListener('click', (ev) => this.click(ev));
    $('channels').tBodies[0].addEventListener('change', (ev) => this.changeSelect(ev));
    const ed = $('approval-editor');
    ed.addEventListener('submit', (ev) => this.saveRule(ev));
    this.approvers = new PeopleList($('approval-approvers'), $('approval-email'), $('approval-add'), ed,
      { empty: 'No approvers yet.', onChange: () => { this.ctx.router.clearError(); this.renderRequired(); } });
    $('approval-cancel').addEventListener('click', () => this.closeEditor());
    $('approval-remove').addEventListener('click', () => this.removeRule());
  }

  async load(seq) {
    const { api, router } = this.ctx;
    const [c, p, f] = await Promise.all([listAll(api, '/v1/channels', 'channels'), listAll(api, '/v1/pins', 'pins'), listAll(api, '/v1/folders', 'folders')]);
    if (router.stale(seq)) return;
    this.channels = c.channels || [];
    this.pins = p.pins || [];
    this.folders = f.folders || [];
    this.render();
  }

  leave() {
    this.closeEditor();
    this.urgent.close();
    if (this.compat.channelId) this.compat.close();
  }

  pinnedIds() {
    const byId = new Set(this.channels.map((c) => c.id));
    return [...this.pins].sort((a, b) => a.position - b.position).map((p) => p.channel_id)
      .filter((id, i, all) => byId.has(id) && all.indexOf(id) === i);
  }

  render() {
    const select = $('channel-folder');
    const keep = select.value;
    select.replaceChildren(el('option', { value: '', text: 'No folder' }), ...this.folders.map((f) => el('option', { value: f.id, text: f.name })));
    select.value = this.folders.some((f) => f.id === keep) ? keep : '';

    const folderName = new Map(this.folders.map((f) => [f.id, f.name]));
    const byId = new Map(this.channels.map((c) => [c.id, c]));
    const pinned = this.pinnedIds();
    const pinnedSet = new Set(pinned);
    const ordered = [...pinned.map((id) => byId.get(id)), ...this.channels.filter((c) => !pinnedSet.has(c.id))];
    const rows = ordered.map((ch) => this.row(ch, pinned.indexOf(ch.id), pinned.length, folderName.get(ch.folder_id) || ''));
    $('channels').tBodies[0].replaceChildren(...rows);
    paintSwatches($('channels'));
    $('channels-empty').hidden = ordered.length > 0;
    $('channels-empty').querySelector('code').textContent = curlExample(`${location.origin}/v1/send/<token>`);
  }

  row(ch, pinIndex, pinCount, folder) {
    const isPinned = pinIndex >= 0;
    const until = mutedUntil(ch);
    const forever = until && new Date(until).getUTCFullYear() >= 9999;
    const name = ch.name;
    const mute = until
      ? button('channel-unmute', 'Unmute', `Unmute ${name}`)
      : el('select', { className: 'channel-mute', 'aria-label': `Mute ${name}` },
        el('option', { value: '', text: 'Mute…' }), ...MUTES.map(([v, t]) => el('option', { value: v, text: `Mute ${t}` })));
    const rule = ch.approval;
    return el('tr', { className: [isPinned && 'is-pinned', until && 'is-muted'].filter(Boolean).join(' ') || null,
      dataset: { channelId: ch.id, pinned: isPinned ? 'true' : 'false', muted: until ? 'true' : 'false' } },
    el('td', { className: 'channel-name' }, swatch(ch.color), name,
      until ? el('span', { className: 'badge muted-badge', title: forever ? 'Muted until turned off' : `Muted until ${exactTime(ch.muted_until)}`,
        text: forever ? 'muted' : 'muted ' + timeEl(ch.muted_until).textContent }) : null,
      rule ? el('span', { className: 'badge rule-badge', text: `needs ${rule.required_count} of ${rule.approvers.length}` }) : null,
      ch.urgent ? el('span', { className: 'badge urgent-badge', title: 'Takes urgent messages', text: 'urgent' }) : null),
    el('td', { className: 'channel-webhook' },
      el('div', { className: 'webhook' }, el('code', { className: 'webhook-url', text: ch.webhook_url }),
        copyButton(ch.webhook_url, `Copy the webhook URL of ${name}`, 'copy copy-url')),
      el('details', { className: 'channel-curl' }, el('summary', { text: 'curl example' }),
        // The URL may break anywhere, rather than leave its line's indent alone.
        el('pre', {}, el('code', {}, curlExample(''), el('span', { className: 'curl-url', text: ch.webhook_url }))),
        copyButton(curlExample(ch.webhook_url), `Copy the curl example of ${name}`, 'copy copy-curl'))),
    el('td', { className: 'channel-folder', text: folder }),
    el('td', { className: 'actions' },
      button('channel-rename', 'Rename', `Rename ${name}`),
      button('channel-pin', isPinned ? 'Unpin' : 'Pin', `${isPinned ? 'Unpin' : 'Pin'} ${name}`),
      isPinned ? button('channel-up secondary small', '↑', `Move ${name} up`, { move: '-1' }) : null,
      isPinned ? button('channel-down secondary small', '↓', `Move ${name} down`, { move: '1' }) : null,
      mute,
      button('channel-approval secondary', rule ? 'Approval rule' : 'Add approval', `Approval rule of ${name}`),
      button('channel-urgent secondary', 'Urgent alerts', `Urgent alerts of ${name}`),
      button('channel-compat secondary', 'ntfy / Gotify', `Use ${name} with ntfy and Gotify`),
      button('channel-regenerate secondary', 'New URL', `New webhook URL for ${name}`),
      button('channel-delete danger', 'Delete', `Delete ${name}`)));
  }

  replace(ch) {
    this.channels = this.channels.map((c) => (c.id === ch.id ? ch : c));
    this.render();
    if (this.compat.channelId === ch.id) this.compat.open(ch); // a new token, a new name
  }

  // pickColor marks the colour picked (it is sent) or not (the channel has
  // none): a colour input always holds some colour.
  pickColor(chosen) {
    const box = $('channel-color').closest('.color-field');
    box.dataset.chosen = chosen ? 'true' : 'false';
    if (!chosen) $('channel-color').value = UNSET_COLOR;
    $('channel-color-value').textContent = chosen ? $('channel-color').value.toUpperCase() : 'No colour';
    $('channel-color-clear').hidden = !chosen;
  }

  create(ev) {
    ev.preventDefault();
    const { api, router } = this.ctx;
    const name = $('channel-name').value;
    const picked = $('channel-color').closest('.color-field').dataset.chosen === 'true';
    const color = picked ? $('channel-color').value.toUpperCase() : '';
    const folderId = $('channel-folder').value;
    router.change(async () => {
      const body = { name };
      if (color) body.color = color;
      let ch = await api('POST', '/v1/channels', body);
      this.channels = [...this.channels, ch];
      $('channel-name').value = '';
      this.pickColor(false);
      // POST /v1/channels takes no folder_id: the folder is a PATCH after.
      try {
        if (folderId) ch = await api('PATCH', `/v1/channels/${enc(ch.id)}`, { folder_id: folderId });
      } finally {
        this.replace(ch);
      }
      $('channel-folder').value = '';
    }, fieldErrorHandler($('channel-create'), CREATE_FIELDS));
  }

  click(ev) {
    const btn = ev.target.closest('button');
    const row = btn && btn.closest('tr[data-channel-id]');
    if (!row) return;
    const id = row.dataset.channelId;
    const ch = this.channels.find((c) => c.id === id);
    if (!ch) return;
    const { api, router } = this.ctx;
    const path = `/v1/channels/${enc(id)}`;
    const cl = btn.classList;
    if (btn.dataset.copy !== undefined) {
      copyFrom(btn);
    } else if (cl.contains('channel-rename')) {
      startRename(router, row.querySelector('td.channel-name'), 'channel', ch.name, async (name) => this.replace(await api('PATCH', path, { name })));
    } else if (cl.contains('channel-pin')) {
      router.change(async () => {
        if (row.dataset.pinned === 'true') {
          await api('DELETE', `/v1/pins?channel_id=${enc(id)}`);
          this.pins = this.pins.filter((p) => p.channel_id !== id);
        } else {
          this.pins = [...this.pins, await api('POST', '/v1/pins', { channel_id: id })];
        }
        this.render();
      });
    } else if (btn.dataset.move) {
      const ids = this.pinnedIds();
      const from = ids.indexOf(id);
      const to = from + Number(btn.dataset.move);
      if (from < 0 || to < 0 || to >= ids.length) return;
      [ids[from], ids[to]] = [ids[to], ids[from]];
      router.change(async () => {
        this.pins = (await api('POST', '/v1/pins/reorder', { channel_ids: ids })).pins || [];
        this.render();
        const again = $('channels').querySelector(`tr[data-channel-id="${CSS.escape(id)}"] button[data-move="${btn.dataset.move}"]`);
        (again || $('channels').querySelector(`tr[data-channel-id="${CSS.escape(id)}"] button.channel-pin`)).focus();
      });
    } else if (cl.contains('channel-unmute')) {
      router.change(async () => this.replace(await api('PATCH', path, { muted_until: null })));
    } else if (cl.contains('channel-regenerate')) {
      if (!confirmed(`Make a new webhook URL for "${ch.name}"? The current URL stops working at once.`)) return;
      router.change(async () => this.replace(await api('POST', `${path}/regenerate`)));
    } else if (cl.contains('channel-delete')) {
      if (!confirmed(`Delete the channel "${ch.name}" and all its messages? This cannot be undone.`)) return;
      router.change(async () => {
        await api('DELETE', path);
        this.channels = this.channels.filter((c) => c.id !== id);
        this.pins = this.pins.filter((p) => p.channel_id !== id);
        if (this.editing && this.editing.id === id) this.closeEditor();
        if (this.urgent.channelId === id) this.urgent.close();
        if (this.compat.channelId === id) this.compat.close();
        this.render();
      });
    } else if (cl.contains('channel-approval')) {
      this.openEditor(ch);
    } else if (cl.contains('channel-urgent')) {
      this.urgent.open(ch);
    } else if (cl.contains('channel-compat')) {
      this.compat.open(ch);
    }
  }

  changeSelect(ev) {
    const sel = ev.target.closest('select.channel-mute');
    const row = sel && sel.closest('tr[data-channel-id]');
    if (!row || !sel.value) return;
    const until = sel.value === 'forever' ? FOREVER : new Date(Date.now() + Number(sel.value) * 1000).toISOString();
    const id = row.dataset.channelId;
    this.ctx.router.change(async () => {
      this.replace(await this.ctx.api('PATCH', `/v1/channels/${enc(id)}`, { muted_until: until }));
      const again = $('channels').querySelector(`tr[data-channel-id="${CSS.escape(id)}"] button.channel-unmute`);
      if (again) again.focus();
    });
  }

  // ---- approval rule editor ----
  openEditor(ch) {
    const { api, router } = this.ctx;
    router.run(async () => {
      // The rule holds the entries as typed; where each invitation stands
      // (and, once accepted, who it is) comes from the server.
      const approvers = ch.approval ? (await api('GET', `/v1/channels/${enc(ch.id)}/approvers`)).approvers || [] : [];
      this.editing = {
        id: ch.id,
        name: ch.name,
        required: ch.approval ? ch.approval.required_count : 1,
        window: ch.approval ? ch.approval.window_seconds : 3600,
        hasRule: !!ch.approval,
      };
      clearFieldErrors($('approval-editor'));
      this.approvers.reset(approvers);
      this.renderEditor();
      $('approval-editor').hidden = false;
      $('approval-editor').scrollIntoView({ block: 'nearest' });
      $('approval-email').focus();
    });
  }

  renderEditor() {
    const e = this.editing;
    $('approval-title').textContent = `Approval rule of ${e.name}`;
    $('approval-required').value = String(e.required);
    this.renderRequired();
    const win = $('approval-window');
    if (![...win.options].some((o) => o.value === String(e.window))) {
      win.append(el('option', { value: String(e.window), text: `${e.window} seconds` }));
    }
    win.value = String(e.window);
    $('approval-remove').hidden = !e.hasRule;
  }

  // renderRequired bounds "Approvals needed" by the approvers listed.
  renderRequired() {
    const n = Math.max(1, this.approvers.entries.length);
    const input = $('approval-required');
    input.max = String(n);
    input.value = String(Math.min(Number(input.value) || 1, n));
  }

  saveRule(ev) {
    ev.preventDefault();
    const e = this.editing;
    clearFieldErrors($('approval-editor'));
    if (!this.approvers.add()) return;
    const rule = { approvers: this.approvers.entries, required_count: Number($('approval-required').value), window_seconds: Number($('approval-window').value) };
    this.ctx.router.change(async () => {
      this.replace(await this.ctx.api('PATCH', `/v1/channels/${enc(e.id)}`, { approval: rule }));
      this.closeEditor(e.id);
    }, fieldErrorHandler($('approval-editor'), RULE_FIELDS));
  }

  removeRule() {
    const e = this.editing;
    if (!confirmed(`Remove the approval rule of "${e.name}"? New messages then need no approval.`)) return;
    this.ctx.router.change(async () => {
      this.replace(await this.ctx.api('PATCH', `/v1/channels/${enc(e.id)}`, { approval: null }));
      this.closeEditor(e.id);
    });
  }

  closeEditor(focusId) {
    const id = focusId || (this.editing && this.editing.id);
    this.editing = null;
    clearFieldErrors($('approval-editor'));
    $('approval-editor').hidden = true;
    $('approval-email').value = '';
    const b = id && $('channels').querySelector(`tr[data-channel-id="${CSS.escape(id)}"] button.channel-approval`);
    if (b) b.focus();
  }
}
