// Inline rename: swaps a name cell's content for a small form that renames
// one item. kind ("channel" or "folder") prefixes the classes, and save(name)
// sends the trimmed name through router.change and re-renders the list from
// the answer. An error leaves the form open with what was typed;
// Escape or Cancel puts the cell back as it was, without a request. Focus
// returns to the row's Rename button.
import { el, button } from './dom.js';

export function startRename(router, cell, kind, current, save) {
  const open = cell.querySelector(`input.${kind}-rename-input`);
  if (open) {
    open.focus();
    return;
  }
  const tbody = cell.closest('tbody');
  const row = cell.closest('tr');
  const id = row ? row.getAttribute(`data-${kind}-id`) || '' : '';
  const focusRenameButton = () => {
    const again = tbody ? tbody.querySelector(`tr[data-${kind}-id="${CSS.escape(id)}"] button.${kind}-rename`) : null;
    if (again) again.focus();
  };
  const saved = [...cell.childNodes];
  const input = el('input', { type: 'text', className: `${kind}-rename-input`, autocomplete: 'off', 'aria-label': `New name for ${kind} ${current}` });
  input.value = current;
  const cancel = button(`${kind}-rename-cancel secondary`, 'Cancel');
  const form = el('form', { className: 'rename-form', novalidate: true },
    input, el('button', { type: 'submit', className: `${kind}-rename-save`, text: 'Save' }), cancel);
  let pending = false;

  function restore() {
    if (!cell.contains(form)) return;
    cell.replaceChildren(...saved);
    cell.classList.remove('is-editing');
    router.clearError();
    focusRenameButton();
  }

  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    if (pending) return;
    pending = true;
    const name = input.value.trim();
    router.change(async () => {
      try {
        await save(name);
      } catch (err) {
        if (input.isConnected) input.focus();
        throw err;
      }
    }).then(() => {
      pending = false;
      if (!input.isConnected && (!document.activeElement || document.activeElement === document.body)) focusRenameButton();
    });
  });
  form.addEventListener('keydown', (ev) => {
    if (ev.key !== 'Escape' || ev.isComposing) return;
    ev.preventDefault();
    restore();
  });
  cancel.addEventListener('click', restore);
  cell.classList.add('is-editing');
  cell.replaceChildren(form);
  input.focus();
  input.select();
}
