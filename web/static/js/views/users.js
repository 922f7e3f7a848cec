// Users (administrators only): create with a password, set the plan, grant
// or revoke the administrator role, reset a password, delete.
import { $, el, button, timeEl, confirmed } from '../dom.js';
import { enc, listAll } from '../api.js';
import { fieldErrorHandler } from '../fielderrors.js';

export class UsersView {
  constructor(ctx) {
    this.ctx = ctx;
    this.title = 'Users';
    this.admin = true;
    this.section = $('view-users');
    this.users = [];
    $('user-create').addEventListener('submit', (ev) => this.create(ev));
    $('users').tBodies[0].addEventListener('click', (ev) => this.click(ev));
    $('users').tBodies[0].addEventListener('change', (ev) => this.changePlan(ev));
  }

  async load(seq) {
    const data = await listAll(this.ctx.api, '/v1/admin/users', 'users');
    if (this.ctx.router.stale(seq)) return;
    this.render(data.users || []);
  }

  render(users) {
    this.users = users;
    const me = this.ctx.session.user ? this.ctx.session.user.id : '';
    $('users').tBodies[0].replaceChildren(...users.map((u) => {
      const plan = el('select', { className: 'user-plan', 'aria-label': `Plan of ${u.email}` },
        el('option', { value: 'free', text: 'free' }), el('option', { value: 'pro', text: 'pro' }));
      plan.value = u.plan;
      const self = u.id === me;
      return el('tr', { dataset: { userId: u.id, email: u.email, admin: u.is_admin ? 'true' : 'false' } },
        el('td', { className: 'user-email', text: u.email }),
        el('td', { className: 'user-name', text: u.name || '' }),
        el('td', { className: 'user-plan-cell' }, plan),
        el('td', { className: 'user-role', text: u.is_admin ? 'Administrator' : 'User' }),
        el('td', {}, timeEl(u.created_at)),
        el('td', { className: 'actions' },
          self && u.is_admin ? null : button('user-admin secondary', u.is_admin ? 'Revoke admin' : 'Make admin',
            `${u.is_admin ? 'Revoke the administrator role of' : 'Make administrator:'} ${u.email}`),
          button('user-password secondary', 'Reset password', `Reset the password of ${u.email}`),
          self ? null : button('user-delete danger', 'Delete', `Delete ${u.email}`)));
    }));
    $('users-empty').hidden = users.length > 0;
  }

  replace(u) {
    this.render(this.users.map((x) => (x.id === u.id ? u : x)));
  }

  create(ev) {
    ev.preventDefault();
    const body = { email: $('user-email').value.trim(), name: $('user-name').value.trim(), password: $('user-password').value,
      plan: $('user-plan').value, is_admin: $('user-admin').checked };
    this.ctx.router.change(async () => {
      const u = await this.ctx.api('POST', '/v1/admin/users', body);
      for (const id of ['user-email', 'user-name', 'user-password']) $(id).value = '';
      $('user-admin').checked = false;
      this.render([...this.users, u]);
    }, fieldErrorHandler($('user-create'), [
      { key: 'email', input: $('user-email'), name: 'Email' },
      { key: 'name', input: $('user-name'), name: 'Name' },
      { key: 'password', input: $('user-password'), name: 'Password' },
      { key: 'plan', input: $('user-plan'), name: 'Plan' },
    ]));
  }

  changePlan(ev) {
    const sel = ev.target.closest('select.user-plan');
    const row = sel && sel.closest('tr[data-user-id]');
    if (!row) return;
    const id = row.dataset.userId;
    this.ctx.router.change(async () => {
      try {
        this.replace(await this.ctx.api('PATCH', `/v1/admin/users/${enc(id)}`, { plan: sel.value }));
      } catch (err) {
        this.render(this.users);
        throw err;
      }
    });
  }

  // passwordForm opens a small form in the row: a new password, Save,
  // Cancel (or Escape).
  passwordForm(row, email, path) {
    const cell = row.querySelector('td.actions');
    const saved = [...cell.childNodes];
    const input = el('input', { type: 'password', className: 'user-password-input', autocomplete: 'new-password', minlength: '8',
      'aria-label': `New password for ${email} (at least 8 characters)` });
    const cancel = button('user-password-cancel secondary', 'Cancel');
    const form = el('form', { className: 'rename-form', novalidate: true }, input,
      el('button', { type: 'submit', className: 'user-password-save', text: 'Set password' }), cancel);
    const restore = () => {
      cell.replaceChildren(...saved);
      const b = cell.querySelector('button.user-password');
      if (b) b.focus();
    };
    cancel.addEventListener('click', restore);
    form.addEventListener('keydown', (ev) => {
      if (ev.key === 'Escape') restore();
    });
    form.addEventListener('submit', (ev) => {
      ev.preventDefault();
      this.ctx.router.change(async () => {
        await this.ctx.api('POST', `${path}/password`, { password: input.value });
        restore();
        row.dataset.passwordReset = 'true';
      });
    });
    cell.replaceChildren(form);
    input.focus();
  }

  click(ev) {
    const btn = ev.target.closest('button');
    const row = btn && btn.closest('tr[data-user-id]');
    if (!row) return;
    const { api, router } = this.ctx;
    const id = row.dataset.userId;
    const email = row.dataset.email;
    const path = `/v1/admin/users/${enc(id)}`;
    if (btn.classList.contains('user-admin')) {
      const grant = row.dataset.admin !== 'true';
      if (!confirmed(grant ? `Make ${email} an administrator? They can then manage every user.` : `Revoke the administrator role of ${email}?`)) return;
      router.change(async () => this.replace(await api('PATCH', path, { is_admin: grant })));
    } else if (btn.classList.contains('user-password')) {
      this.passwordForm(row, email, path);
    } else if (btn.classList.contains('user-delete')) {
      if (!confirmed(`Delete ${email} and everything they own (channels, messages, devices, keys)? This cannot be undone.`)) return;
      router.change(async () => {
        await api('DELETE', path);
        this.render(this.users.filter((u) => u.id !== id));
      });
    }
  }
}
