import { Kind } from 'graphql';
import { validationFailed } from '../errors.ts';
import { isUuid } from '../uuid.ts';
import { builder } from './builder.ts';

builder.scalarType('UUID', {
  description: 'A UUID in its canonical 8-4-4-4-12 hexadecimal form.',
  serialize: (v) => String(v),
  parseValue: (v) => {
    if (!isUuid(v)) throw validationFailed([{ path: 'id', message: 'must be a UUID' }]);
    return v.toLowerCase();
  },
  parseLiteral: (ast) => {
    if (ast.kind !== Kind.STRING || !isUuid(ast.value)) throw validationFailed([{ path: 'id', message: 'must be a UUID' }]);
    return ast.value.toLowerCase();
  },
});

const parseDate = (v: unknown): Date => {
  const d = typeof v === 'string' ? new Date(v) : undefined;
  if (!d || Number.isNaN(d.getTime()) || !/^\d{4}-\d{2}-\d{2}T/.test(v as string)) {
    throw validationFailed([{ path: 'datetime', message: 'must be an ISO 8601 date-time' }]);
  }
  return d;
};

builder.scalarType('DateTime', {
  description: 'An ISO 8601 date-time in UTC, e.g. 2026-11-22T10:00:00.000Z.',
  serialize: (v) => (v instanceof Date ? v.toISOString() : new Date(v).toISOString()),
  parseValue: parseDate,
  parseLiteral: (ast) => parseDate(ast.kind === Kind.STRING ? ast.value : undefined),
});

builder.scalarType('Date', {
  description: 'A calendar day in UTC, e.g. 2026-11-22.',
  serialize: (v) => (v instanceof Date ? v.toISOString().slice(0, 10) : String(v).slice(0, 10)),
  parseValue: (v) => {
    if (typeof v !== 'string' || !/^\d{4}-\d{2}-\d{2}$/.test(v) || Number.isNaN(Date.parse(v))) {
      throw validationFailed([{ path: 'date', message: 'must be a date such as 2026-11-22' }]);
    }
    return v;
  },
});

builder.scalarType('JSON', {
  description: 'Any JSON value.',
  serialize: (v) => v,
  parseValue: (v) => v,
});
