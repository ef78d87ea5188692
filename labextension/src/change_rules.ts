/**
 * What a cell change the kernel asks for does, decided on a plain view of the cells: the
 * answer the kernel reads and the one change to make. Pure (no JupyterLab), so node runs
 * it against the table of cases (fuxi_notebook/testing/change_cases.json) that the
 * Python emulation (fuxi_notebook/testing/cell_changes.py) is checked against too: the
 * two cannot drift. `changes.ts` makes the change on JupyterLab's model.
 *
 * The rules: a malformed request changes nothing and says why; a cell is named by its id;
 * `expect` (the source the kernel last saw) and `expect_index` (where it last saw the
 * cell) guard a cell the user changed or moved meanwhile, which is then left as it is; a
 * deleted cell is put back whole (`restore_cell`), never twice. A cell the agent inserts or
 * edits carries where it came from (`provenance`: the agent cell, its session, the tool,
 * the time) in `metadata.fuxi.provenance`, the newest `MAX_PROVENANCE`; an undo
 * (`undo_of`: the agent cell undone) takes that agent cell's entries off again.
 */
import { isObject, JSONObject } from './util';

/** A cell as the rules see it; `json()` is its whole nbformat JSON (asked for lazily). */
export interface CellView {
  readonly id: string;
  readonly cell_type: string;
  readonly source: string;
  json(): JSONObject;
}

/**
 * The change to make. An inserted cell without an id gets a new one from the model; the
 * answer then names the inserted cell (`cell`), as the model made it.
 */
export type Change =
  | { kind: 'insert'; at: number; cell: JSONObject }
  | { kind: 'edit'; index: number; source: string; fuxi?: JSONObject | null }
  | { kind: 'delete'; index: number }
  | { kind: 'move'; from: number; to: number }
  | { kind: 'outputs'; index: number; outputs: JSONObject[] };

export type Decision = { error: string } | { change: Change; answer: JSONObject };

const CELL_TYPES = ['code', 'markdown', 'raw'];
/** An id nbformat accepts (and JupyterLab's model keeps). */
const CELL_ID = /^[A-Za-z0-9_-]{1,64}$/;
const WHOLE = 'must be a whole number, 0 or more';
const NEEDS_OUTPUTS = 'set_outputs needs a list of outputs (objects with an output_type)';
const NEEDS_CELL = 'restore_cell needs the cell as it was (an nbformat cell with its id)';
const NEEDS_PROVENANCE =
  'provenance must be an object of agent_cell, session, tool and at (short strings)';
/** The fields of a provenance entry, each a string of at most `PROVENANCE_CHARS`. */
const PROVENANCE_FIELDS = ['agent_cell', 'session', 'tool', 'at'];
const PROVENANCE_CHARS = 200;
/** How many entries a cell keeps (the newest). */
export const MAX_PROVENANCE = 20;

function isWhole(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0;
}

function quoted(value: string): string {
  return JSON.stringify(value);
}

/** A new cell's nbformat JSON (no id: the model makes one). */
function newCell(cellType: string, source: string, metadata: JSONObject = {}): JSONObject {
  return cellType === 'code'
    ? { cell_type: 'code', source, metadata, outputs: [], execution_count: null }
    : { cell_type: cellType, source, metadata };
}

/** A request's provenance entry, cleaned to its fields; null if it is not one. */
function provenanceEntry(value: unknown): JSONObject | null {
  if (!isObject(value)) {
    return null;
  }
  const entry: JSONObject = {};
  for (const key of PROVENANCE_FIELDS) {
    const field = value[key];
    if (typeof field !== 'string' || field.length > PROVENANCE_CHARS) {
      return null;
    }
    entry[key] = field;
  }
  return entry;
}

/** A cell's `metadata.fuxi` (an object, or {}) and its provenance entries. */
function provenanceOf(cell: CellView): [JSONObject, JSONObject[]] {
  const metadata = cell.json().metadata;
  const fuxi = isObject(metadata) && isObject(metadata.fuxi) ? metadata.fuxi : {};
  const entries = Array.isArray(fuxi.provenance) ? fuxi.provenance.filter(isObject) : [];
  return [fuxi, entries];
}

/**
 * The cell's new `metadata.fuxi` after an edit: with the request's provenance entry
 * added, or without the undone agent cell's entries (null: remove the key; undefined:
 * leave the metadata as it is).
 */
function editedFuxi(cell: CellView, data: JSONObject): JSONObject | null | undefined {
  if (data.provenance !== undefined) {
    const [fuxi, entries] = provenanceOf(cell);
    const entry = provenanceEntry(data.provenance) as JSONObject;
    return { ...fuxi, provenance: [...entries, entry].slice(-MAX_PROVENANCE) };
  }
  if (typeof data.undo_of !== 'string') {
    return undefined;
  }
  const [fuxi, entries] = provenanceOf(cell);
  const kept = entries.filter(entry => entry.agent_cell !== data.undo_of);
  if (kept.length === entries.length) {
    return undefined;
  }
  const rest: JSONObject = { ...fuxi };
  delete rest.provenance;
  const next = kept.length ? { ...rest, provenance: kept } : rest;
  return Object.keys(next).length ? next : null;
}

function insert(cells: readonly CellView[], data: JSONObject): Decision {
  if ('cell_id' in data) {
    return { error: 'insert_cell makes a new cell (restore_cell puts a deleted one back)' };
  }
  if (typeof data.source !== 'string') {
    return { error: "insert_cell needs the new cell's source (a string)" };
  }
  const cellType = data.cell_type ?? 'code';
  if (typeof cellType !== 'string' || !CELL_TYPES.includes(cellType)) {
    return { error: 'cell_type must be code, markdown or raw' };
  }
  const hasIndex = data.index !== undefined && data.index !== null;
  const hasAfter = data.after !== undefined && data.after !== null;
  if (hasIndex && hasAfter) {
    return { error: 'insert_cell takes index or after, not both' };
  }
  let at = cells.length;
  if (hasIndex) {
    if (!isWhole(data.index)) {
      return { error: `index ${WHOLE}` };
    }
    at = Math.min(data.index, cells.length);
  } else if (hasAfter) {
    if (typeof data.after !== 'string') {
      return { error: 'after must be a cell id' };
    }
    const found = cells.findIndex(cell => cell.id === data.after);
    if (found < 0) {
      return { error: `no cell ${quoted(data.after)}` };
    }
    at = found + 1;
  }
  let metadata: JSONObject = {};
  if (data.provenance !== undefined) {
    const entry = provenanceEntry(data.provenance);
    if (entry === null) {
      return { error: NEEDS_PROVENANCE };
    }
    metadata = { fuxi: { provenance: [entry] } };
  }
  const cell = newCell(cellType, data.source, metadata);
  return { change: { kind: 'insert', at, cell }, answer: { ok: true } };
}

/** The deleted cell as it was, cleaned to nbformat's fields; null if it is not one. */
function restorable(value: unknown): JSONObject | null {
  if (!isObject(value) || typeof value.id !== 'string' || !CELL_ID.test(value.id)) {
    return null;
  }
  const cellType = value.cell_type;
  if (
    typeof cellType !== 'string' ||
    !CELL_TYPES.includes(cellType) ||
    typeof value.source !== 'string'
  ) {
    return null;
  }
  const metadata = value.metadata ?? {};
  if (!isObject(metadata)) {
    return null;
  }
  const cell: JSONObject = { ...newCell(cellType, value.source), id: value.id, metadata };
  if (cellType === 'code') {
    const outputs = value.outputs ?? [];
    const count = value.execution_count ?? null;
    if (!isOutputs(outputs) || !(count === null || isWhole(count))) {
      return null;
    }
    cell.outputs = outputs;
    cell.execution_count = count;
  } else if (value.attachments !== undefined && value.attachments !== null) {
    if (!isObject(value.attachments)) {
      return null;
    }
    cell.attachments = value.attachments;
  }
  return cell;
}

function restore(cells: readonly CellView[], data: JSONObject): Decision {
  const cell = restorable(data.cell);
  if (cell === null) {
    return { error: NEEDS_CELL };
  }
  if (!isWhole(data.index)) {
    return { error: `index ${WHOLE}` };
  }
  if (cells.some(known => known.id === cell.id)) {
    return { error: `cell ${quoted(String(cell.id))} is in the notebook already` };
  }
  const at = Math.min(data.index, cells.length);
  return { change: { kind: 'insert', at, cell }, answer: { ok: true } };
}

function isOutputs(value: unknown): value is JSONObject[] {
  return Array.isArray(value) && value.every(o => isObject(o) && typeof o.output_type === 'string');
}

/** The fields of a request that names a cell, checked before the cell is looked at. */
function malformed(data: JSONObject): string | null {
  if (data.expect !== undefined && typeof data.expect !== 'string') {
    return 'expect must be a string';
  }
  if (data.expect_index !== undefined && !isWhole(data.expect_index)) {
    return `expect_index ${WHOLE}`;
  }
  if (data.request === 'edit_cell' && typeof data.source !== 'string') {
    return 'edit_cell needs the new source (a string)';
  }
  if (data.request === 'edit_cell' && data.provenance !== undefined) {
    if (provenanceEntry(data.provenance) === null) {
      return NEEDS_PROVENANCE;
    }
    if (data.undo_of !== undefined) {
      return 'edit_cell takes provenance or undo_of, not both';
    }
  }
  if (data.request === 'edit_cell' && data.undo_of !== undefined) {
    if (typeof data.undo_of !== 'string') {
      return 'undo_of must be the id of the agent cell undone';
    }
  }
  if (data.request === 'move_cell' && !isWhole(data.to)) {
    return `to ${WHOLE}`;
  }
  if (data.request === 'set_outputs' && !isOutputs(data.outputs)) {
    return NEEDS_OUTPUTS;
  }
  return null;
}

function onCell(cells: readonly CellView[], data: JSONObject): Decision {
  if (typeof data.cell !== 'string') {
    return { error: 'the request names no cell' };
  }
  const problem = malformed(data);
  if (problem !== null) {
    return { error: problem };
  }
  const index = cells.findIndex(cell => cell.id === data.cell);
  if (index < 0) {
    return { error: `no cell ${quoted(data.cell)}` };
  }
  const cell = cells[index];
  if (data.request === 'set_outputs' && cell.cell_type !== 'code') {
    return { error: 'only a code cell has outputs' };
  }
  if (data.expect !== undefined && data.expect !== cell.source) {
    return { error: 'the cell was changed meanwhile' };
  }
  if (data.expect_index !== undefined && data.expect_index !== index) {
    return { error: 'the cell was moved meanwhile' };
  }
  const ok = { ok: true };
  switch (data.request) {
    case 'edit_cell': {
      const fuxi = editedFuxi(cell, data);
      const change: Change = { kind: 'edit', index, source: data.source as string };
      return { change: fuxi === undefined ? change : { ...change, fuxi }, answer: ok };
    }
    case 'delete_cell':
      return { change: { kind: 'delete', index }, answer: { ok: true, deleted: cell.json() } };
    case 'move_cell': {
      const to = Math.min(data.to as number, cells.length - 1);
      return { change: { kind: 'move', from: index, to }, answer: { ok: true, index: to } };
    }
    default:
      return {
        change: { kind: 'outputs', index, outputs: data.outputs as JSONObject[] },
        answer: ok
      };
  }
}

/** The requests that name a cell (the others: insert_cell, restore_cell). */
const ON_CELL = new Set(['edit_cell', 'delete_cell', 'move_cell', 'set_outputs']);

/** What `data` (a request of the kernel's) does to `cells`: an error, or a change. */
export function decide(cells: readonly CellView[], data: JSONObject): Decision {
  if (typeof data.request !== 'string') {
    return { error: 'the message names no request' };
  }
  if (data.request === 'insert_cell') {
    return insert(cells, data);
  }
  if (data.request === 'restore_cell') {
    return restore(cells, data);
  }
  if (ON_CELL.has(data.request)) {
    return onCell(cells, data);
  }
  return { error: `unknown request ${quoted(data.request)}` };
}
