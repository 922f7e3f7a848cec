// The phone's menu. On a narrow screen (style.css) the header shows a Menu
// button instead of the links; it opens them, all of them, as a list, and
// going to a page, Escape or the button again closes it. On a wide screen
// the button is not shown and the links stay in the header.

// initMenu wires toggle to open and close nav; the state is
// nav.dataset.open and the toggle's aria-expanded.
export function initMenu(toggle, nav) {
  const set = (open) => {
    nav.dataset.open = open ? 'true' : 'false';
    toggle.setAttribute('aria-expanded', open ? 'true' : 'false');
  };
  set(false);
  toggle.addEventListener('click', () => set(nav.dataset.open !== 'true'));
  nav.addEventListener('click', (ev) => {
    if (ev.target.closest('a, button')) set(false);
  });
  document.addEventListener('keydown', (ev) => {
    if (ev.key !== 'Escape' || nav.dataset.open !== 'true') return;
    set(false);
    toggle.focus();
  });
  window.addEventListener('hashchange', () => set(false));
}
