/**
 * What the extension shows on cells from their metadata, decided on a plain view of the
 * cells (pure, so node tests it): the line under an agent cell that continues a
 * conversation (which cell, by its place and its prompt's first words) or that was
 * inserted to work on other cells (`about`), and the mark of a cell an agent inserted or
 * edited (`provenance`), with a tooltip naming the agent cell. Shown from the metadata,
 * they survive reloads and change nothing nbval compares. `draw.ts` puts them on the page.
 */
import { isObject, JSONObject } from './util';

/**
 * A cell as the marks see it (`fuxi`: its `metadata.fuxi`, or undefined). Its source may
 * be given as a function: read only for the few cells a mark quotes, so a redraw does not
 * cost the size of every cell's text.
 */
export interface MarkedCell {
  readonly id: string;
  readonly cell_type: string;
  readonly source: string | (() => string);
  readonly fuxi: unknown;
}

function sourceOf(cell: MarkedCell): string {
  return typeof cell.source === 'function' ? cell.source() : cell.source;
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

/**
 * What the marks read of a cell's `metadata.fuxi`: its record's cell id, parent and the
 * start of its prompt, `about` and `provenance`. A record can be megabytes; the notebook
 * keeps this much of each cell, taken when that cell's metadata changes, so a redraw
 * never copies records.
 */
export function markedFuxi(fuxi: unknown): JSONObject | undefined {
  if (!isObject(fuxi)) {
    return undefined;
  }
  const kept: JSONObject = {};
  if (isObject(fuxi.record)) {
    const { cell_id, parent, prompt } = fuxi.record;
    kept.record = {
      cell_id,
      parent,
      prompt: typeof prompt === 'string' ? prompt.slice(0, 400) : prompt
    };
  }
  for (const key of ['about', 'provenance']) {
    if (fuxi[key] !== undefined) {
      kept[key] = fuxi[key];
    }
  }
  return kept;
}

function recordOf(cell: MarkedCell): JSONObject | null {
  return isObject(cell.fuxi) && isObject(cell.fuxi.record) ? cell.fuxi.record : null;
}

function quoted(text: string): string {
  return text ? ` “${text}”` : '';
}

/** Where each cell is, by its id and by its record's cell id (looked up once). */
interface Places {
  byId: Map<string, number>;
  byRecord: Map<string, number>;
}

function places(cells: readonly MarkedCell[]): Places {
  const found: Places = { byId: new Map(), byRecord: new Map() };
  cells.forEach((cell, index) => {
    found.byId.set(cell.id, index);
    const recorded = recordOf(cell)?.cell_id;
    if (typeof recorded === 'string' && !found.byRecord.has(recorded)) {
      found.byRecord.set(recorded, index);
    }
  });
  return found;
}

/** `cell 4 “load the sales data”`: an agent cell by its place and its prompt. */
function agentCell(cells: readonly MarkedCell[], index: number): string {
  const record = recordOf(cells[index]);
  const prompt = record && typeof record.prompt === 'string' ? record.prompt : '';
  return `cell ${index + 1}${quoted(firstWords(prompt || sourceOf(cells[index])))}`;
}

function continues(cells: readonly MarkedCell[], at: Places, cell: MarkedCell): string | null {
  const record = recordOf(cell);
  const parent = record?.parent;
  if (typeof parent !== 'string' || !parent) {
    return null;
  }
  const index = at.byRecord.get(parent) ?? -1;
  return index >= 0
    ? `↳ continues the conversation of ${agentCell(cells, index)}`
    : '↳ continues a conversation whose earlier cells are not in this notebook';
}

function about(cells: readonly MarkedCell[], at: Places, cell: MarkedCell): string | null {
  const ids = isObject(cell.fuxi) && Array.isArray(cell.fuxi.about) ? cell.fuxi.about : [];
  const named = ids
    .filter((id): id is string => typeof id === 'string')
    .map(id => {
      const index = at.byId.get(id) ?? -1;
      return index >= 0
        ? `cell ${index + 1}${quoted(firstWords(sourceOf(cells[index])))}`
        : 'a cell no longer in the notebook';
    });
  return named.length ? `about ${named.join(', ')}` : null;
}

const VERBS: { [tool: string]: string } = { InsertCell: 'Inserted', EditCell: 'Edited' };

function when(at: unknown): string {
  return typeof at === 'string' ? at.replace('T', ' ').replace(/Z$/, ' UTC') : '';
}

function provenance(cells: readonly MarkedCell[], at: Places, cell: MarkedCell): string[] {
  const entries =
    isObject(cell.fuxi) && Array.isArray(cell.fuxi.provenance) ? cell.fuxi.provenance : [];
  return entries.filter(isObject).map(entry => {
    const tool = typeof entry.tool === 'string' ? entry.tool : 'a cell tool';
    // by its id, or by its record's (nbstripout without --keep-id renumbers the ids)
    const agent = typeof entry.agent_cell === 'string' ? entry.agent_cell : '';
    const index = at.byId.get(agent) ?? at.byRecord.get(agent) ?? -1;
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
  const at = places(cells);
  for (const cell of cells) {
    const lines = [continues(cells, at, cell), about(cells, at, cell)].filter(
      (line): line is string => line !== null
    );
    const history = provenance(cells, at, cell);
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
