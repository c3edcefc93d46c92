import { z } from 'zod';

/** Amounts on the wire: a string with two fraction digits in the currency's unit (docs/decisions.md §5). */
export const amount = z.string().regex(/^-?\d+\.\d{2}$/);

// ISO 4217 minor-unit exponents that differ from 2 (docs/decisions.md §5: convert with the currency's exponent).
const EXPONENT: Record<string, number> = {
  bif: 0,
  clp: 0,
  djf: 0,
  gnf: 0,
  isk: 0,
  jpy: 0,
  kmf: 0,
  krw: 0,
  pyg: 0,
  rwf: 0,
  ugx: 0,
  uyi: 0,
  vnd: 0,
  vuv: 0,
  xaf: 0,
  xof: 0,
  xpf: 0,
  bhd: 3,
  iqd: 3,
  jod: 3,
  kwd: 3,
  lyd: 3,
  omr: 3,
  tnd: 3,
  clf: 4,
  uyw: 4,
};

// Own keys only: a name such as `constructor` must not find Object.prototype's.
export const exponentOf = (currency: string) => {
  const code = currency.toLowerCase();
  return Object.hasOwn(EXPONENT, code) ? EXPONENT[code]! : 2;
};

/** Whether a value is a three-letter ISO 4217 code, in any case. */
export const isCurrencyCode = (value: unknown): value is string => typeof value === 'string' && /^[a-z]{3}$/i.test(value);

/** A provider's currency as the three-letter ISO 4217 code it must be, lowercased; anything else is refused. */
export function currencyCode(value: unknown): string {
  if (isCurrencyCode(value)) return value.toLowerCase();
  throw new Error(`not a currency code: ${String(JSON.stringify(value)).slice(0, 40)}`);
}

/**
 * A minor-unit amount as a decimal string with exactly two fraction digits, rounded half away from
 * zero: usd 12345 → "123.45", jpy 1500 → "1500.00", kwd 12345 → "12.35". Integer arithmetic only.
 */
export function formatAmount(minor: bigint | number, currency: string): string {
  const exp = exponentOf(currency);
  let v = BigInt(minor);
  const negative = v < 0n;
  if (negative) v = -v;
  let cents: bigint;
  if (exp >= 2) {
    const div = 10n ** BigInt(exp - 2);
    cents = v / div;
    if ((v % div) * 2n >= div) cents += 1n;
  } else {
    cents = v * 10n ** BigInt(2 - exp);
  }
  const whole = cents / 100n;
  const frac = (cents % 100n).toString().padStart(2, '0');
  return `${negative && cents !== 0n ? '-' : ''}${whole}.${frac}`;
}
