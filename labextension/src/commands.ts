/**
 * The extension's commands, in the command palette (`Fuxi: …`) and the cell's context
 * menu (schema/plugin.json), with a default shortcut for the first (Shift F in command
 * mode, changeable in Settings → Keyboard Shortcuts):
 *
 * - insert an agent cell below: a `%%fuxi` cell under the selected cells, which it is
 *   `about` (metadata.fuxi.about: the kernel sends those cells with the prompt);
 * - replay this cell: runs the active agent cell as a replay of its record, as
 *   `--replay lenient` would (the live document the kernel asks for says so, once);
 * - undo the last agent cell, show permissions: run `%fuxi undo` / `%fuxi permissions`
 *   in the notebook's kernel and show what they print in a dialog.
 */
import type { JupyterFrontEnd } from '@jupyterlab/application';
import { Dialog, ICommandPalette, showDialog } from '@jupyterlab/apputils';
import { Cell, CodeCell } from '@jupyterlab/cells';
import { INotebookTracker, Notebook, NotebookActions, NotebookPanel } from '@jupyterlab/notebook';
import { OutputArea, OutputAreaModel } from '@jupyterlab/outputarea';

import { NotebookState } from './notebook';
import { METADATA_KEY, warn } from './util';

export const COMMANDS = {
  insert: 'fuxi:insert-agent-cell',
  replay: 'fuxi:replay-cell',
  undo: 'fuxi:undo-last',
  permissions: 'fuxi:show-permissions'
};

/** A kernel started since (a restart) has not loaded fuxi yet; loading it again is a no-op. */
const LOAD = '%load_ext fuxi_notebook\n';


function isAgentCell(cell: Cell | null | undefined): boolean {
  return (
    cell?.model.type === 'code' && cell.model.sharedModel.getSource().trimStart().startsWith('%%fuxi')
  );
}

/** The selected cells (or the active one), in order. */
function selected(notebook: Notebook): Cell[] {
  return notebook.widgets.filter(cell => notebook.isSelectedOrActive(cell));
}

function insertAgentCell(panel: NotebookPanel): void {
  const notebook = panel.content;
  const chosen = selected(notebook);
  const about = chosen.filter(cell => !isAgentCell(cell)).map(cell => cell.model.id);
  const last = chosen.length ? notebook.widgets.indexOf(chosen[chosen.length - 1]) : -1;
  if (last >= 0) {
    notebook.activeCellIndex = last;
  }
  notebook.deselectAll();
  NotebookActions.insertBelow(notebook);
  if (notebook.activeCell?.model.type !== 'code') {
    NotebookActions.changeCellType(notebook, 'code');
  }
  const cell = notebook.activeCell;
  if (!cell) {
    return;
  }
  cell.model.sharedModel.setSource('%%fuxi\n');
  if (about.length) {
    cell.model.setMetadata(METADATA_KEY, { about });
  }
  notebook.mode = 'edit';
  // the new cell's editor exists once the cell is ready: the prompt goes on line 2
  void cell.ready.then(() => {
    cell.editor?.setCursorPosition({ line: 1, column: 0 });
    cell.editor?.focus();
  });
}

function replayCell(panel: NotebookPanel): void {
  const cell = panel.content.activeCell;
  if (!(cell instanceof CodeCell) || !isAgentCell(cell)) {
    void showDialog({
      title: 'Fuxi: replay this cell',
      body: 'Select a %%fuxi cell with a recorded run first: this command replays it.',
      buttons: [Dialog.okButton()]
    });
    return;
  }
  NotebookState.of(panel)?.requestReplay(cell.model.id);
  void CodeCell.execute(cell, panel.sessionContext).catch(error =>
    warn('could not replay the cell', error)
  );
}

/** Run `code` in the panel's kernel (no history) and show its outputs in a dialog. */
function runInDialog(panel: NotebookPanel, title: string, code: string): void {
  const kernel = panel.sessionContext.session?.kernel;
  if (!kernel) {
    void showDialog({ title, body: 'The notebook has no kernel.', buttons: [Dialog.okButton()] });
    return;
  }
  const area = new OutputArea({
    model: new OutputAreaModel({ trusted: false }),
    rendermime: panel.content.rendermime
  });
  area.addClass('fuxi-dialog-output');
  area.future = kernel.requestExecute({ code, store_history: false, stop_on_error: false });
  void showDialog({ title, body: area, buttons: [Dialog.okButton({ label: 'Close' })] }).then(
    () => area.dispose()
  );
}

export function addCommands(
  app: JupyterFrontEnd,
  notebooks: INotebookTracker,
  palette: ICommandPalette | null
): void {
  const current = (): NotebookPanel | null => notebooks.currentWidget;
  const hasNotebook = (): boolean => current() !== null;
  const run =
    (what: string, fn: (panel: NotebookPanel) => void) =>
    (): void => {
      const panel = current();
      if (!panel) {
        return;
      }
      try {
        fn(panel);
      } catch (error) {
        warn(`could not ${what}`, error);
      }
    };
  app.commands.addCommand(COMMANDS.insert, {
    label: 'Fuxi: insert an agent cell below',
    caption: 'A %%fuxi cell below the selected cells, which its prompt is about',
    isEnabled: hasNotebook,
    execute: run('insert an agent cell', insertAgentCell)
  });
  app.commands.addCommand(COMMANDS.replay, {
    label: 'Fuxi: replay this cell',
    caption: 'Run the active %%fuxi cell again from its recorded run (no model is asked)',
    isEnabled: hasNotebook,
    execute: run('replay the cell', replayCell)
  });
  app.commands.addCommand(COMMANDS.undo, {
    label: 'Fuxi: undo the last agent cell',
    caption: 'What the last %%fuxi cell changed (files, names, cells) put back: %fuxi undo',
    isEnabled: hasNotebook,
    execute: run('undo', panel => runInDialog(panel, 'Fuxi: undo', `${LOAD}%fuxi undo`))
  });
  app.commands.addCommand(COMMANDS.permissions, {
    label: 'Fuxi: show permissions',
    caption: 'The permission mode and rules later %%fuxi cells use: %fuxi permissions',
    isEnabled: hasNotebook,
    execute: run('show the permissions', panel =>
      runInDialog(panel, 'Fuxi: permissions', `${LOAD}%fuxi permissions`)
    )
  });
  for (const command of Object.values(COMMANDS)) {
    palette?.addItem({ command, category: 'Fuxi' });
  }
}
