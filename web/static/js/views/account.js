// Account: who you are, change password (local accounts), linked sign-in
// identities, notifications in this browser, quiet hours (quiet.js), and
// sign out everywhere.
import { $, el, timeEl, confirmed } from '../dom.js';
import { mountNotifications } from '../notifications.js';
import { fieldErrorHandler } from '../fielderrors.js';
import { QuietCard } from '../quiet.js';

export class AccountView {
  constructor(ctx) {
    this.ctx = ctx;
    this.title = 'Account';
    this.section = $('view-account');
    this.mounted = false;
    this.quiet = new QuietCard(ctx);
    $('password-form').addEventListener('submit', (ev) => this.changePassword(ev));
    $('signout-all').addEventListener('click', () => this.signoutAll());
  }

  async load(seq) {
    const [data] = await Promise.all([this.ctx.api('GET', '/v1/account'), this.quiet.load(seq)]);
    if (this.ctx.router.stale(seq)) return;
    const u = data.user || {};
    $('account-email').textContent = u.email || '';
    $('password-username').value = u.email || '';
    $('account-name').textContent = u.name || '—';
    $('account-plan').textContent = u.plan || '';
    $('account-role').textContent = u.is_admin ? 'Administrator' : 'User';
    const local = data.has_password === true;
    $('password-none').hidden = local;
    for (const n of $('password-form').querySelectorAll('.field, #password-submit')) n.hidden = !local;
    $('password-done').hidden = true;
    const ids = Array.isArray(data.identities) ? data.identities : [];
    $('identities').replaceChildren(...ids.map((i) => el('li', { className: 'identity', dataset: { provider: i.provider } },
      el('strong', { text: i.provider }), i.email ? ` · ${i.email}` : '', ' · linked ', timeEl(i.created_at))));
    $('identities-empty').hidden = ids.length > 0;
    if (!this.mounted) {
      this.mounted = true;
      mountNotifications($('notifications-root'));
    }
  }

  changePassword(ev) {
    ev.preventDefault();
    const current = $('password-current').value;
    const next = $('password-new').value;
    this.ctx.router.change(async () => {
      await this.ctx.api('POST', '/v1/account/password', { current_password: current, new_password: next });
      $('password-current').value = '';
      $('password-new').value = '';
      $('password-done').hidden = false;
    }, fieldErrorHandler($('password-form'), [
      // Said beside the field: "This is not your current password."
      { key: 'current_password', input: $('password-current'), name: 'This' },
      { key: 'new_password', input: $('password-new'), name: 'The new password' },
    ]));
  }

  signoutAll() {
    if (!confirmed('Sign out every browser and app signed in to your account, this one included?')) return;
    const { api, router, session } = this.ctx;
    router.run(async () => {
      await api('POST', '/v1/auth/logout-all');
      // The session cookie is dead now; clear it and go to sign-in.
      await api('POST', '/auth/logout', undefined, { public: true }).catch(() => {});
      session.set(null);
      router.go('#/signin');
    });
  }
}
