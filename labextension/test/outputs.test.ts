/**
 * What the extension tells the kernel a cell's outputs show (src/outputs.ts `summarize`)
 * against the table the Python emulation is checked against too
 * (fuxi_notebook/testing/output_cases.json), in plain node: `npm test`.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

import { summarize } from '../src/outputs';

interface Case {
  name: string;
  outputs: unknown[];
  summary: unknown;
}

const TABLE = join(__dirname, '../../../../fuxi_notebook/testing/output_cases.json');
const table = JSON.parse(readFileSync(TABLE, 'utf8')) as { cases: Case[] };

for (const one of table.cases) {
  test(one.name, () => {
    assert.deepEqual(summarize(one.outputs), one.summary);
  });
}
