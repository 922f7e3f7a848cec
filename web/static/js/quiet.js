// The account page's Quiet hours card: on or off, from and to (times of
// day), the time zone (the browser's until the user picks another) and
// what pushes do meanwhile (wait, or arrive silently). Saving sends every
// field; a refusal is shown beside the field it names.
import { $, el } from './dom.js';
import { fieldErrorHandler, clearFieldErrors } from './fielderrors.js';

const PATH = '/v1/account/quiet-hours';

const FIELDS = () => [
  { key: 'enabled', input: $('quiet-enabled'), name: 'Quiet hours on' },
  { key: 'start', input: $('quiet-start'), name: 'From' },
  { key: 'end', input: $('quiet-end'), name: 'To' },
  { key: 'time_zone', input: $('quiet-zone'), name: 'Time zone' },
  { key: 'mode', input: $('quiet-mode'), name: 'Pushes meanwhile' },
];

// browserZone is the IANA zone this browser runs in ("UTC" when unknown).
export function browserZone() {
  try {
    return Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
  } catch (_) {
    return 'UTC';
  }
}

// zoneNames lists the zones the browser knows, with UTC and the ones
// given (what is stored), sorted.
function zoneNames(...also) {
  let names = [];
  try {
    names = Intl.supportedValuesOf('timeZone');
  } catch (_) {
    names = [];
  }
  return [...new Set([...names, 'UTC', ...also.filter(Boolean)])].sort();
}

export class QuietCard {
  constructor(ctx) {
    this.ctx = ctx;
    this.form = $('quiet-form');
    this.form.addEventListener('submit', (ev) => this.save(ev));
    this.form.addEventListener('input', () => { $('quiet-done').hidden = true; });
  }

  async load(seq) {
    const q = await this.ctx.api('GET', PATH);
    if (this.ctx.router.stale(seq)) return;
    this.render(q);
  }

  render(q) {
    clearFieldErrors(this.form);
    // Never turned on and still the server's default zone: the browser's
    // zone is the likelier wish, and saving keeps it.
    const zone = !q.enabled && q.time_zone === 'UTC' ? browserZone() : q.time_zone;
    $('quiet-zone').replaceChildren(...zoneNames(zone, browserZone()).map((z) =>
      el('option', { value: z, text: z === browserZone() ? `${z} (this browser)` : z })));
    $('quiet-zone').value = zone;
    $('quiet-enabled').checked = q.enabled === true;
    $('quiet-start').value = q.start || '';
    $('quiet-end').value = q.end || '';
    $('quiet-mode').value = q.mode || 'hold';
    this.form.dataset.enabled = String(q.enabled === true);
  }

  save(ev) {
    ev.preventDefault();
    const body = {
      enabled: $('quiet-enabled').checked,
      start: $('quiet-start').value,
      end: $('quiet-end').value,
      time_zone: $('quiet-zone').value,
      mode: $('quiet-mode').value,
    };
    $('quiet-done').hidden = true;
    this.ctx.router.change(async () => {
      this.render(await this.ctx.api('PUT', PATH, body));
      $('quiet-done').hidden = false;
    }, fieldErrorHandler(this.form, FIELDS));
  }
}
