// PostgreSQL text and jsonb refuse U+0000, and jsonb refuses a lone UTF-16 surrogate, yet JSON may
// carry either (`\u0000`, `\ud800`) in any string. Events are parsed here, and only here, both on
// receipt and for processing, so whatever a normalizer writes can be stored: such characters become
// U+FFFD, and the event is processed rather than failing on every attempt.
import { hasUnstorable, storableText as clean } from '../text.ts';

/** JSON.parse for provider events, with every string (values and keys) made storable in PostgreSQL. */
export function parseEventJson(text: string): unknown {
  // Such a character reaches a parsed string only through a \u escape or as itself in the text; without
  // either, the plain parse gives the same result and spares a reviver call per value.
  if (!text.includes('\\u') && !hasUnstorable(text)) return JSON.parse(text);
  return JSON.parse(text, function (key, value) {
    if (typeof value === 'string') value = clean(value);
    const safeKey = clean(key);
    if (safeKey !== key && this && typeof this === 'object') {
      // A key with such a character: move the value to the cleaned key (the reviver cannot rename).
      (this as Record<string, unknown>)[safeKey] = value;
      return undefined;
    }
    return value;
  });
}
