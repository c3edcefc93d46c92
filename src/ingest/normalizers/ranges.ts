import type { FieldError } from '../../errors.ts';

// The bounds of what a normalizer writes from a provider's values. A value past them cannot be stored
// (a bigint or integer column overflows, a date is past what PostgreSQL or JavaScript holds, an id is
// longer than an index entry holds) and would fail the transaction applying it, with every event beside
// it: such an event is refused on acceptance (docs/inbound-webhooks.md, "Numbers, dates and ids").

/** The latest time accepted, 9999-12-31T23:59:59Z, in unix seconds; the earliest is the epoch. */
export const MAX_UNIX_SECONDS = 253_402_300_799;
/** Amounts in minor units: exact as JSON numbers, and far inside a bigint. */
export const MAX_AMOUNT = Number.MAX_SAFE_INTEGER;
/** Counts stored in an integer column (seats). */
export const MAX_COUNT = 2 ** 31 - 1;
/**
 * Ids, names and emails stored in an indexed column (a provider's account or object id, a customer's name,
 * the domain of an email), in UTF-8 bytes: an index entry holds about 2.7 kB, and no provider's is near this.
 */
export const MAX_KEY_BYTES = 1024;

/** The numbers of one event found out of range, each with its path in the body. */
export class RangeCheck {
  readonly errors: FieldError[] = [];

  /** Unix seconds, as a number (or, with `numericString`, a string of one): read as a time only then. */
  unix(path: string, v: unknown, opts: { numericString?: boolean } = {}): this {
    const n = typeof v === 'number' ? v : opts.numericString && typeof v === 'string' && v.trim() !== '' ? Number(v) : NaN;
    if (Number.isFinite(n) && (n < 0 || n > MAX_UNIX_SECONDS))
      this.errors.push({ path, message: `is not a time between 1970 and 9999 in unix seconds (0 to ${MAX_UNIX_SECONDS})` });
    return this;
  }

  /** An ISO 8601 time, when it parses. */
  isoTime(path: string, v: unknown): this {
    const ms = typeof v === 'string' ? Date.parse(v) : NaN;
    if (Number.isFinite(ms) && (ms < 0 || ms > MAX_UNIX_SECONDS * 1000))
      this.errors.push({ path, message: 'is not a time between 1970 and 9999' });
    return this;
  }

  /** An amount in minor units; absent or null is none. */
  amount(path: string, v: unknown): this {
    if (v === undefined || v === null) return this;
    const n = typeof v === 'number' ? v : typeof v === 'string' ? Number(v) : NaN;
    if (!Number.isFinite(n) || Math.abs(n) > MAX_AMOUNT)
      this.errors.push({ path, message: `is not an amount in minor units between -${MAX_AMOUNT} and ${MAX_AMOUNT}` });
    return this;
  }

  /** A count (a quantity of seats, say); absent or null is none. */
  count(path: string, v: unknown, max = MAX_COUNT): this {
    if (v === undefined || v === null) return this;
    const n = typeof v === 'number' ? v : typeof v === 'string' ? Number(v) : NaN;
    if (!Number.isFinite(n) || n < 0 || n > max) this.errors.push({ path, message: `is not a count between 0 and ${max}` });
    return this;
  }

  /** An id, name or email written to an indexed column (a string, or a number written as one). */
  key(path: string, v: unknown): this {
    if ((typeof v === 'string' || typeof v === 'number') && Buffer.byteLength(String(v)) > MAX_KEY_BYTES)
      this.errors.push({ path, message: `is longer than ${MAX_KEY_BYTES} bytes: no index could hold it` });
    return this;
  }

  /** A rule of the caller's own: `ok` false adds `message` at `path`. */
  rule(path: string, ok: boolean, message: string): this {
    if (!ok) this.errors.push({ path, message });
    return this;
  }
}
