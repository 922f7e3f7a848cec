// Light or dark: the system's choice (prefers-color-scheme) unless the user
// picked one with the toggle, kept in localStorage. The choice is the
// data-theme attribute of <html>; style.css does the rest.
const KEY = 'herald-theme';

function stored() {
  try {
    const v = localStorage.getItem(KEY);
    return v === 'light' || v === 'dark' ? v : '';
  } catch {
    return '';
  }
}

function system() {
  return window.matchMedia && matchMedia('(prefers-color-scheme: dark)').matches ? 'dark' : 'light';
}

let choice = stored();

function apply(toggle) {
  const theme = choice || system();
  document.documentElement.dataset.theme = theme;
  if (toggle) {
    const next = theme === 'dark' ? 'light' : 'dark';
    toggle.setAttribute('aria-label', `Switch to ${next} mode`);
    toggle.title = `Switch to ${next} mode`;
    toggle.setAttribute('aria-pressed', theme === 'dark' ? 'true' : 'false');
    toggle.textContent = theme === 'dark' ? '☀' : '☾';
  }
}

export function initTheme(toggle) {
  apply(toggle);
  if (window.matchMedia) matchMedia('(prefers-color-scheme: dark)').addEventListener('change', () => apply(toggle));
  toggle.addEventListener('click', () => {
    choice = document.documentElement.dataset.theme === 'dark' ? 'light' : 'dark';
    try {
      localStorage.setItem(KEY, choice);
    } catch {
      // private mode: the choice lasts for this page only
    }
    apply(toggle);
  });
}
