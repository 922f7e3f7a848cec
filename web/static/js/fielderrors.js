// Field errors: a refusal of the API ({"error", "message"}, the message
// naming the field by its key, like "approval.required_count must be ..."
// or `responses: field "reason" is required`) shown beside that field's
// input, in the words of its label, rather than in the page's banner.
import { ApiError } from './api.js';
import { el } from './dom.js';

let seq = 0;

// apiPath turns a message about a form's answer into the key.path form:
// `responses: field "reason" is required` → `responses.reason is required`.
function apiPath(message) {
  const m = /^responses: (?:field )?"((?:[^"\\]|\\.)*)"(.*)$/s.exec(message);
  return m ? `responses.${m[1].replace(/\\(.)/g, '$1')}${m[2]}` : message;
}

// phrase says message about the field called name: "name rest", or after
// "key: " only the rest (it names what was wrong already).
function phrase(name, rest) {
  let text = rest.startsWith(':') ? rest.slice(1).trim() : `${name} ${rest.trim()}`;
  text = text.charAt(0).toUpperCase() + text.slice(1);
  return /[.!?]$/.test(text) ? text : `${text}.`;
}

// matchField finds which of fields ({key, input, name}) message names, and
// what to say beside it; null when it names none of them.
export function matchField(message, fields) {
  const m = apiPath(String(message || ''));
  // The longest key first: "name" must not take "name_x".
  for (const f of [...fields].sort((a, b) => b.key.length - a.key.length)) {
    if (!f.input || !m.startsWith(f.key)) continue;
    const rest = m.slice(f.key.length);
    if (rest !== '' && rest[0] !== ' ' && rest[0] !== ':') continue;
    return { field: f, text: phrase(f.name, rest) };
  }
  return null;
}

// markField shows text beside input: aria-invalid, and an error line the
// input is described by. Typing in the input takes it away.
export function markField(input, text) {
  unmark(input);
  const id = `field-error-${++seq}`;
  const line = el('p', { className: 'field-error', id, text });
  input.dataset.describedBy = input.getAttribute('aria-describedby') || '';
  input.setAttribute('aria-invalid', 'true');
  input.setAttribute('aria-describedby', [input.dataset.describedBy, id].filter(Boolean).join(' '));
  const field = input.closest('.field') || input.parentElement;
  field.append(line);
  input.addEventListener('input', () => unmark(input), { once: true });
  input.addEventListener('change', () => unmark(input), { once: true });
  input.focus();
}

function unmark(input) {
  if (input.getAttribute('aria-invalid') !== 'true') return;
  for (const id of (input.getAttribute('aria-describedby') || '').split(' ')) {
    if (id.startsWith('field-error-')) document.getElementById(id)?.remove();
  }
  input.removeAttribute('aria-invalid');
  if (input.dataset.describedBy) input.setAttribute('aria-describedby', input.dataset.describedBy);
  else input.removeAttribute('aria-describedby');
  delete input.dataset.describedBy;
}

// clearFieldErrors takes every field error out of form.
export function clearFieldErrors(form) {
  for (const input of form.querySelectorAll('[aria-invalid="true"]')) unmark(input);
}

// fieldErrorHandler is a router error handler for form: an API refusal
// that names one of fields is shown beside it (true: handled); anything
// else goes to the page's banner as before.
export function fieldErrorHandler(form, fields) {
  clearFieldErrors(form);
  return (err) => {
    if (!(err instanceof ApiError) || err.status !== 400) return false;
    const hit = matchField(err.message, typeof fields === 'function' ? fields() : fields);
    if (!hit) return false;
    markField(hit.field.input, hit.text);
    return true;
  };
}
