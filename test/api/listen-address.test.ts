import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';

describe('the listening address', () => {
  it('is loopback unless HOST says otherwise, for the API and the metrics listener alike', () => {
    const c = loadConfig({});
    expect(c.http.host).toBe('127.0.0.1');
    expect(c.metrics.host).toBe('127.0.0.1');
  });

  it('is what HOST names, so a container can serve other machines', () => {
    const c = loadConfig({ HOST: '0.0.0.0' });
    expect(c.http.host).toBe('0.0.0.0');
    expect(c.metrics.host).toBe('0.0.0.0');
  });
});
