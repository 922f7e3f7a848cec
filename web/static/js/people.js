// A list of people named by email, each invited to take a part in a
// channel (an approver, someone an urgent alert escalates to): chips that
// say where each invitation stands (and, once accepted, who it is), an
// email input with an Add button, and × to remove one. The channel's
// approval editor and its urgent alerts editor both use it.
import { el, button } from './dom.js';
import { markField, clearFieldErrors } from './fielderrors.js';

// Where an invitation stands; "new" until the list is saved.
const STATE_WORDS = { new: 'not saved yet', invited: 'invited', accepted: 'accepted', declined: 'declined' };

export class PeopleList {
  // list is the <ul> of chips, input the email input, add its button,
  // form the form they are in; opts.empty is said when nobody is listed,
  // opts.onChange runs after an add or a removal.
  constructor(list, input, add, form, opts = {}) {
    Object.assign(this, { list, input, form, opts, entries: [], states: new Map() });
    add.addEventListener('click', () => this.add());
    input.addEventListener('keydown', (ev) => {
      if (ev.key === 'Enter') {
        ev.preventDefault();
        this.add();
      }
    });
    list.addEventListener('click', (ev) => {
      const b = ev.target.closest('button[data-entry]');
      if (!b) return;
      this.entries = this.entries.filter((e) => e !== b.dataset.entry);
      clearFieldErrors(form); // what was refused may be gone
      this.render();
      if (opts.onChange) opts.onChange();
      input.focus();
    });
  }

  // reset shows invitees ([{entry, state, name}], as the server lists
  // them) and empties the input.
  reset(invitees) {
    this.entries = invitees.map((a) => a.entry);
    this.states = new Map(invitees.map((a) => [a.entry, a]));
    this.input.value = '';
    this.render();
  }

  render() {
    this.list.replaceChildren(...this.entries.map((entry) => {
      const a = this.states.get(entry);
      const state = a ? a.state : 'new';
      const who = a && a.state === 'accepted' && a.name ? ` (${a.name})` : '';
      return el('li', { className: 'chip', dataset: { entry, state } },
        el('span', { text: entry + who }), el('span', { className: `badge approver-state state-${state}`, text: STATE_WORDS[state] || state }),
        button('chip-remove', '×', `Remove ${entry}`, { entry }));
    }));
    if (this.entries.length === 0) this.list.append(el('li', { className: 'note', text: this.opts.empty || 'Nobody yet.' }));
  }

  // add takes the email typed in; false when it is not one (said beside
  // the input). Nothing typed is fine.
  add() {
    const email = this.input.value.trim();
    if (!email) return true;
    if (!this.input.checkValidity() || !email.includes('@')) {
      markField(this.input, `"${email}" is not an email address.`);
      return false;
    }
    const entry = email.toLowerCase(); // as the channel keeps it
    if (!this.entries.includes(entry)) this.entries.push(entry);
    this.input.value = '';
    this.render();
    if (this.opts.onChange) this.opts.onChange();
    this.input.focus();
    return true;
  }
}
