// Folders: create, rename, delete and reorder (the order the apps show).
import { $, el, button, timeEl, confirmed } from '../dom.js';
import { enc, listAll } from '../api.js';
import { startRename } from '../rename.js';
import { fieldErrorHandler } from '../fielderrors.js';

export class FoldersView {
  constructor(ctx) {
    this.ctx = ctx;
    this.title = 'Folders';
    this.section = $('view-folders');
    this.folders = []; // as last loaded, in order
    $('folder-create').addEventListener('submit', (ev) => this.create(ev));
    $('folders').tBodies[0].addEventListener('click', (ev) => this.click(ev));
  }

  async load(seq) {
    const data = await listAll(this.ctx.api, '/v1/folders', 'folders');
    if (this.ctx.router.stale(seq)) return;
    this.render(data.folders || []);
  }

  render(folders) {
    this.folders = folders;
    const last = this.folders.length - 1;
    $('folders').tBodies[0].replaceChildren(...this.folders.map((f, i) => el('tr', { dataset: { folderId: f.id } },
      el('td', { className: 'folder-name', text: f.name }),
      el('td', { className: 'folder-created' }, timeEl(f.created_at)),
      el('td', { className: 'actions' },
        button('folder-rename', 'Rename', `Rename folder ${f.name}`),
        button('folder-delete danger', 'Delete', `Delete folder ${f.name}`),
        button('folder-up secondary small', '↑', `Move folder ${f.name} up`, { move: '-1' }),
        button('folder-down secondary small', '↓', `Move folder ${f.name} down`, { move: '1' })))));
    for (const [i, row] of [...$('folders').tBodies[0].rows].entries()) {
      row.querySelector('.folder-up').disabled = i === 0;
      row.querySelector('.folder-down').disabled = i === last;
    }
    $('folders-empty').hidden = this.folders.length > 0;
  }

  create(ev) {
    ev.preventDefault();
    const name = $('folder-name').value;
    this.ctx.router.change(async () => {
      const f = await this.ctx.api('POST', '/v1/folders', { name });
      $('folder-name').value = '';
      this.render([...this.folders, f]);
    }, fieldErrorHandler($('folder-create'), [{ key: 'name', input: $('folder-name'), name: 'Name' }]));
  }

  click(ev) {
    const btn = ev.target.closest('button');
    const row = btn && btn.closest('tr[data-folder-id]');
    if (!row) return;
    const id = row.dataset.folderId;
    const folder = this.folders.find((f) => f.id === id);
    if (!folder) return;
    const { api, router } = this.ctx;
    if (btn.classList.contains('folder-rename')) {
      startRename(router, row.querySelector('td.folder-name'), 'folder', folder.name, async (name) => {
        const f = await api('PATCH', `/v1/folders/${enc(id)}`, { name });
        this.render(this.folders.map((x) => (x.id === id ? { ...x, name: f.name || name } : x)));
      });
    } else if (btn.classList.contains('folder-delete')) {
      if (!confirmed(`Delete the folder "${folder.name}"? Its channels stay, outside any folder.`)) return;
      router.change(async () => {
        await api('DELETE', `/v1/folders/${enc(id)}`);
        this.render(this.folders.filter((f) => f.id !== id));
      });
    } else if (btn.dataset.move) {
      const ids = this.folders.map((f) => f.id);
      const from = ids.indexOf(id);
      const to = from + Number(btn.dataset.move);
      if (to < 0 || to >= ids.length) return;
      [ids[from], ids[to]] = [ids[to], ids[from]];
      router.change(async () => {
        const data = await api('POST', '/v1/folders/reorder', { ids });
        this.render(data.folders || []);
      }).then(() => {
        const again = $('folders').querySelector(`tr[data-folder-id="${CSS.escape(id)}"] button[data-move="${btn.dataset.move}"]`);
        if (again && !again.disabled) again.focus();
      });
    }
  }
}
