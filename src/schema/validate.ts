import { z } from 'zod';
import { validationFailed } from '../errors.ts';
import { controlCharacterProblem } from '../text.ts';

/** A string stored as one line (a name, an id, a URL): no control character, CR and LF included. */
export const oneLine = () =>
  z.string().superRefine((s, ctx) => {
    const problem = controlCharacterProblem(s);
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  });

/** Free text stored as given (a description): line breaks and tabs, but no other control character. */
export const freeText = () =>
  z.string().superRefine((s, ctx) => {
    const problem = controlCharacterProblem(s, { lineBreaks: true });
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  });

/** Parses resolver input with zod; failures become validation_failed naming each field. */
export function parseInput<S extends z.ZodType>(schema: S, input: unknown): z.infer<S> {
  const r = schema.safeParse(input);
  if (r.success) return r.data;
  throw validationFailed(r.error.issues.map((i) => ({ path: i.path.map(String).join('.') || 'input', message: i.message })));
}
