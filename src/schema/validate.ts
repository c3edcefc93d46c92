import type { z } from 'zod';
import { validationFailed } from '../errors.ts';

/** Parses resolver input with zod; failures become validation_failed naming each field. */
export function parseInput<S extends z.ZodType>(schema: S, input: unknown): z.infer<S> {
  const r = schema.safeParse(input);
  if (r.success) return r.data;
  throw validationFailed(r.error.issues.map((i) => ({ path: i.path.map(String).join('.') || 'input', message: i.message })));
}
