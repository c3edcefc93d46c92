import type { ObjectRef } from '@pothos/core';
import { queryFromInfo } from '@pothos/plugin-prisma';
import type { GraphQLResolveInfo } from 'graphql';
import { parseDateTime } from '../datetime.ts';
import { validationFailed } from '../errors.ts';
import { textProblem } from '../text.ts';
import { isUuid } from '../uuid.ts';
import { builder } from './builder.ts';

export const DEFAULT_PAGE_SIZE = 25;
export const MAX_PAGE_SIZE = 100;

export interface Page<T> {
  nodes: T[];
  pageInfo: { hasNextPage: boolean; endCursor: string | null };
  totalCount: () => Promise<number>;
}

/** The order of a page: a field, a direction, then the id; null values always last. */
export interface Sort {
  field: string;
  direction: 'asc' | 'desc';
  /** How the field's values travel in a cursor; an integer column is bound as int4, so a fraction is forged. */
  kind: 'date' | 'string' | 'integer' | 'number';
  /** Nullable fields need their nulls placed explicitly. */
  nullable?: boolean;
  /** The values a number field can hold (default: a 32-bit integer's); a cursor outside them is forged. */
  range?: readonly [number, number];
}

const INT32: readonly [number, number] = [-2_147_483_648, 2_147_483_647];
/** Longer than any string field a page is sorted by. */
const MAX_CURSOR_TEXT = 2000;

export const NEWEST_FIRST: Sort = { field: 'createdAt', direction: 'desc', kind: 'date' };

type Key = Date | string | number | null;

// A cursor names the order it was issued for (the default order's stay two-element), so one passed to
// another order is refused rather than silently skipping or repeating rows.
const orderTag = (sort: Sort) =>
  sort.field === NEWEST_FIRST.field && sort.direction === NEWEST_FIRST.direction ? null : `${sort.field}.${sort.direction}`;

/** Cursors are opaque to clients: base64url of the sort value and id of the last row seen. */
export function encodeCursor(value: Key, id: string, sort: Sort = NEWEST_FIRST): string {
  const tag = orderTag(sort);
  const v = value instanceof Date ? value.toISOString() : value;
  return Buffer.from(JSON.stringify(tag ? [v, id, tag] : [v, id])).toString('base64url');
}

/** The sort value a cursor carries, if it is one this order could have issued; anything else is forged. */
function keyOf(raw: unknown, sort: Sort): Key | undefined {
  if (raw === null) return sort.nullable ? null : undefined;
  if (sort.kind === 'date') return parseDateTime(raw);
  if (sort.kind === 'string') return typeof raw === 'string' && raw.length <= MAX_CURSOR_TEXT && !textProblem(raw) ? raw : undefined;
  const [min, max] = sort.range ?? INT32;
  if (typeof raw !== 'number' || !Number.isFinite(raw) || raw < min || raw > max) return undefined;
  return sort.kind === 'integer' && !Number.isInteger(raw) ? undefined : raw;
}

export function decodeCursor(cursor: string, sort: Sort = NEWEST_FIRST): { value: Key; id: string } {
  let decoded: unknown;
  try {
    decoded = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    decoded = undefined;
  }
  // Every part is checked for type and range here: a forged value must not reach the database.
  if (Array.isArray(decoded) && decoded.length <= 3) {
    const [raw, id, tag] = decoded as unknown[];
    const value = isUuid(id) && (tag ?? null) === orderTag(sort) ? keyOf(raw, sort) : undefined;
    if (value !== undefined) return { value, id: id as string };
  }
  throw validationFailed([{ path: 'after', message: 'is not a cursor this API issued' }]);
}

export function pageSize(first: number | null | undefined): number {
  const n = first ?? DEFAULT_PAGE_SIZE;
  if (!Number.isInteger(n) || n < 1 || n > MAX_PAGE_SIZE) {
    throw validationFailed([{ path: 'first', message: `must be an integer from 1 to ${MAX_PAGE_SIZE}` }]);
  }
  return n;
}

/** Keyset condition for the rows after the cursor in the sort's order (values, then ids; nulls last). */
export function afterCursor(after: string | null | undefined, sort: Sort = NEWEST_FIRST) {
  if (!after) return {};
  const { value, id } = decodeCursor(after, sort);
  const beyond = sort.direction === 'desc' ? 'lt' : 'gt';
  if (value === null) return { [sort.field]: null, id: { [beyond]: id } };
  return {
    OR: [
      { [sort.field]: { [beyond]: value } },
      { [sort.field]: value, id: { [beyond]: id } },
      ...(sort.nullable ? [{ [sort.field]: null }] : []),
    ],
  };
}

export function orderOf(sort: Sort) {
  return [{ [sort.field]: sort.nullable ? { sort: sort.direction, nulls: 'last' } : sort.direction }, { id: sort.direction }];
}

/** Turns `take + 1` rows into a page. */
export function toPage<T extends { id: string }>(
  rows: T[],
  take: number,
  count: () => Promise<number>,
  sort: Sort = NEWEST_FIRST,
): Page<T> {
  const hasNextPage = rows.length > take;
  const nodes = hasNextPage ? rows.slice(0, take) : rows;
  const last = nodes[nodes.length - 1] as (T & Record<string, Key>) | undefined;
  return {
    nodes,
    pageInfo: { hasNextPage, endCursor: hasNextPage && last ? encodeCursor(last[sort.field] ?? null, last.id, sort) : null },
    totalCount: count,
  };
}

/** Prisma's query for the selection under `nodes`, with the sort field and id always read (cursors need them). */
const planOf = (plan: { context: object; info: GraphQLResolveInfo }, sort: Sort) =>
  queryFromInfo({ context: plan.context, info: plan.info, path: ['nodes'], select: { [sort.field]: true, id: true } }) as {
    select?: Record<string, unknown>;
    include?: Record<string, unknown>;
  };

/**
 * The fields read under `nodes` as Prisma's `select` ({} when the plan is every column and no relation),
 * or undefined when it includes relations.
 */
export function selectionOf(plan: { context: object; info: GraphQLResolveInfo }, sort: Sort): Record<string, unknown> | undefined {
  const q = planOf(plan, sort);
  if (q.include && Object.keys(q.include).length) return undefined;
  return q.select ?? {};
}

/** What keysetPage needs of a Prisma model delegate. */
interface Pageable<T> {
  findMany(args: object): Promise<T[]>;
  count(args: { where: object }): Promise<number>;
}

/**
 * One page of a model in the sort's order (newest first by default) after the cursor, with the
 * selection the client asked for under `nodes` (relations included) planned into the same query, so no N+1.
 */
export async function keysetPage<T extends { id: string }>(
  model: Pageable<T>,
  where: object,
  args: { first?: number | null; after?: string | null },
  plan: { context: object; info: GraphQLResolveInfo },
  sort: Sort = NEWEST_FIRST,
): Promise<Page<T>> {
  const take = pageSize(args.first);
  const rows = await model.findMany({
    ...planOf(plan, sort),
    where: { AND: [where, afterCursor(args.after, sort)] },
    orderBy: orderOf(sort),
    take: take + 1,
  });
  return toPage(rows, take, () => model.count({ where }), sort);
}

export const PageInfo = builder.objectRef<Page<unknown>['pageInfo']>('PageInfo').implement({
  fields: (t) => ({
    hasNextPage: t.exposeBoolean('hasNextPage'),
    endCursor: t.exposeString('endCursor', {
      nullable: true,
      description: 'Pass as `after` to read the next page; null on the last page.',
    }),
  }),
});

export function connectionOf<T>(name: string, node: ObjectRef<any, T>) {
  return builder.objectRef<Page<T>>(`${name}Connection`).implement({
    fields: (t) => ({
      nodes: t.field({ type: [node], resolve: (p) => p.nodes }),
      pageInfo: t.field({ type: PageInfo, resolve: (p) => p.pageInfo }),
      totalCount: t.int({ description: 'All items matching the filters; costs a count query.', resolve: (p) => p.totalCount() }),
    }),
  });
}
