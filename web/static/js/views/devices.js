// Devices: the phones and browsers that receive pushes. The one this
// browser registered is marked.
import { $, el, button, timeEl, confirmed } from '../dom.js';
import { enc, listAll } from '../api.js';
import { mountNotifications, thisBrowserDeviceId } from '../notifications.js';

export class DevicesView {
  constructor(ctx) {
    this.ctx = ctx;
    this.title = 'Devices';
    this.section = $('view-devices');
    $('devices').tBodies[0].addEventListener('click', (ev) => this.click(ev));
  }

  async load(seq) {
    if (!this.mounted) {
      this.mounted = true;
      mountNotifications($('notifications-control'));
    }
    const [data, mine] = await Promise.all([listAll(this.ctx.api, '/v1/devices', 'devices'), thisBrowserDeviceId()]);
    if (this.ctx.router.stale(seq)) return;
    const devices = data.devices || [];
    $('devices').tBodies[0].replaceChildren(...devices.map((d) => {
      const name = d.name || `${d.platform} device`;
      return el('tr', { dataset: { deviceId: d.id, name }, className: d.active === false ? 'is-inactive' : null },
        el('td', { className: 'device-name' }, d.name || '',
          d.id === mine ? el('span', { className: 'badge this-browser', text: 'this browser' }) : null),
        el('td', { className: 'device-platform', text: d.platform }),
        el('td', { className: 'device-created' }, timeEl(d.created_at)),
        el('td', { className: 'actions' }, button('device-delete danger', 'Remove', `Remove ${name}`)));
    }));
    $('devices-empty').hidden = devices.length > 0;
  }

  click(ev) {
    const btn = ev.target.closest('button.device-delete');
    const row = btn && btn.closest('tr[data-device-id]');
    if (!row) return;
    if (!confirmed(`Remove ${row.dataset.name}? It gets no more notifications until it registers again.`)) return;
    this.ctx.router.change(async () => {
      await this.ctx.api('DELETE', `/v1/devices/${enc(row.dataset.deviceId)}`);
      row.remove();
      $('devices-empty').hidden = $('devices').tBodies[0].rows.length > 0;
    });
  }
}
