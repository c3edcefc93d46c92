// Finds which modules of src/ change which tables: SQL statements (INSERT, UPDATE, DELETE, MERGE,
// TRUNCATE) in the source text and Prisma's writing model methods. A statement whose table is built at
// run time (`DELETE FROM ${table}`) is reported as a dynamic write of its module.
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

export interface TableWrites {
  /** table → the modules (paths relative to the repository) that change it */
  writers: Map<string, Set<string>>;
  /** modules that write a table whose name is only known at run time */
  dynamic: Set<string>;
  /** table → the modules whose every change of it is a DELETE (SQL or Prisma) */
  onlyDeletes: Map<string, Set<string>>;
}

const PRISMA_WRITES = [
  'create',
  'createMany',
  'createManyAndReturn',
  'update',
  'updateMany',
  'updateManyAndReturn',
  'upsert',
  'delete',
  'deleteMany',
];

/** The tables of prisma/schema.prisma, keyed by the name of their Prisma client accessor. */
export function prismaTables(root: string): Map<string, string> {
  const schema = readFileSync(join(root, 'prisma/schema.prisma'), 'utf8');
  const tables = new Map<string, string>();
  for (const model of schema.matchAll(/^model (\w+) \{([\s\S]*?)^\}/gm)) {
    const name = model[1]!;
    const mapped = /@@map\("([^"]+)"\)/.exec(model[2]!)?.[1] ?? name;
    tables.set(name[0]!.toLowerCase() + name.slice(1), mapped);
  }
  return tables;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((entry) => {
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) return entry === 'generated' ? [] : sourceFiles(path);
    return /\.tsx?$/.test(entry) && !/\.test\.tsx?$/.test(entry) ? [path] : [];
  });
}

// Comments mention statements without running them.
function withoutComments(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`\\])\/\/.*$/gm, '$1');
}

const TABLE = String.raw`(?:"?([a-z_][a-z0-9_]*)"?|(\$\{[^}]+\}))`;
const DELETE = new RegExp(String.raw`\bDELETE\s+FROM\s+${TABLE}`, 'gi');
const STATEMENTS = [
  new RegExp(String.raw`\bINSERT\s+INTO\s+${TABLE}`, 'gi'),
  DELETE,
  new RegExp(String.raw`\bMERGE\s+INTO\s+${TABLE}`, 'gi'),
  new RegExp(String.raw`\bTRUNCATE\s+(?:TABLE\s+)?${TABLE}`, 'gi'),
  // `UPDATE t [AS] [alias] SET`; the SET rules out `FOR UPDATE`, `FOR NO KEY UPDATE` and `DO UPDATE SET`.
  new RegExp(String.raw`\bUPDATE\s+(?:ONLY\s+)?${TABLE}\s+(?:(?:AS\s+)?[a-z_]\w*\s+)?SET\b`, 'gi'),
];

export function tableWrites(root: string): TableWrites {
  const accessors = prismaTables(root);
  const tables = new Set(accessors.values());
  const writers = new Map<string, Set<string>>();
  const dynamic = new Set<string>();
  const otherThanDelete = new Set<string>();
  const add = (table: string, module: string, deletes: boolean) => {
    if (!writers.has(table)) writers.set(table, new Set());
    writers.get(table)!.add(module);
    if (!deletes) otherThanDelete.add(`${table} ${module}`);
  };
  const prismaCall = new RegExp(String.raw`\.(${[...accessors.keys()].join('|')})\s*\.\s*(${PRISMA_WRITES.join('|')})\s*\(`, 'g');
  for (const file of sourceFiles(join(root, 'src'))) {
    const module = relative(root, file);
    const text = withoutComments(readFileSync(file, 'utf8'));
    for (const pattern of STATEMENTS) {
      for (const match of text.matchAll(pattern)) {
        const [, name, interpolated] = match;
        if (interpolated) dynamic.add(module);
        else if (name && tables.has(name.toLowerCase())) add(name.toLowerCase(), module, pattern === DELETE);
      }
    }
    for (const match of text.matchAll(prismaCall)) add(accessors.get(match[1]!)!, module, match[2]!.startsWith('delete'));
  }
  const onlyDeletes = new Map(
    [...writers].map(([table, modules]) => [table, new Set([...modules].filter((m) => !otherThanDelete.has(`${table} ${m}`)))]),
  );
  return { writers, dynamic, onlyDeletes };
}
