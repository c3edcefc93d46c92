import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { prismaTables, tableWrites } from '../support/table-writers.ts';

const root = new URL('../..', import.meta.url).pathname;
const doc = readFileSync(`${root}docs/architecture.md`, 'utf8');
const section = doc.slice(doc.indexOf('## Who writes each table'));

const modulesIn = (cell: string) => [...cell.matchAll(/`([^`]+)`/g)].map((m) => m[1]!);
const declared = new Map(
  [...section.matchAll(/^\| `([a-z_]+)` \| (`[^`]+`) \|(.*)\|$/gm)].map((row) => [
    row[1]!,
    { owner: modulesIn(row[2]!)[0]!, still: new Set(modulesIn(row[3]!)) },
  ]),
);
// The passes that delete over every table by age or by workspace (the section's first exception).
const bulkDeleters = new Set(['src/lifecycle/retention.ts', 'src/lifecycle/workspace-purge.ts']);
const { writers, dynamic, onlyDeletes } = tableWrites(root);
const deletesInBulk = (table: string, module: string) => bulkDeleters.has(module) && !!onlyDeletes.get(table)?.has(module);

describe('one module writes each table (docs/architecture.md, "Who writes each table")', () => {
  it('names an owner for every table of the schema, and no table that is not in it', () => {
    expect([...declared.keys()].sort()).toEqual([...new Set(prismaTables(root).values())].sort());
  });

  it('finds no module writing a table other than its owner and the writers still listed', () => {
    const strangers = [...writers].flatMap(([table, modules]) => {
      const d = declared.get(table);
      return [...modules].filter((m) => m !== d?.owner && !d?.still.has(m) && !deletesInBulk(table, m)).map((m) => `${m} writes ${table}`);
    });
    expect(strangers).toEqual([]);
  });

  it('lists only writers that still write the table, so the list shrinks as tables move to their owner', () => {
    const gone = [...declared].flatMap(([table, d]) =>
      [d.owner, ...d.still].filter((m) => !writers.get(table)?.has(m)).map((m) => `${m} no longer writes ${table}`),
    );
    expect(gone).toEqual([]);
  });

  it('leaves statements with a table named at run time to the passes that delete over every table', () => {
    expect([...dynamic].filter((m) => !bulkDeleters.has(m))).toEqual([]);
  });

  it('sees a write in every form the code uses, so a new writer cannot hide', () => {
    // The scanner's own check, on what it found in the tree: raw SQL, Prisma calls and a table named at run time.
    expect(writers.get('audit_events')).toContain('src/services/audit.ts');
    expect(writers.get('api_keys')).toContain('src/services/api-keys.ts');
    expect(writers.get('alerts')).toContain('src/scoring/alert-rows.ts');
    expect(dynamic).toContain('src/lifecycle/retention.ts');
    // A bulk deleter's delete is told from its other writes: only the first is excused.
    expect(onlyDeletes.get('tenants')).toContain('src/lifecycle/workspace-purge.ts');
    expect(onlyDeletes.get('alerts')).not.toContain('src/scoring/alert-rows.ts');
  });
});
