import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../config.ts';
import { circuitView, DEFAULT_CIRCUIT, probeBackoffSeconds, recentAttempts } from './circuit-breaker.ts';

const at = (s: number) => new Date(Date.UTC(2026, 10, 20, 6, 0, 0) + s * 1000);
const window = (startS: number, cur: [number, number], prev: [number, number] = [0, 0]) => ({
  windowStartedAt: at(startS),
  windowAttempts: cur[0],
  windowFailures: cur[1],
  previousAttempts: prev[0],
  previousFailures: prev[1],
});

describe('the breaker’s recent attempts (a sliding window of two halves)', () => {
  it('counts the current window whole and the previous one by how much of it is still within the window', () => {
    // 60 s windows; 30 s into the current one, half of the previous still counts.
    expect(recentAttempts(window(0, [10, 4], [20, 20]), 60, at(30))).toEqual({ attempts: 20, failures: 14 });
    expect(recentAttempts(window(0, [10, 4], [20, 20]), 60, at(0))).toEqual({ attempts: 30, failures: 24 });
  });

  it('moves on one window when the current one is over, and forgets everything after two', () => {
    // 90 s after the start of a 60 s window: it became the previous one, 30 s in, so half of it counts.
    expect(recentAttempts(window(0, [10, 6], [99, 99]), 60, at(90))).toEqual({ attempts: 5, failures: 3 });
    expect(recentAttempts(window(0, [10, 6], [99, 99]), 60, at(120))).toEqual({ attempts: 0, failures: 0 });
  });
});

describe('the wait before a probe', () => {
  it('doubles with each opening since the breaker closed, up to the cap', () => {
    const s = { ...DEFAULT_CIRCUIT, probeSeconds: 30, probeMaxSeconds: 600 };
    expect([1, 2, 3, 4, 5, 6, 7, 40].map((n) => probeBackoffSeconds(s, n))).toEqual([30, 60, 120, 240, 480, 600, 600, 600]);
  });
});

describe('the breaker as the API shows it', () => {
  it('is closed, with no rate, when the endpoint has had no attempt or has no row', () => {
    expect(circuitView(null, 60)).toEqual({ state: 'closed', openedAt: null, nextProbeAt: null, failureRate: null, recentAttempts: 0 });
    expect(circuitView({ state: 'closed', openedAt: null, nextProbeAt: null, ...window(0, [0, 0]) }, 60, at(1)).failureRate).toBeNull();
  });

  it('shows the next probe only while open, and the share of recent attempts that failed', () => {
    const open = { state: 'open' as const, openedAt: at(0), nextProbeAt: at(30), ...window(0, [8, 6]) };
    expect(circuitView(open, 60, at(10))).toEqual({
      state: 'open',
      openedAt: at(0),
      nextProbeAt: at(30),
      failureRate: 0.75,
      recentAttempts: 8,
    });
    expect(circuitView({ ...open, state: 'half_open' }, 60, at(10)).nextProbeAt).toBeNull();
  });
});

describe('the breaker’s settings', () => {
  const settings = {
    CIRCUIT_FAILURE_RATE: 'failureRate',
    CIRCUIT_MIN_ATTEMPTS: 'minAttempts',
    CIRCUIT_WINDOW_SECONDS: 'windowSeconds',
    CIRCUIT_PROBE_SECONDS: 'probeSeconds',
    CIRCUIT_PROBE_MAX_SECONDS: 'probeMaxSeconds',
  } as const;

  it('default to what README’s configuration table says, and are read from the environment', () => {
    const readme = readFileSync(join(import.meta.dirname, '..', '..', '..', 'README.md'), 'utf8');
    for (const [name, key] of Object.entries(settings)) {
      const row = new RegExp(`^\\| \`${name}\` \\| \`([^\`]+)\` \\|`, 'm').exec(readme);
      expect(row, `${name} in README's configuration table`).not.toBeNull();
      expect(Number(row![1]), name).toBe(DEFAULT_CIRCUIT[key]);
    }
    expect(loadConfig({}).webhooks.circuit).toEqual(DEFAULT_CIRCUIT);
    expect(
      loadConfig({
        CIRCUIT_FAILURE_RATE: '0.8',
        CIRCUIT_MIN_ATTEMPTS: '3',
        CIRCUIT_WINDOW_SECONDS: '30',
        CIRCUIT_PROBE_SECONDS: '1',
        CIRCUIT_PROBE_MAX_SECONDS: '5',
      }).webhooks.circuit,
    ).toEqual({ failureRate: 0.8, minAttempts: 3, windowSeconds: 30, probeSeconds: 1, probeMaxSeconds: 5 });
  });

  it('refuses a rate outside (0, 1], counts that are not positive integers, and a cap below the first wait', () => {
    for (const [k, v] of [
      ['CIRCUIT_FAILURE_RATE', '0'],
      ['CIRCUIT_FAILURE_RATE', '1.5'],
      ['CIRCUIT_MIN_ATTEMPTS', '0'],
      ['CIRCUIT_WINDOW_SECONDS', '2.5'],
      ['CIRCUIT_PROBE_SECONDS', 'soon'],
    ]) {
      expect(() => loadConfig({ [k!]: v }), `${k}=${v}`).toThrow(k);
    }
    expect(() => loadConfig({ CIRCUIT_PROBE_SECONDS: '60', CIRCUIT_PROBE_MAX_SECONDS: '30' })).toThrow(ConfigError);
  });
});
