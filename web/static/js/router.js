// Hash routing, the busy markers the page and its tests wait on
// (body[data-loading], body[data-view]), and the one error banner.
import { ApiError } from './api.js';
import { $ } from './dom.js';

export class Router {
  // views: name → view object with section (its <section>), title, load(seq)
  // and optionally admin (true: administrators only) and leave().
  constructor(views, session, { defaultView, onSessionLost }) {
    this.views = views;
    this.session = session;
    this.defaultView = defaultView;
    this.onSessionLost = onSessionLost;
    this.current = null;
    this.routedHash = null;
    this.seq = 0; // bumped on every navigation; stale loads are dropped
    this.busy = 0;
    window.addEventListener('hashchange', () => {
      if (location.hash !== this.routedHash) this.route();
    });
  }

  begin() {
    this.busy++;
    document.body.dataset.loading = 'true';
  }

  end() {
    this.busy = Math.max(0, this.busy - 1);
    if (this.busy === 0) {
      if (this.current) document.body.dataset.view = this.current;
      document.body.dataset.loading = 'false';
    }
  }

  // run marks the page busy while fn runs and reports its failure: to
  // handle first (true when it showed the error itself, as beside a form's
  // field), else in the banner.
  async run(fn, handle) {
    this.begin();
    try {
      await fn();
    } catch (err) {
      if (handle && !(err instanceof ApiError && err.sessionLost) && handle(err)) this.clearError();
      else this.fail(err);
    } finally {
      this.end();
    }
  }

  // action runs a change, then re-renders the current view (unless the user
  // has gone elsewhere meanwhile). handle is run's.
  action(fn, handle) {
    const view = this.current;
    const seq = this.seq;
    return this.run(async () => {
      await fn();
      this.clearError();
      if (seq === this.seq && view === this.current) await this.views[view].load(seq);
    }, handle);
  }

  // change runs a change whose answer the view renders itself: one round
  // trip, no reload. handle is run's.
  change(fn, handle) {
    return this.run(async () => {
      await fn();
      this.clearError();
    }, handle);
  }

  stale(seq) {
    return seq !== this.seq;
  }

  showError(message) {
    $('error').textContent = message || 'Something went wrong.';
  }

  clearError() {
    $('error').textContent = '';
  }

  fail(err) {
    if (err instanceof ApiError && err.sessionLost) {
      this.onSessionLost();
      this.go('#/signin');
      this.showError(err.message);
      return;
    }
    this.showError(err && err.message ? err.message : String(err));
  }

  go(hash) {
    if (location.hash !== hash) location.hash = hash;
    this.route();
  }

  allowed(name) {
    const v = this.views[name];
    if (!v) return false;
    if (name === 'signin') return !this.session.user;
    return !!this.session.user && (!v.admin || this.session.user.is_admin);
  }

  route() {
    const seq = ++this.seq;
    this.clearError();
    const m = /^#\/([a-z]+)/.exec(location.hash);
    let name = m ? m[1] : '';
    if (!this.session.user) {
      name = 'signin';
      if (location.hash !== '#/signin') history.replaceState(null, '', '#/signin');
    } else if (!this.allowed(name)) {
      if (this.views[name] && this.views[name].admin) this.showError('That page is for administrators.');
      name = this.defaultView;
      history.replaceState(null, '', '#/' + name);
    }
    this.routedHash = location.hash;
    if (this.current && this.current !== name && this.views[this.current].leave) this.views[this.current].leave();
    this.current = name;
    for (const [n, v] of Object.entries(this.views)) {
      v.section.hidden = n !== name;
      const link = $('nav-' + n);
      if (link) {
        if (n === name) link.setAttribute('aria-current', 'page');
        else link.removeAttribute('aria-current');
      }
    }
    document.title = `${this.views[name].title} · Herald`;
    const view = this.views[name];
    this.run(() => view.load(seq));
  }
}
