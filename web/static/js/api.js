// The API client: one fetch per call, the CSRF header on every change,
// errors as ApiError with the server's own message.

export class ApiError extends Error {
  constructor(status, code, message, sessionLost = false) {
    super(message);
    this.status = status;
    this.code = code;
    this.sessionLost = sessionLost;
  }
}

function cookie(name) {
  for (const part of document.cookie.split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0 || part.slice(0, eq).trim() !== name) continue;
    const raw = part.slice(eq + 1).trim();
    try {
      return decodeURIComponent(raw);
    } catch {
      return raw;
    }
  }
  return '';
}

// api sends one request and returns the decoded JSON answer. opts.public
// marks calls where a 401 is not a lost session (sign-in, the first
// /v1/auth/me).
export async function api(method, path, body, opts = {}) {
  const init = { method, credentials: 'same-origin', headers: { Accept: 'application/json' } };
  if (method !== 'GET' && method !== 'HEAD') init.headers['X-CSRF-Token'] = cookie('herald_csrf');
  if (body !== undefined) {
    init.headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  let res;
  try {
    res = await fetch(path, init);
  } catch {
    throw new ApiError(0, 'network_error', 'Could not reach the server. Check your connection and try again.');
  }
  const text = await res.text();
  let data = null;
  try {
    data = text ? JSON.parse(text) : null;
  } catch {
    data = null;
  }
  if (!res.ok) {
    const message = data && typeof data.message === 'string' && data.message ? data.message : `Request failed (HTTP ${res.status}).`;
    throw new ApiError(res.status, data && data.error ? data.error : `http_${res.status}`, message, res.status === 401 && !opts.public);
  }
  return data || {};
}

export const enc = encodeURIComponent;

// transient reports whether a failed call is worth retrying quietly later.
export function transient(err) {
  return err instanceof ApiError && (err.status === 0 || err.status === 429 || err.status >= 500);
}

// listAll reads every page of a list that pages by cursor ({key: [...]},
// with next_cursor while more follow) through call (api, or a view's
// ctx.api) and answers as one page would: {key: every row, in order}.
export async function listAll(call, path, key) {
  const rows = [];
  let cursor = '';
  for (;;) {
    const sep = path.includes('?') ? '&' : '?';
    const data = await call('GET', cursor ? `${path}${sep}cursor=${encodeURIComponent(cursor)}` : path);
    rows.push(...(data[key] || []));
    if (!data.next_cursor) return { [key]: rows };
    cursor = data.next_cursor;
  }
}
