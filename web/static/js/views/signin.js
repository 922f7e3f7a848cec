// Sign-in: the password form and the identity providers the server offers.
import { $, el } from '../dom.js';

export class SigninView {
  constructor(ctx) {
    this.ctx = ctx;
    this.title = 'Sign in';
    this.section = $('view-signin');
    this.providers = null; // GET /v1/auth/providers, read once
    $('signin-form').addEventListener('submit', (ev) => this.submit(ev));
  }

  async load(seq) {
    const { api, router } = this.ctx;
    if (!this.providers) {
      try {
        this.providers = await api('GET', '/v1/auth/providers', undefined, { public: true });
      } catch (err) {
        // Without the list, offer the password form and say why.
        if (!router.stale(seq)) router.showError(err.message);
      }
    }
    if (router.stale(seq)) return;
    const local = this.providers ? this.providers.local !== false : true;
    const list = this.providers && Array.isArray(this.providers.providers) ? this.providers.providers : [];
    $('signin-form').hidden = !local;
    $('providers').replaceChildren(...list.map((p) => el('a', {
      className: 'provider-login button-link', href: p.login_url, dataset: { provider: p.name }, text: `Sign in with ${p.name}`,
    })));
    $('providers').hidden = list.length === 0;
    $('signin-none').hidden = local || list.length > 0;
    // A new server has no user yet: say how to make the first.
    $('signin-setup').hidden = !(this.providers && this.providers.setup_needed === true);
  }

  submit(ev) {
    ev.preventDefault();
    const { api, router } = this.ctx;
    const email = $('signin-email').value.trim();
    const password = $('signin-password').value;
    router.run(async () => {
      const data = await api('POST', '/auth/local', { email, password }, { public: true });
      $('signin-password').value = '';
      this.ctx.signedIn(data.user || null);
    });
  }
}
