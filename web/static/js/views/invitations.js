// Invitations: the approval rules of other users' channels that name you,
// each to accept or decline (GET /v1/approvals/invitations). Until you
// accept, nothing of the channel is pushed to you or listed for you. The
// card sits above the Approvals list, which re-reads itself after an
// answer: accepting lists the channel's messages that name you.
import { $, el, button } from '../dom.js';
import { enc } from '../api.js';

const STATE_WORDS = { invited: 'asks you to approve', accepted: 'you approve', declined: 'declined' };

export class InvitationsCard {
  // onAnswer is called after an invitation was accepted or declined.
  constructor(ctx, onAnswer) {
    this.ctx = ctx;
    this.onAnswer = onAnswer;
    $('invitations-list').addEventListener('click', (ev) => this.click(ev));
  }

  async load() {
    const data = await this.ctx.api('GET', '/v1/approvals/invitations');
    this.render(Array.isArray(data.invitations) ? data.invitations : []);
  }

  render(list) {
    $('invitations').hidden = list.length === 0;
    $('invitations-list').replaceChildren(...list.map((inv) => this.item(inv)));
  }

  item(inv) {
    const owner = inv.owner || {};
    const from = owner.name ? `${owner.name} (${owner.email})` : String(owner.email || '');
    const name = String(inv.channel_name || '');
    const actions = [];
    if (inv.state !== 'accepted') actions.push(button('invitation-accept small', 'Accept', `Accept approving ${name}`));
    if (inv.state === 'invited') actions.push(button('invitation-decline secondary small', 'Decline', `Decline approving ${name}`));
    if (inv.state === 'accepted') actions.push(button('invitation-decline secondary small', 'Stop approving', `Stop approving ${name}`));
    return el('li', { className: 'invitation', dataset: { invitationId: inv.id, state: inv.state } },
      el('span', { className: 'invitation-what' },
        el('strong', { className: 'invitation-channel', text: name }), ' from ', el('span', { className: 'invitation-owner', text: from }), ' ',
        el('span', { className: 'badge invitation-state', text: STATE_WORDS[inv.state] || inv.state })),
      el('span', { className: 'button-row' }, ...actions));
  }

  click(ev) {
    const btn = ev.target.closest('button');
    const li = btn && btn.closest('li[data-invitation-id]');
    if (!li) return;
    const verb = btn.classList.contains('invitation-accept') ? 'accept' : 'decline';
    const id = li.dataset.invitationId;
    this.ctx.router.change(async () => {
      await this.ctx.api('POST', `/v1/approvals/invitations/${enc(id)}/${verb}`);
      await this.load();
      this.onAnswer();
      const again = $('invitations-list').querySelector(`li[data-invitation-id="${CSS.escape(id)}"] button`);
      if (again) again.focus();
    });
  }
}
