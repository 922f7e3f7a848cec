// Message bodies as Markdown, safely: marked parses with raw HTML turned
// into text, links only to http(s) and mailto, images shown as their alt
// text (a remote image would tell its server who read the message and
// when); DOMPurify then keeps only the tags below, as a second line. The
// result is a DocumentFragment, never an HTML string put into the page.
import { Marked } from '../vendor/marked.esm.js';
import DOMPurify from '../vendor/purify.es.mjs';

const SAFE_URL = /^(?:https?:|mailto:)/i;

const escape = (s) => String(s).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]);

const marked = new Marked({
  gfm: true,
  breaks: true,
  async: false,
  renderer: {
    html({ text }) {
      return escape(text);
    },
    image({ text }) {
      return text ? `<span class="md-image">[${escape(text)}]</span>` : '';
    },
    link({ href, title, tokens }) {
      const label = this.parser.parseInline(tokens);
      if (!SAFE_URL.test(String(href || '').trim())) return label;
      const t = title ? ` title="${escape(title)}"` : '';
      return `<a href="${escape(href)}"${t}>${label}</a>`;
    },
  },
});

const ALLOWED_TAGS = ['a', 'b', 'blockquote', 'br', 'code', 'del', 'em', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'hr', 'i',
  'input', 'li', 'ol', 'p', 'pre', 'span', 'strong', 'table', 'tbody', 'td', 'th', 'thead', 'tr', 'ul'];

// renderMarkdown returns the body as a fragment of safe elements.
export function renderMarkdown(source) {
  const html = marked.parse(String(source || ''));
  const frag = DOMPurify.sanitize(html, {
    ALLOWED_TAGS,
    ALLOWED_ATTR: ['href', 'title', 'class', 'type', 'checked', 'disabled', 'align'],
    ALLOWED_URI_REGEXP: /^(?:https?:|mailto:)/i,
    RETURN_DOM_FRAGMENT: true,
  });
  for (const a of frag.querySelectorAll('a')) {
    if (!SAFE_URL.test(a.getAttribute('href') || '')) {
      a.replaceWith(...a.childNodes);
      continue;
    }
    a.target = '_blank';
    a.rel = 'noopener noreferrer nofollow';
  }
  for (const input of frag.querySelectorAll('input')) {
    if (input.type !== 'checkbox') input.remove();
    else input.disabled = true;
  }
  return frag;
}
