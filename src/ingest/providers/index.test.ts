import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PROVIDER_SPECS } from './index.ts';
import { PROVIDERS } from './types.ts';

describe('the provider registry', () => {
  it('holds each provider’s spec under its own name', () => {
    for (const p of PROVIDERS) expect(PROVIDER_SPECS[p].name).toBe(p);
  });

  it('has a row for every provider in the table of docs/inbound-webhooks.md, the one place that lists them', () => {
    const doc = readFileSync(join(import.meta.dirname, '..', '..', '..', 'docs', 'inbound-webhooks.md'), 'utf8');
    const lines = doc.slice(doc.indexOf('| `{provider}` |')).split('\n');
    const end = lines.findIndex((l) => !l.startsWith('|'));
    const rows = lines.slice(2, end);
    const documented = rows.map((row) => /^\| `([a-z_]+)` \|/.exec(row)?.[1]);
    expect(documented).toEqual([...PROVIDERS]);
  });
});
