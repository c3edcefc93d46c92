// Text the service accepts from clients. PostgreSQL text and jsonb cannot hold U+0000, and a lone
// UTF-16 surrogate cannot be written as UTF-8 (it would be silently replaced, or refused by jsonb),
// so both are bad input wherever a client hands us a string.

const LONE_SURROGATE_SOURCE = '[\\uD800-\\uDBFF](?![\\uDC00-\\uDFFF])|(?<![\\uD800-\\uDBFF])[\\uDC00-\\uDFFF]';
const LONE_SURROGATE = new RegExp(LONE_SURROGATE_SOURCE);
const UNSTORABLE = new RegExp(`\\u0000|${LONE_SURROGATE_SOURCE}`, 'g');

/** Whether the string holds a character text cannot hold (U+0000, an unpaired surrogate). */
export const hasUnstorable = (s: string) => s.includes('\u0000') || LONE_SURROGATE.test(s);

/** The string with every character text cannot hold (U+0000, unpaired surrogates) replaced by U+FFFD. */
export const storableText = (s: string) => s.replace(UNSTORABLE, '\uFFFD');

/** Why the string cannot be stored as text, or undefined when it can. */
export function textProblem(s: string): string | undefined {
  if (s.includes('\u0000')) return 'must not contain the NUL character (\\u0000)';
  if (LONE_SURROGATE.test(s)) return 'must be valid Unicode (no unpaired surrogate)';
  return undefined;
}

// C0 controls, DEL and C1 controls: never part of a URL or a one-line name, and a CR/LF stored in one ends
// up splitting a header, a log line or a CSV row wherever it is written out again.
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;
const CONTROL_BUT_LINE_BREAKS = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f]/;

/**
 * Why the string cannot be a one-line value (a URL, a name), or undefined when it can: it holds a control
 * character. With `lineBreaks`, free text: tab, LF and CR are allowed, other control characters are not.
 */
export function controlCharacterProblem(s: string, opts: { lineBreaks?: boolean } = {}): string | undefined {
  if ((opts.lineBreaks ? CONTROL_BUT_LINE_BREAKS : CONTROL).test(s)) {
    return opts.lineBreaks
      ? 'must not contain control characters other than tab and line breaks'
      : 'must not contain control characters (such as CR or LF)';
  }
  return undefined;
}

/**
 * The first string or key in a parsed JSON value that cannot be stored as text, with its path
 * (`events.0.name`), or undefined. Walked without recursion, so depth cannot exhaust the stack.
 */
export function textProblemIn(value: unknown): { path: string; message: string } | undefined {
  const stack: { v: unknown; path: string }[] = [{ v: value, path: '' }];
  const at = (path: string, key: string | number) => (path ? `${path}.${key}` : String(key));
  while (stack.length) {
    const { v, path } = stack.pop()!;
    if (typeof v === 'string') {
      const p = textProblem(v);
      if (p) return { path, message: p };
    } else if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push({ v: v[i], path: at(path, i) });
    } else if (v !== null && typeof v === 'object') {
      for (const [k, child] of Object.entries(v)) {
        const p = textProblem(k);
        if (p) return { path: at(path, k), message: `key ${p}` };
        stack.push({ v: child, path: at(path, k) });
      }
    }
  }
  return undefined;
}

/** Bounds on free-form JSON from clients (event properties): deep or wide values cost every reader. */
export const JSON_LIMITS = { maxDepth: 32, maxEntries: 1000 } as const;

/**
 * Why a free-form JSON value is refused, with the path to the offending part, or undefined when it is
 * fine: nested deeper than maxDepth, more than maxEntries keys and items in all, text PostgreSQL cannot
 * store, or a key that would reach an object's prototype when merged. Walked without recursion, so
 * no value can exhaust the stack.
 */
export function jsonProblem(value: unknown, limits = JSON_LIMITS): { path: string; message: string } | undefined {
  const stack: { v: unknown; path: string; depth: number }[] = [{ v: value, path: '', depth: 0 }];
  let entries = 0;
  const at = (path: string, key: string | number) => (path ? `${path}.${key}` : String(key));
  while (stack.length) {
    const { v, path, depth } = stack.pop()!;
    if (typeof v === 'string') {
      const p = textProblem(v);
      if (p) return { path, message: p };
      continue;
    }
    if (typeof v === 'number' && !Number.isFinite(v)) return { path, message: 'must be a finite number' };
    if (v === null || typeof v !== 'object') continue;
    if (depth >= limits.maxDepth) return { path, message: `is nested deeper than ${limits.maxDepth} levels` };
    const children: [string | number, unknown][] = Array.isArray(v) ? v.map((x, i) => [i, x]) : Object.entries(v);
    entries += children.length;
    if (entries > limits.maxEntries) return { path, message: `has more than ${limits.maxEntries} keys and items in all` };
    for (const [k, child] of children) {
      if (typeof k === 'string') {
        const p = textProblem(k);
        if (p) return { path: at(path, k), message: `key ${p}` };
        if (k === '__proto__' || (k === 'constructor' && child !== null && typeof child === 'object' && 'prototype' in child)) {
          return { path: at(path, k), message: 'is a key that is not allowed' };
        }
      }
      stack.push({ v: child, path: at(path, k), depth: depth + 1 });
    }
  }
  return undefined;
}
