import type { z } from 'zod';
import { serialize, type SourceOf } from '../contract/serialize.ts';

/** A GraphQL connection as a REST page (`{ data, has_more, next_cursor }`) of the shape's items. */
export const page = <S extends z.ZodType>(
  shape: S,
  connection: { nodes: readonly SourceOf<z.output<S>>[]; pageInfo: { hasNextPage: boolean; endCursor: string | null } },
) => ({
  data: connection.nodes.map((n) => serialize(shape, n)),
  has_more: connection.pageInfo.hasNextPage,
  next_cursor: connection.pageInfo.endCursor,
});
