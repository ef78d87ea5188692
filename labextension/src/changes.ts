/**
 * The cell changes the kernel asks for (the agent's cell tools, and `%fuxi undo`), made on
 * JupyterLab's notebook model. What each request does is decided in `change_rules.ts`
 * (pure, tested in node against the table of cases the Python emulation shares); this
 * module only shows it the cells and makes the one change it decided.
 */
import type { ICellModel, ICodeCellModel } from '@jupyterlab/cells';
import type { INotebookModel } from '@jupyterlab/notebook';

import { CellView, Change, decide } from './change_rules';
import { JSONObject, METADATA_KEY } from './util';

function view(cell: ICellModel): CellView {
  return {
    id: cell.id,
    cell_type: cell.type,
    source: cell.sharedModel.getSource(),
    json: () => cell.toJSON() as unknown as JSONObject
  };
}

/** Make `change`; the id of the cell it inserted, if it inserted one. */
function make(model: INotebookModel, change: Change): string | null {
  const shared = model.sharedModel;
  switch (change.kind) {
    case 'insert':
      shared.insertCell(change.at, change.cell as never);
      return model.cells.get(change.at).id;
    case 'edit': {
      const cell = model.cells.get(change.index);
      cell.sharedModel.setSource(change.source);
      if (change.fuxi === null) {
        cell.deleteMetadata(METADATA_KEY);
      } else if (change.fuxi !== undefined) {
        cell.setMetadata(METADATA_KEY, change.fuxi);
      }
      return null;
    }
    case 'delete':
      shared.deleteCell(change.index);
      return null;
    case 'move':
      shared.moveCell(change.from, change.to);
      return null;
    case 'outputs': {
      const outputs = (model.cells.get(change.index) as ICodeCellModel).outputs;
      outputs.clear();
      for (const output of change.outputs) {
        outputs.add(output as never);
      }
      return null;
    }
  }
}

/** Apply one request; the answer the kernel reads (`ok`, or `error` saying why). */
export function applyChange(model: INotebookModel, data: JSONObject): JSONObject {
  const cells: CellView[] = [];
  for (let index = 0; index < model.cells.length; index++) {
    cells.push(view(model.cells.get(index)));
  }
  const decision = decide(cells, data);
  if ('error' in decision) {
    return { error: decision.error };
  }
  try {
    const inserted = make(model, decision.change);
    return inserted === null ? decision.answer : { ...decision.answer, cell: inserted };
  } catch (error) {
    return { error: `the notebook could not make the change: ${String(error)}` };
  }
}
