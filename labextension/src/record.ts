/**
 * Mirrors a `%%fuxi` cell's session record (shown as an output with the record MIME type)
 * into the cell's metadata, where Clear Outputs and nbstripout leave it.
 */
import type { ICellModel, ICodeCellModel } from '@jupyterlab/cells';

import { isObject, jsonCopy, jsonEqual, JSONObject, METADATA_KEY, RECORD_MIME } from './util';

export interface IMirrored {
  record: JSONObject;
  volatile: JSONObject;
}

function outputsOf(model: ICellModel): ICodeCellModel['outputs'] | null {
  return model.type === 'code' ? (model as ICodeCellModel).outputs : null;
}

/** Whether one of the cell's outputs carries the record MIME type. */
export function hasRecordOutput(model: ICellModel): boolean {
  const outputs = outputsOf(model);
  if (!outputs) {
    return false;
  }
  for (let index = 0; index < outputs.length; index++) {
    if (RECORD_MIME in outputs.get(index).data) {
      return true;
    }
  }
  return false;
}

/** The metadata value the cell's (last) record output asks for, or null. */
export function recordFromOutputs(model: ICellModel): IMirrored | null {
  const outputs = outputsOf(model);
  let found: IMirrored | null = null;
  for (let index = 0; outputs && index < outputs.length; index++) {
    const output = outputs.get(index);
    const record = output.data[RECORD_MIME];
    if (isObject(record)) {
      const volatile = isObject(output.metadata) ? output.metadata[METADATA_KEY] : undefined;
      found = { record, volatile: isObject(volatile) ? volatile : {} };
    }
  }
  return found;
}

/**
 * The record each cell's outputs showed last. A notebook opened from a file whose records
 * are only in outputs (saved before the extension, or by a frontend without it) keeps its
 * metadata as it is on open; when those outputs go (Clear Outputs, Run All clearing the
 * cells it queued), the record they held goes into the metadata.
 */
const shown = new WeakMap<ICellModel, IMirrored>();

/** Note the record the cell's outputs hold now (when a notebook is opened). */
export function rememberRecord(model: ICellModel): void {
  const found = recordFromOutputs(model);
  if (found) {
    shown.set(model, jsonCopy(found));
  }
}

/**
 * Set `metadata.fuxi` from the outputs, only when it differs (an unchanged notebook never
 * becomes dirty). Outputs without a record (cleared, or a re-run that starts) leave it,
 * or put in the record they held if the metadata does not have it yet.
 */
export function mirrorRecord(model: ICellModel): void {
  const found = recordFromOutputs(model) ?? shown.get(model) ?? null;
  if (!found) {
    return;
  }
  shown.set(model, jsonCopy(found));
  const wanted: JSONObject = { ...found, ...marksOf(model.getMetadata(METADATA_KEY)) };
  if (!jsonEqual(model.getMetadata(METADATA_KEY), wanted)) {
    model.setMetadata(METADATA_KEY, jsonCopy(wanted));
  }
}

/**
 * The keys of `metadata.fuxi` that are not a record (sessions/cell_record.py CELL_MARKS):
 * where a cell came from (`provenance`), what an agent cell is about (`about`). A record
 * copied in keeps them.
 */
export const CELL_MARKS = ['provenance', 'about'];

function marksOf(value: unknown): JSONObject {
  const marks: JSONObject = {};
  for (const key of CELL_MARKS) {
    if (isObject(value) && value[key] !== undefined) {
      marks[key] = value[key];
    }
  }
  return marks;
}
