/**
 * The extension's cell-change rules (src/change_rules.ts) against the table of cases the
 * Python emulation is checked against too (fuxi_notebook/testing/change_cases.json), in
 * plain node: `npm test` (scripts/test.sh runs it). Each case's answer must be exactly the
 * table's, and the notebook afterwards exactly its `after` (a refused request: unchanged).
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

import { CellView, Change, decide } from '../src/change_rules';

type Cell = { [key: string]: unknown };

interface Case {
  name: string;
  request: Cell;
  answer: Cell;
  after?: (string | Cell)[];
}

interface Table {
  new_id: string;
  notebook: Cell[];
  cases: Case[];
}

// compiled to lib/test/test/: the table is in the Python package, next to the emulation
const TABLE = join(__dirname, '../../../../fuxi_notebook/testing/change_cases.json');

function copy<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}

function views(cells: Cell[]): CellView[] {
  return cells.map(cell => ({
    id: cell.id as string,
    cell_type: cell.cell_type as string,
    source: cell.source as string,
    json: () => copy(cell)
  }));
}

/** What `changes.ts` does to JupyterLab's model, on plain cells; the inserted cell's id. */
function make(cells: Cell[], change: Change, newId: string): string | null {
  switch (change.kind) {
    case 'insert': {
      const cell = { ...change.cell, id: change.cell.id ?? newId };
      cells.splice(change.at, 0, cell);
      return cell.id as string;
    }
    case 'edit': {
      const cell = cells[change.index];
      cell.source = change.source;
      const metadata = (cell.metadata ?? {}) as Cell;
      if (change.fuxi === null) {
        delete metadata.fuxi;
      } else if (change.fuxi !== undefined) {
        metadata.fuxi = change.fuxi;
      }
      cell.metadata = metadata;
      return null;
    }
    case 'delete':
      cells.splice(change.index, 1);
      return null;
    case 'move':
      cells.splice(change.to, 0, ...cells.splice(change.from, 1));
      return null;
    case 'outputs':
      cells[change.index].outputs = copy(change.outputs);
      return null;
  }
}

const table = JSON.parse(readFileSync(TABLE, 'utf8')) as Table;

test('the table has cases for every request the kernel sends', () => {
  const named = new Set(table.cases.map(c => c.request.request));
  const sent = ['insert_cell', 'edit_cell', 'delete_cell', 'move_cell', 'set_outputs'];
  for (const request of [...sent, 'restore_cell']) {
    assert.ok(named.has(request), request);
  }
});

for (const one of table.cases) {
  test(one.name, () => {
    const cells = copy(table.notebook);
    const decision = decide(views(cells), copy(one.request));
    let answer: Cell;
    if ('error' in decision) {
      answer = { error: decision.error };
    } else {
      const inserted = make(cells, decision.change, table.new_id);
      answer = inserted === null ? decision.answer : { ...decision.answer, cell: inserted };
    }
    assert.deepEqual(answer, one.answer);
    const byId = new Map(table.notebook.map(cell => [cell.id, cell]));
    const after = (one.after ?? table.notebook.map(cell => cell.id as string)).map(entry =>
      typeof entry === 'string' ? byId.get(entry) : entry
    );
    assert.deepEqual(cells, after);
  });
}
