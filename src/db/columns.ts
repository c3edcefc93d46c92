import type { z } from 'zod';
import { fieldsOf } from '../contract/serialize.ts';

/**
 * The select list of a shape's fields from a table whose columns carry the wire names, named as the domain
 * names them (`external_id AS "externalId"`) and enums as text: the rows are then the serializer's sources
 * (`RowOf` in src/contract/serialize.ts), and a field added to the shape is selected everywhere it is sent.
 */
export const columnsOf = (shape: z.ZodObject, table?: string): string =>
  fieldsOf(shape)
    .map((f) => {
      const column = `${table ? `${table}.` : ''}${f.key}${f.enum ? '::text' : ''}`;
      return f.from === f.key && !f.enum && !table ? column : `${column} AS "${f.from}"`;
    })
    .join(', ');
