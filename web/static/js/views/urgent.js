// The channel's Urgent alerts card: whether the channel takes urgent
// messages, how often an alert repeats, when it gives up, and whom it
// escalates to (invited like approvers: people.js) after how long. Saving
// sends the whole policy, or null to turn urgent messages off.
import { $, el } from '../dom.js';
import { enc } from '../api.js';
import { fieldErrorHandler, clearFieldErrors } from '../fielderrors.js';
import { PeopleList } from '../people.js';

const FIELDS = () => [
  { key: 'urgent.repeat_seconds', input: $('urgent-repeat'), name: 'Repeat' },
  { key: 'urgent.expire_seconds', input: $('urgent-expire'), name: 'Give up after' },
  { key: 'urgent.escalate_after_seconds', input: $('urgent-escalate'), name: 'Escalate after' },
  { key: 'urgent.escalation', input: $('urgent-email'), name: 'Escalate to' },
];

// choose selects value in sel, adding it in seconds when it is none of the
// card's choices (set through the API).
function choose(sel, value) {
  if (![...sel.options].some((o) => o.value === String(value))) {
    sel.append(el('option', { value: String(value), text: `${value} seconds` }));
  }
  sel.value = String(value);
}

export class UrgentCard {
  // saved is called with the channel as the server answers it.
  constructor(ctx, saved) {
    this.ctx = ctx;
    this.saved = saved;
    this.channelId = '';
    this.form = $('urgent-editor');
    this.people = new PeopleList($('urgent-escalation'), $('urgent-email'), $('urgent-add'), this.form,
      { empty: 'Nobody: only the channel\'s owner is alerted.', onChange: () => this.ctx.router.clearError() });
    this.form.addEventListener('submit', (ev) => this.save(ev));
    $('urgent-cancel').addEventListener('click', () => this.close());
  }

  open(ch) {
    const { api, router } = this.ctx;
    router.run(async () => {
      const list = ch.urgent ? (await api('GET', `/v1/channels/${enc(ch.id)}/escalations`)).escalations || [] : [];
      const u = ch.urgent || {};
      this.channelId = ch.id;
      clearFieldErrors(this.form);
      $('urgent-title').textContent = `Urgent alerts of ${ch.name}`;
      $('urgent-allow').checked = !!ch.urgent;
      choose($('urgent-repeat'), u.repeat_seconds || 300);
      choose($('urgent-expire'), u.expire_seconds || 3600);
      choose($('urgent-escalate'), u.escalate_after_seconds || 300);
      this.people.reset(list);
      this.form.hidden = false;
      this.form.scrollIntoView({ block: 'nearest' });
      $('urgent-allow').focus();
    });
  }

  close() {
    const id = this.channelId;
    this.channelId = '';
    clearFieldErrors(this.form);
    this.form.hidden = true;
    const b = id && $('channels').querySelector(`tr[data-channel-id="${CSS.escape(id)}"] button.channel-urgent`);
    if (b) b.focus();
  }

  save(ev) {
    ev.preventDefault();
    clearFieldErrors(this.form);
    if (!this.people.add()) return;
    let urgent = null;
    if ($('urgent-allow').checked) {
      urgent = { repeat_seconds: Number($('urgent-repeat').value), expire_seconds: Number($('urgent-expire').value),
        escalation: this.people.entries };
      if (this.people.entries.length) urgent.escalate_after_seconds = Number($('urgent-escalate').value);
    }
    const id = this.channelId;
    this.ctx.router.change(async () => {
      this.saved(await this.ctx.api('PATCH', `/v1/channels/${enc(id)}`, { urgent }));
      this.close();
    }, fieldErrorHandler(this.form, FIELDS));
  }
}
