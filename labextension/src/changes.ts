/**
 * The cell changes the kernel asks for (the agent's cell tools, and `%fuxi undo`):
 * edit a cell's source, insert, delete or move a cell, set a code cell's outputs. Cells
 * are named by their ids; `expect` (the source the kernel last saw) guards a cell the user
 * changed meanwhile, which is then left as it is.
 */
import type { ICodeCellModel } from '@jupyterlab/cells';
import type { INotebookModel } from '@jupyterlab/notebook';

import { isObject, JSONObject } from './util';

/** The requests this module answers (the kernel's `request` field). */
export const CHANGES = new Set([
  'edit_cell',
  'insert_cell',
  'delete_cell',
  'move_cell',
  'set_outputs'
]);

function ids(model: INotebookModel): string[] {
  const found: string[] = [];
  for (let index = 0; index < model.cells.length; index++) {
    found.push(model.cells.get(index).id);
  }
  return found;
}

function insert(model: INotebookModel, data: JSONObject, known: string[]): JSONObject {
  const cellType = data.cell_type === 'markdown' ? 'markdown' : 'code';
  const source = typeof data.source === 'string' ? data.source : '';
  let at = known.length;
  if (typeof data.index === 'number' && Number.isInteger(data.index)) {
    at = Math.max(0, Math.min(data.index, known.length));
  } else if (typeof data.after === 'string' && known.includes(data.after)) {
    at = known.indexOf(data.after) + 1;
  }
  const cell: JSONObject = { cell_type: cellType, source };
  if (typeof data.cell_id === 'string' && !known.includes(data.cell_id)) {
    cell.id = data.cell_id; // an undone deletion gets its cell back under its id
  }
  model.sharedModel.insertCell(at, cell as never);
  return { ok: true, cell: model.cells.get(at).id };
}

/** Apply one change; the answer the kernel reads (`ok`, or `error` saying why). */
export function applyChange(model: INotebookModel, data: JSONObject): JSONObject {
  const known = ids(model);
  if (data.request === 'insert_cell') {
    return insert(model, data, known);
  }
  const index = typeof data.cell === 'string' ? known.indexOf(data.cell) : -1;
  if (index < 0) {
    return { error: `no cell ${JSON.stringify(data.cell)}` };
  }
  const cell = model.cells.get(index);
  const source = cell.sharedModel.getSource();
  if (typeof data.expect === 'string' && data.expect !== source) {
    return { error: 'the cell was changed meanwhile' };
  }
  if (data.request === 'edit_cell' && typeof data.source === 'string') {
    cell.sharedModel.setSource(data.source);
  } else if (data.request === 'delete_cell') {
    model.sharedModel.deleteCell(index);
    return { ok: true, deleted: { id: cell.id, cell_type: cell.type, source } };
  } else if (data.request === 'move_cell' && typeof data.to === 'number') {
    const to = Math.max(0, Math.min(Math.trunc(data.to), known.length - 1));
    model.sharedModel.moveCell(index, to);
  } else if (data.request === 'set_outputs' && cell.type === 'code') {
    const outputs = (cell as ICodeCellModel).outputs;
    outputs.clear();
    for (const output of Array.isArray(data.outputs) ? data.outputs : []) {
      if (isObject(output)) {
        outputs.add(output as never);
      }
    }
  } else {
    return { error: `cannot ${String(data.request)} this cell` };
  }
  return { ok: true };
}
