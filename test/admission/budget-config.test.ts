import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.ts';

describe('overload budgets and timeouts in the configuration', () => {
  it('applies the documented defaults', () => {
    const c = loadConfig({});
    expect(c.overload).toMatchObject({
      maxInFlight: 256,
      maxInFlightPerTenant: 64,
      maxActivePerTenant: 5,
      maxActive: 10,
      maxInFlightInbound: 128,
      maxInFlightAnonymous: 64,
      maxUnauthenticatedPerAddress: 64,
    });
    expect(c.http).toMatchObject({
      requestTimeoutMs: 30_000,
      unauthenticatedBodyTimeoutMs: 5000,
      headersTimeoutMs: 10_000,
      keepAliveTimeoutMs: 72_000,
    });
    expect(c.database.poolWaitMs).toBe(5000);
  });

  it('gives each tenant a quarter of the API budget unless told otherwise', () => {
    expect(loadConfig({ MAX_IN_FLIGHT: '40' }).overload.maxInFlightPerTenant).toBe(10);
    expect(loadConfig({ MAX_IN_FLIGHT: '40', MAX_IN_FLIGHT_PER_TENANT: '40' }).overload.maxInFlightPerTenant).toBe(40);
  });

  it('refuses a tenant share larger than the whole API budget', () => {
    expect(() => loadConfig({ MAX_IN_FLIGHT: '10', MAX_IN_FLIGHT_PER_TENANT: '11' })).toThrow(ConfigError);
    expect(() => loadConfig({ MAX_IN_FLIGHT: '10', MAX_IN_FLIGHT_PER_TENANT: '11' })).toThrow(/MAX_IN_FLIGHT_PER_TENANT/);
  });

  it('keeps the shorter deadlines within the whole-request deadline', () => {
    const c = loadConfig({ REQUEST_TIMEOUT_MS: '1000' });
    expect(c.http.unauthenticatedBodyTimeoutMs).toBe(1000);
    expect(c.http.headersTimeoutMs).toBe(1000);
  });

  it('refuses budgets and timeouts that are not positive integers', () => {
    for (const [k, v] of [
      ['MAX_IN_FLIGHT_INBOUND', '0'],
      ['MAX_UNAUTHENTICATED_PER_ADDRESS', 'many'],
      ['UNAUTHENTICATED_BODY_TIMEOUT_MS', '-5'],
      ['DATABASE_POOL_WAIT_MS', '1.5'],
    ]) {
      expect(() => loadConfig({ [k!]: v })).toThrow(k);
    }
  });
});
