/**
 * Puts the marks `marks.ts` decides on the page: a line under the cell
 * (`.fuxi-cell-line`) and a badge with its tooltip (`.fuxi-provenance`). They are
 * elements of the cell's own node, drawn again only where a mark changed, and never part
 * of the notebook's model (a save or nbval sees nothing of them).
 */
import type { Cell } from '@jupyterlab/cells';

import type { CellMark } from './marks';

const LINE = 'fuxi-cell-line';
const BADGE = 'fuxi-provenance';
/** The class of a cell with a badge (the badge sits in its corner). */
const MARKED = 'fuxi-mod-provenance';

/** What was drawn on each cell node, so an unchanged mark is left alone. */
const drawn = new WeakMap<HTMLElement, string>();

function child(node: HTMLElement, className: string, tag: string): HTMLElement {
  let found = node.querySelector<HTMLElement>(`:scope > .${className}`);
  if (!found) {
    found = document.createElement(tag);
    found.className = className;
    node.appendChild(found);
  }
  return found;
}

function remove(node: HTMLElement, className: string): void {
  node.querySelector(`:scope > .${className}`)?.remove();
}

/** Draw `mark` (null: none) on one cell widget. */
export function drawMark(cell: Cell, mark: CellMark | null): void {
  const node = cell.node;
  const key = mark === null ? '' : JSON.stringify(mark);
  if ((drawn.get(node) ?? '') === key) {
    return;
  }
  drawn.set(node, key);
  if (mark?.line) {
    child(node, LINE, 'div').textContent = mark.line;
  } else {
    remove(node, LINE);
  }
  if (mark?.badge) {
    const badge = child(node, BADGE, 'span');
    badge.textContent = mark.badge;
    badge.title = mark.tooltip ?? '';
    badge.setAttribute('aria-label', mark.tooltip ?? mark.badge);
    node.classList.add(MARKED);
  } else {
    remove(node, BADGE);
    node.classList.remove(MARKED);
  }
}
