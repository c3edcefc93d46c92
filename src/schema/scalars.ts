import { Kind, valueFromASTUntyped } from 'graphql';
import { isCalendarDay, parseDateTime } from '../datetime.ts';
import { validationFailed } from '../errors.ts';
import { JSON_LIMITS, jsonProblem } from '../text.ts';
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
  const d = parseDateTime(v);
  if (!d) throw validationFailed([{ path: 'datetime', message: 'must be an ISO 8601 date-time in years 0001 to 9999' }]);
  return d;
};

builder.scalarType('DateTime', {
  description: 'An ISO 8601 date-time in UTC, e.g. 2026-11-22T10:00:00.000Z; years 0001 to 9999.',
  serialize: (v) => (v instanceof Date ? v.toISOString() : new Date(v).toISOString()),
  parseValue: parseDate,
  parseLiteral: (ast) => parseDate(ast.kind === Kind.STRING ? ast.value : undefined),
});

builder.scalarType('Date', {
  description: 'A calendar day in UTC, e.g. 2026-11-22.',
  serialize: (v) => (v instanceof Date ? v.toISOString().slice(0, 10) : String(v).slice(0, 10)),
  parseValue: (v) => {
    if (!isCalendarDay(v)) {
      throw validationFailed([{ path: 'date', message: 'must be a date such as 2026-11-22' }]);
    }
    return v;
  },
});

// Free-form input is bounded here, where every field of this type passes, so no resolver can forget it.
const parseJson = (v: unknown) => {
  const problem = jsonProblem(v);
  if (problem) throw validationFailed([{ path: problem.path ? `json.${problem.path}` : 'json', message: problem.message }]);
  return v;
};

builder.scalarType('JSON', {
  description: `Any JSON value; as input, nested at most ${JSON_LIMITS.maxDepth} deep with at most ${JSON_LIMITS.maxEntries} keys and items.`,
  serialize: (v) => v,
  parseValue: parseJson,
  parseLiteral: (ast, variables) => parseJson(valueFromASTUntyped(ast, variables)),
});
