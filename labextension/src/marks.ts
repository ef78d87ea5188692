/**
 * What the extension shows on cells from their metadata, decided on a plain view of the
 * cells (pure, so node tests it): the line under an agent cell that continues a
 * conversation (which cell, by its place and its prompt's first words) or that was
 * inserted to work on other cells (`about`), and the mark of a cell an agent inserted or
 * edited (`provenance`), with a tooltip naming the agent cell. Shown from the metadata,
 * they survive reloads and change nothing nbval compares. `draw.ts` puts them on the page.
 */
import { isObject, JSONObject } from './util';

/** A cell as the marks see it (`fuxi`: its `metadata.fuxi`, or undefined). */
export interface MarkedCell {
  readonly id: string;
  readonly cell_type: string;
  readonly source: string;
  readonly fuxi: unknown;
}

/** What one cell shows: a line under it, a badge with its tooltip (null: none). */
export interface CellMark {
  line: string | null;
  badge: string | null;
  tooltip: string | null;
}

const WORDS = 48;

/** The first line with text of `text`, cut to about `WORDS` characters. */
export function firstWords(text: string): string {
  const line = text
    .split('\n')
    .map(part => part.trim())
    .find(part => part.length > 0 && !part.startsWith('%%fuxi'));
  if (line === undefined) {
    return '';
  }
  return line.length > WORDS ? `${line.slice(0, WORDS - 1)}…` : line;
}

function recordOf(cell: MarkedCell): JSONObject | null {
  return isObject(cell.fuxi) && isObject(cell.fuxi.record) ? cell.fuxi.record : null;
}

function quoted(text: string): string {
  return text ? ` “${text}”` : '';
}

/** `cell 4 “load the sales data”`: an agent cell by its place and its prompt. */
function agentCell(cells: readonly MarkedCell[], index: number): string {
  const record = recordOf(cells[index]);
  const prompt = record && typeof record.prompt === 'string' ? record.prompt : '';
  return `cell ${index + 1}${quoted(firstWords(prompt || cells[index].source))}`;
}

function continues(cells: readonly MarkedCell[], cell: MarkedCell): string | null {
  const record = recordOf(cell);
  const parent = record?.parent;
  if (typeof parent !== 'string' || !parent) {
    return null;
  }
  const index = cells.findIndex(other => recordOf(other)?.cell_id === parent);
  return index >= 0
    ? `↳ continues the conversation of ${agentCell(cells, index)}`
    : '↳ continues a conversation whose earlier cells are not in this notebook';
}

function about(cells: readonly MarkedCell[], cell: MarkedCell): string | null {
  const ids = isObject(cell.fuxi) && Array.isArray(cell.fuxi.about) ? cell.fuxi.about : [];
  const named = ids
    .filter((id): id is string => typeof id === 'string')
    .map(id => {
      const index = cells.findIndex(other => other.id === id);
      return index >= 0
        ? `cell ${index + 1}${quoted(firstWords(cells[index].source))}`
        : 'a cell no longer in the notebook';
    });
  return named.length ? `about ${named.join(', ')}` : null;
}

const VERBS: { [tool: string]: string } = { InsertCell: 'Inserted', EditCell: 'Edited' };

function when(at: unknown): string {
  return typeof at === 'string' ? at.replace('T', ' ').replace(/Z$/, ' UTC') : '';
}

function provenance(cells: readonly MarkedCell[], cell: MarkedCell): string[] {
  const entries =
    isObject(cell.fuxi) && Array.isArray(cell.fuxi.provenance) ? cell.fuxi.provenance : [];
  return entries.filter(isObject).map(entry => {
    const tool = typeof entry.tool === 'string' ? entry.tool : 'a cell tool';
    // by its id, or by its record's (nbstripout without --keep-id renumbers the ids)
    const index = cells.findIndex(
      other => other.id === entry.agent_cell || recordOf(other)?.cell_id === entry.agent_cell
    );
    const by = index >= 0 ? `agent ${agentCell(cells, index)}` : 'an agent cell no longer here';
    const session = typeof entry.session === 'string' ? entry.session.slice(0, 8) : '';
    const parts = [
      `${VERBS[tool] ?? 'Changed'} by ${by}`,
      tool,
      session ? `session ${session}` : '',
      when(entry.at)
    ];
    return parts.filter(part => part).join(' · ');
  });
}

/** Each cell's mark, by cell id (cells without one are left out). */
export function cellMarks(cells: readonly MarkedCell[]): Map<string, CellMark> {
  const marks = new Map<string, CellMark>();
  for (const cell of cells) {
    const lines = [continues(cells, cell), about(cells, cell)].filter(
      (line): line is string => line !== null
    );
    const history = provenance(cells, cell);
    if (lines.length || history.length) {
      marks.set(cell.id, {
        line: lines.length ? lines.join(' · ') : null,
        badge: history.length ? 'Fuxi' : null,
        tooltip: history.length ? history.join('\n') : null
      });
    }
  }
  return marks;
}
