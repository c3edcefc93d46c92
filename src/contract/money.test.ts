import { describe, expect, it } from 'vitest';
import { amount, currencyCode, exponentOf, formatAmount } from './money.ts';

describe('amounts on the wire', () => {
  it('writes two fraction digits in the currency’s unit', () => {
    expect(formatAmount(12345, 'usd')).toBe('123.45');
    expect(formatAmount(5, 'eur')).toBe('0.05');
    expect(formatAmount(0, 'usd')).toBe('0.00');
  });

  it('scales currencies without minor units up', () => {
    expect(exponentOf('JPY')).toBe(0);
    expect(formatAmount(1500, 'jpy')).toBe('1500.00');
  });

  it('rounds three- and four-digit currencies half away from zero', () => {
    expect(formatAmount(12345, 'kwd')).toBe('12.35');
    expect(formatAmount(12344, 'kwd')).toBe('12.34');
    expect(formatAmount(-12345, 'kwd')).toBe('-12.35');
    expect(formatAmount(123455, 'clf')).toBe('12.35');
  });

  it('keeps the sign of refunds and writes no negative zero', () => {
    expect(formatAmount(-4900, 'usd')).toBe('-49.00');
    expect(formatAmount(-4, 'kwd')).toBe('0.00');
  });

  it('finds no exponent on the object prototype: a code named like one of its members has two digits', () => {
    for (const name of ['constructor', '__proto__', 'toString', 'valueOf', 'hasOwnProperty']) {
      expect(exponentOf(name)).toBe(2);
      expect(formatAmount(1000, name)).toBe('10.00');
    }
  });

  it('takes three-letter currency codes from providers, lowercased, and refuses anything else', () => {
    expect(currencyCode('USD')).toBe('usd');
    for (const bad of ['constructor', 'us', 'usd ', '', 42, null, { a: 1 }]) expect(() => currencyCode(bad)).toThrow(/currency code/);
  });

  it('is exact beyond the range of a double', () => {
    expect(formatAmount(123456789012345678901234n, 'usd')).toBe('1234567890123456789012.34');
  });

  it('matches the schema every payload’s amount is checked with', () => {
    for (const s of ['123.45', '-0.50', '1500.00']) expect(amount.safeParse(s).success, s).toBe(true);
    for (const s of ['123.4', '1e3', '12.345', '']) expect(amount.safeParse(s).success, s).toBe(false);
  });
});
