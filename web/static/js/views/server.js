// Server (administrators only): version, uptime, queues and push outcomes,
// the figures /metrics exports, and which push providers are configured.
import { $, el, exactTime } from '../dom.js';

function duration(seconds) {
  const d = Math.floor(seconds / 86400);
  const h = Math.floor((seconds % 86400) / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  if (d) return `${d} d ${h} h`;
  if (h) return `${h} h ${m} min`;
  return m ? `${m} min` : 'less than a minute';
}

function facts(dl, pairs) {
  dl.replaceChildren(...pairs.flatMap(([k, v, key]) => [el('dt', { text: k }), el('dd', { dataset: { fact: key }, text: String(v) })]));
}

export class ServerView {
  constructor(ctx) {
    this.ctx = ctx;
    this.title = 'Server';
    this.admin = true;
    this.section = $('view-server');
  }

  async load(seq) {
    const s = await this.ctx.api('GET', '/v1/admin/server');
    if (this.ctx.router.stale(seq)) return;
    const outcomes = s.delivery_outcomes || {};
    facts($('server-facts'), [
      ['Version', s.version || 'unknown', 'version'],
      ['Up for', `${duration(s.uptime_seconds || 0)} (since ${exactTime(s.started_at)})`, 'uptime'],
      ['Users', s.users, 'users'],
      ['Callbacks waiting', s.callback_queue_depth, 'queue'],
      ['Callbacks dead-lettered', s.dead_lettered_deliveries, 'dead'],
      ['Callbacks since start', `${outcomes.delivered || 0} delivered · ${outcomes.retry || 0} retried · ${outcomes.dead_lettered || 0} gave up`, 'outcomes'],
    ]);
    const p = s.push || {};
    const yes = (b, how) => (b ? 'configured' : `not configured (${how})`);
    facts($('server-push'), [
      ['APNs (iOS)', yes(p.apns, '[push.apns] key_file'), 'apns'],
      ['FCM (Android)', yes(p.fcm, '[push.fcm] credentials_file'), 'fcm'],
      ['Web Push (browsers)', p.webpush ? (p.webpush_subject ? 'configured' : 'on, without [push.webpush] subject') : 'off', 'webpush'],
    ]);
    const rows = Array.isArray(s.push_outcomes) ? s.push_outcomes : [];
    $('server-pushes').tBodies[0].replaceChildren(...rows.map((r) => el('tr', {},
      el('td', { text: r.platform }), el('td', { text: r.outcome }), el('td', { text: String(r.count) }))));
    $('server-pushes-empty').hidden = rows.length > 0;
    $('server-pushes').closest('.table-wrap').hidden = rows.length === 0;
  }
}
