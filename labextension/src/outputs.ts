/**
 * What the cells an agent cell is about show, for the kernel to put in the prompt's
 * context: per output its type, the MIME types it has, and its text (a stream's text,
 * text/plain, an error's name and value), cut; never images or HTML. The kernel redacts
 * and fits them into the context budget (notebook/extension/pointed.py). `summarize` is pure
 * and follows the table fuxi_notebook/testing/output_cases.json, as the Python emulation
 * does (fuxi_notebook/testing/cell_changes.py `summarize_outputs`).
 */
import type { ICodeCellModel } from '@jupyterlab/cells';
import type { INotebookModel } from '@jupyterlab/notebook';

import { isObject, JSONObject } from './util';

export const MAX_CELLS = 20;
export const MAX_OUTPUTS = 10;
export const MAX_TEXT = 2000;

function text(value: unknown): string {
  const joined = Array.isArray(value)
    ? value.filter(part => typeof part === 'string').join('')
    : typeof value === 'string'
      ? value
      : '';
  return joined.length > MAX_TEXT ? `${joined.slice(0, MAX_TEXT)}…` : joined;
}

/** One cell's outputs (nbformat JSON) as the kernel is told them. */
export function summarize(outputs: readonly unknown[]): JSONObject {
  const summaries: JSONObject[] = [];
  for (const output of outputs.slice(0, MAX_OUTPUTS)) {
    if (!isObject(output)) {
      continue;
    }
    const data = isObject(output.data) ? output.data : {};
    const summary: JSONObject = {
      output_type: String(output.output_type),
      mimes: Object.keys(data),
      text: text(output.text ?? data['text/plain'] ?? '')
    };
    if (output.output_type === 'error') {
      summary.ename = String(output.ename ?? '');
      summary.evalue = text(output.evalue);
    }
    summaries.push(summary);
  }
  return { outputs: summaries, more: Math.max(0, outputs.length - MAX_OUTPUTS) };
}

/** The summaries of the named cells' outputs, by cell id (unknown ids are left out). */
export function outputSummaries(model: INotebookModel, wanted: unknown): JSONObject {
  const ids = Array.isArray(wanted)
    ? wanted.filter((id): id is string => typeof id === 'string').slice(0, MAX_CELLS)
    : [];
  const found: JSONObject = {};
  for (let index = 0; index < model.cells.length; index++) {
    const cell = model.cells.get(index);
    if (!ids.includes(cell.id) || cell.type !== 'code') {
      continue;
    }
    const outputs = (cell as ICodeCellModel).outputs;
    const json: unknown[] = [];
    for (let at = 0; at < outputs.length; at++) {
      json.push(outputs.get(at).toJSON());
    }
    found[cell.id] = summarize(json);
  }
  return found;
}
