// Herald admin UI: native ES modules, no build step. This module wires the
// session, the router, the live stream and the views; each view module
// owns its own state.
import { api, ApiError } from './api.js';
import { $, refreshTimes } from './dom.js';
import { Router } from './router.js';
import { Stream } from './stream.js';
import { initTheme } from './theme.js';
import { initMenu } from './menu.js';
import { mountNotificationsHint } from './notifications.js';
import { SigninView } from './views/signin.js';
import { ChannelsView } from './views/channels.js';
import { MessagesView } from './views/messages.js';
import { KeysView } from './views/keys.js';
import { DevicesView } from './views/devices.js';
import { FoldersView } from './views/folders.js';
import { AccountView } from './views/account.js';
import { UsersView } from './views/users.js';
import { ServerView } from './views/server.js';

const session = {
  user: null,
  // set signs a user in (or out, with null) and shows what they may reach.
  set(user) {
    this.user = user;
    $('nav').hidden = !user;
    $('nav-toggle').hidden = !user;
    $('whoami').textContent = user ? user.email : '';
    $('whoami').title = user && user.name ? user.name : '';
    for (const li of document.querySelectorAll('#nav .admin-only')) li.hidden = !(user && user.is_admin);
    if (user) stream.open();
    else stream.close();
  },
};

const views = {};
const router = new Router(views, session, { defaultView: 'channels', onSessionLost: () => session.set(null) });
const stream = new Stream(() => {
  const v = views[router.current];
  if (session.user && v && v.live) v.live();
});
const ctx = { router, session, api };
Object.assign(views, {
  signin: new SigninView(ctx),
  channels: new ChannelsView(ctx),
  messages: new MessagesView(ctx),
  approvals: new MessagesView(ctx, { name: 'approvals', title: 'Approvals', approver: true }),
  keys: new KeysView(ctx),
  devices: new DevicesView(ctx),
  folders: new FoldersView(ctx),
  account: new AccountView(ctx),
  users: new UsersView(ctx),
  server: new ServerView(ctx),
});

function onNavClick(ev) {
  const link = ev.target.closest('a[href^="#/"]');
  if (!link || ev.button !== 0 || ev.metaKey || ev.ctrlKey || ev.shiftKey || ev.altKey) return;
  ev.preventDefault();
  router.go(link.getAttribute('href'));
}

function signout() {
  router.run(async () => {
    await api('POST', '/auth/logout', undefined, { public: true });
    session.set(null);
    router.go('#/signin');
  });
}

// signedIn is called by the sign-in view: the first view after sign-in
// carries the browser-notifications hint.
ctx.signedIn = (user) => {
  session.set(user);
  router.go('#/channels');
  mountNotificationsHint($('notifications-hint-root'));
};

initTheme($('theme-toggle'));
initMenu($('nav-toggle'), $('nav'));
$('nav').addEventListener('click', onNavClick);
$('signout').addEventListener('click', signout);
setInterval(() => refreshTimes(), 30000);

router.run(async () => {
  let failure = null;
  try {
    session.set(await api('GET', '/v1/auth/me', undefined, { public: true }));
  } catch (err) {
    session.set(null);
    if (!(err instanceof ApiError && err.status === 401)) failure = err;
  }
  router.route();
  if (failure) router.showError(failure.message);
  // Back from an identity provider, or a reload: the module decides whether
  // this is the first visit after a sign-in.
  if (session.user) mountNotificationsHint($('notifications-hint-root'));
});
