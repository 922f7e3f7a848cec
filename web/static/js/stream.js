// One EventSource on GET /v1/stream while signed in (same origin: the
// session cookie goes with it). Each message event calls onChange; the
// stream's own troubles are never shown: EventSource reconnects by itself
// after a network error, and a stream the server refused (an HTTP error
// ends an EventSource for good) is reopened here after a pause, backing off.
// body[data-stream] is "open" while connected.
const EVENTS = ['message.created', 'message.updated', 'message.deleted'];
const RETRY_MS = 5000;
const RETRY_MAX_MS = 60000;

export class Stream {
  constructor(onChange) {
    this.onChange = onChange;
    this.es = null;
    this.retry = null;
    this.retryMs = RETRY_MS;
  }

  open() {
    if (this.es || this.retry || typeof EventSource !== 'function') return;
    const es = new EventSource('/v1/stream');
    this.es = es;
    document.body.dataset.stream = 'connecting';
    es.addEventListener('open', () => {
      if (this.es !== es) return;
      this.retryMs = RETRY_MS;
      document.body.dataset.stream = 'open';
      // What was sent while (re)connecting came before the stream began.
      this.onChange();
    });
    for (const type of EVENTS) {
      es.addEventListener(type, () => {
        if (this.es === es) this.onChange();
      });
    }
    es.addEventListener('error', () => {
      if (this.es !== es) return;
      if (es.readyState !== EventSource.CLOSED) {
        document.body.dataset.stream = 'connecting';
        return;
      }
      es.close();
      this.es = null;
      document.body.dataset.stream = 'closed';
      const wait = this.retryMs;
      this.retryMs = Math.min(this.retryMs * 2, RETRY_MAX_MS);
      this.retry = setTimeout(() => {
        this.retry = null;
        this.open();
      }, wait);
    });
  }

  close() {
    clearTimeout(this.retry);
    this.retry = null;
    this.retryMs = RETRY_MS;
    if (this.es) {
      this.es.close();
      this.es = null;
    }
    document.body.dataset.stream = 'closed';
  }
}
