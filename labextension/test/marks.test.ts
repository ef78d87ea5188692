/**
 * What the extension shows on cells from their metadata (src/marks.ts), in plain node:
 * the line under an agent cell (which conversation it continues, which cells it is
 * about) and the provenance badge with its tooltip naming the agent cell.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { cellMarks, firstWords, MarkedCell, markedFuxi } from '../src/marks';

const record = (cellId: string, prompt: string, parent: string | null = null): unknown => ({
  record: { cell_id: cellId, prompt, parent },
  volatile: {}
});

const cells: MarkedCell[] = [
  { id: 'load', cell_type: 'code', source: 'import pandas as pd', fuxi: undefined },
  {
    id: 'a1',
    cell_type: 'code',
    source: '%%fuxi\nload the sales data',
    fuxi: record('a1', 'load the sales data into df and show its head')
  },
  {
    id: 'made',
    cell_type: 'code',
    source: 'df = pd.read_csv("sales.csv")',
    fuxi: {
      provenance: [
        { agent_cell: 'a1', session: '3f2a1b9c-aaaa', tool: 'InsertCell', at: '2026-12-06T09:30:00Z' },
        { agent_cell: 'gone', session: '77777777-bbbb', tool: 'EditCell', at: '2026-12-06T09:40:00Z' }
      ]
    }
  },
  {
    id: 'a2',
    cell_type: 'code',
    source: '%%fuxi\nplot it',
    fuxi: { ...(record('a2', 'plot it', 'a1') as object), about: ['made', 'nowhere'] }
  },
  { id: 'a3', cell_type: 'code', source: '%%fuxi\nagain', fuxi: record('a3', 'again', 'lost') }
];

test('an agent cell that continues a conversation names the cell it continues', () => {
  const marks = cellMarks(cells);
  assert.match(
    marks.get('a2')?.line ?? '',
    /^↳ continues the conversation of cell 2 “load the sales data into df and show its head”/
  );
  assert.equal(
    marks.get('a3')?.line,
    '↳ continues a conversation whose earlier cells are not in this notebook'
  );
  assert.equal(marks.get('a1'), undefined); // the first cell of its conversation: no line
  assert.equal(marks.get('load'), undefined);
});

test('an agent cell about other cells names them by place and first line', () => {
  assert.match(
    cellMarks(cells).get('a2')?.line ?? '',
    / · about cell 3 “df = pd.read_csv\("sales.csv"\)”, a cell no longer in the notebook$/
  );
});

test('a cell an agent inserted or edited has a badge naming the agent cell', () => {
  const mark = cellMarks(cells).get('made');
  assert.equal(mark?.badge, 'Fuxi');
  assert.equal(mark?.line, null);
  assert.equal(
    mark?.tooltip,
    'Inserted by agent cell 2 “load the sales data into df and show its head” · InsertCell · ' +
      'session 3f2a1b9c · 2026-12-06 09:30:00 UTC\n' +
      'Edited by an agent cell no longer here · EditCell · session 77777777 · ' +
      '2026-12-06 09:40:00 UTC'
  );
});

test('an agent cell is found by its record when nbstripout renumbered the ids', () => {
  const renumbered = cells.map((cell, index) => ({ ...cell, id: String(index) }));
  assert.match(cellMarks(renumbered).get('2')?.tooltip ?? '', /^Inserted by agent cell 2 /);
});

test('malformed metadata shows nothing and breaks nothing', () => {
  const odd: MarkedCell[] = [
    { id: 'x', cell_type: 'code', source: '', fuxi: { provenance: 'no', about: 3 } },
    { id: 'y', cell_type: 'code', source: '', fuxi: [1, 2] },
    { id: 'z', cell_type: 'code', source: '', fuxi: { record: { parent: 5 } } }
  ];
  assert.equal(cellMarks(odd).size, 0);
});

test('the first words skip the magic line and blank lines', () => {
  assert.equal(firstWords('%%fuxi --model x\n\n  hello there  \nmore'), 'hello there');
  assert.equal(firstWords('x'.repeat(60)), `${'x'.repeat(47)}…`);
  assert.equal(firstWords(''), '');
});

test('what the marks keep of metadata.fuxi is small and gives the same marks', () => {
  const record = { cell_id: 'a1', prompt: 'p'.repeat(5000), parent: null, messages: ['m'] };
  const big = { record, volatile: { cost: 1 } };
  const kept = markedFuxi(big) as { record: { prompt: string; messages?: unknown } };
  assert.equal(kept.record.prompt.length, 400);
  assert.equal(kept.record.messages, undefined);
  assert.equal(JSON.stringify(kept).length < 1000, true);
  const slim = cells.map(cell => ({ ...cell, fuxi: markedFuxi(cell.fuxi) }));
  assert.deepEqual(cellMarks(slim), cellMarks(cells));
  assert.equal(markedFuxi('no'), undefined);
});
