import type { ObjectRef } from '@pothos/core';
import { queryFromInfo } from '@pothos/plugin-prisma';
import type { GraphQLResolveInfo } from 'graphql';
import { validationFailed } from '../errors.ts';
import { isUuid } from '../uuid.ts';
import { builder } from './builder.ts';

export const DEFAULT_PAGE_SIZE = 25;
export const MAX_PAGE_SIZE = 100;

export interface Page<T> {
  nodes: T[];
  pageInfo: { hasNextPage: boolean; endCursor: string | null };
  totalCount: () => Promise<number>;
}

/** Cursors are opaque to clients: base64url of the sort key of the last row seen. */
export function encodeCursor(createdAt: Date, id: string): string {
  return Buffer.from(JSON.stringify([createdAt.toISOString(), id])).toString('base64url');
}

export function decodeCursor(cursor: string): { createdAt: Date; id: string } {
  try {
    const [at, id] = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as [string, string];
    const createdAt = new Date(at);
    if (!isUuid(id) || Number.isNaN(createdAt.getTime())) throw new Error('bad cursor');
    return { createdAt, id };
  } catch {
    throw validationFailed([{ path: 'after', message: 'is not a cursor this API issued' }]);
  }
}

export function pageSize(first: number | null | undefined): number {
  const n = first ?? DEFAULT_PAGE_SIZE;
  if (!Number.isInteger(n) || n < 1 || n > MAX_PAGE_SIZE) {
    throw validationFailed([{ path: 'first', message: `must be an integer from 1 to ${MAX_PAGE_SIZE}` }]);
  }
  return n;
}

/** Keyset condition for rows after the cursor in (createdAt desc, id desc) order. */
export function afterCursor(after: string | null | undefined) {
  if (!after) return {};
  const c = decodeCursor(after);
  return { OR: [{ createdAt: { lt: c.createdAt } }, { createdAt: c.createdAt, id: { lt: c.id } }] };
}

/** Turns `take + 1` rows into a page. */
export function toPage<T extends { createdAt: Date; id: string }>(rows: T[], take: number, count: () => Promise<number>): Page<T> {
  const hasNextPage = rows.length > take;
  const nodes = hasNextPage ? rows.slice(0, take) : rows;
  const last = nodes[nodes.length - 1];
  return {
    nodes,
    pageInfo: { hasNextPage, endCursor: hasNextPage && last ? encodeCursor(last.createdAt, last.id) : null },
    totalCount: count,
  };
}

/** What keysetPage needs of a Prisma model delegate. */
interface Pageable<T> {
  findMany(args: object): Promise<T[]>;
  count(args: { where: object }): Promise<number>;
}

/**
 * One page of a model in (createdAt desc, id desc) order after the cursor, with the selection the
 * client asked for under `nodes` (relations included) planned into the same query, so no N+1.
 */
export async function keysetPage<T extends { createdAt: Date; id: string }>(
  model: Pageable<T>,
  where: object,
  args: { first?: number | null; after?: string | null },
  plan: { context: object; info: GraphQLResolveInfo },
): Promise<Page<T>> {
  const take = pageSize(args.first);
  const rows = await model.findMany({
    ...(queryFromInfo({ context: plan.context, info: plan.info, path: ['nodes'], select: { createdAt: true, id: true } }) as object),
    where: { ...where, ...afterCursor(args.after) },
    orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
    take: take + 1,
  });
  return toPage(rows, take, () => model.count({ where }));
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
