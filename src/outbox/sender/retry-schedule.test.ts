import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { MAX_ATTEMPTS, MAX_RETRY_AFTER_MS, nextAttemptAt, RETRY_DELAYS_MS, RETRY_JITTER, RETRY_SPAN_MS } from './retry-schedule.ts';

const now = new Date('2026-11-20T00:00:00Z');
const after = (attemptsMade: number, random = () => 0, retryAfterMs?: number) =>
  nextAttemptAt(attemptsMade, now, { random, retryAfterMs })!.getTime() - now.getTime();

const trim = (s: string) => s.trim();

/** What docs/decisions.md §5, the contract receivers read, says the schedule is. */
function documentedSchedule() {
  const text = readFileSync(join(import.meta.dirname, '..', '..', '..', 'docs', 'decisions.md'), 'utf8');
  const section = text.slice(text.indexOf('## 5. Outbound webhooks'), text.indexOf('## 6.'));
  const lines = section.split('\n').map((l) => l.trim());
  const header = lines.findIndex((l) => /^\|\s*attempt\s*\|/.test(l));
  // The cells after the row's label: `| attempt | 2 | 3 |` gives ['2', '3'].
  const cells = (line: string) => line.split('|').slice(2, -1).map(trim);
  const unit: Record<string, number> = { s: 1_000, min: 60_000, h: 3_600_000 };
  const ms = (cell: string) => {
    const [, n, u] = /^(\d+) (s|min|h)$/.exec(cell) ?? [];
    if (!u) throw new Error(`docs/decisions.md §5: "${cell}" is not a wait such as "5 min"`);
    return Number(n) * unit[u]!;
  };
  return {
    attemptNumbers: cells(lines[header]!).map(Number),
    delaysMs: cells(lines[header + 2]!).map(ms),
    attempts: Number(/(\d+) attempts over/.exec(section)?.[1]),
    spanHours: Number(/over about ([\d.]+) h/.exec(section)?.[1]),
    jitterPercent: Number(/up to (\d+) %/.exec(section)?.[1]),
  };
}

describe('the retry schedule', () => {
  it('is the one docs/decisions.md §5 states: each wait, the number of attempts, the jitter and the span', () => {
    const doc = documentedSchedule();
    expect(RETRY_DELAYS_MS).toEqual(doc.delaysMs);
    expect(doc.attemptNumbers).toEqual(RETRY_DELAYS_MS.map((_, i) => i + 2));
    expect(MAX_ATTEMPTS).toBe(doc.attempts);
    expect(RETRY_JITTER * 100).toBe(doc.jitterPercent);
    expect(RETRY_SPAN_MS / 3_600_000).toBeCloseTo(doc.spanHours, 1);
  });

  it('is stated the same where receivers read about it: the span, the attempts and the Retry-After cap', () => {
    const doc = (name: string) => readFileSync(join(import.meta.dirname, '..', '..', '..', 'docs', name), 'utf8');
    const hours = (ms: number) => ms / 3_600_000;
    const words = ['zero', 'one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine', 'ten', 'eleven', 'twelve'];
    const receiving = doc('receiving-webhooks.md');
    expect(receiving).toContain(`about ${hours(RETRY_SPAN_MS).toFixed(1)} h`);
    expect(receiving).toContain(`${words[MAX_ATTEMPTS]} attempts`);
    expect(receiving).toContain(`at most ${hours(MAX_RETRY_AFTER_MS)} h later`);
    expect(doc('decisions.md')).toContain(`no further than the longest wait below (${hours(MAX_RETRY_AFTER_MS)} h)`);
  });

  it('waits the scheduled time before each attempt, never less than before the one before it', () => {
    expect(Array.from({ length: MAX_ATTEMPTS - 1 }, (_, i) => after(i + 1))).toEqual(RETRY_DELAYS_MS);
    RETRY_DELAYS_MS.slice(1).forEach((wait, i) => expect(wait).toBeGreaterThanOrEqual(RETRY_DELAYS_MS[i]!));
  });

  it('gives up after the last attempt', () => {
    expect(nextAttemptAt(MAX_ATTEMPTS, now)).toBeNull();
  });

  it('adds at most the stated jitter', () => {
    const wait = RETRY_DELAYS_MS[1]!;
    expect(after(2, () => 0.999_999)).toBeLessThan(wait * (1 + RETRY_JITTER));
    expect(after(2, () => 0.5)).toBe(wait * (1 + RETRY_JITTER / 2));
  });

  it('waits at least as long as the receiver’s Retry-After asks', () => {
    const wait = RETRY_DELAYS_MS[0]!;
    expect(after(1, () => 0, wait + 60_000)).toBe(wait + 60_000);
    expect(after(1, () => 0, wait - 1)).toBe(wait);
  });

  it('waits no longer than the longest scheduled wait for a Retry-After that asks for more, or for one that is no number', () => {
    expect(MAX_RETRY_AFTER_MS).toBe(Math.max(...RETRY_DELAYS_MS));
    expect(after(1, () => 0, 1e23)).toBe(MAX_RETRY_AFTER_MS);
    expect(after(1, () => 0, Number.POSITIVE_INFINITY)).toBe(RETRY_DELAYS_MS[0]);
    expect(after(1, () => 0, Number.NaN)).toBe(RETRY_DELAYS_MS[0]);
  });
});
