import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { admin, freePort, startService, stop } from '../support/spawn.ts';

// The README's promise to a newcomer: with no DATABASE_URL, `npm start` runs a real embedded
// PostgreSQL, migrates, seeds a demo tenant and prints a key that works.
/**
 * A client as the API asks it to behave: a 503 carries Retry-After and is tried again. A service just
 * started on a busy machine may shed a request while its first scoring pass runs.
 */
async function get(url: string, headers: Record<string, string>): Promise<Response> {
  for (let attempt = 1; ; attempt++) {
    const res = await fetch(url, { headers });
    if (res.status !== 503 || attempt === 5) return res;
    await new Promise((r) => setTimeout(r, 1000 * Number(res.headers.get('retry-after') ?? 1)));
  }
}

describe('npm start without DATABASE_URL', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'chs-start-'));
  // The embedded server runs as the postgres OS user when we are root; it must reach the folder.
  chmodSync(dataDir, 0o755);
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it('starts, prints a working demo key, shares its database with the CLI, and restarts with the same data', async () => {
    const [port, pgPort] = [await freePort(), await freePort()];
    const env = {
      DATABASE_URL: undefined,
      AMQP_URL: undefined,
      REDIS_URL: undefined,
      DATA_DIR: dataDir,
      EMBEDDED_PG_PORT: String(pgPort),
      PORT: String(port),
      LOG_LEVEL: 'warn',
    };

    const first = startService('all', env, /Try: curl/);
    const out = await first.started;
    expect(out).toContain(`/docs`);
    const key = /API key:\s+(sk_[A-Za-z0-9]{40})/.exec(out)![1];
    const list = await get(`http://127.0.0.1:${port}/api/v1/customers?limit=100`, { authorization: `Bearer ${key}` });
    expect(list.status, await list.clone().text()).toBe(200);
    expect((await list.json()).data.length).toBeGreaterThanOrEqual(10);

    const created = await admin(['tenant:create', '--name', 'Side', '--plan', 'growth'], env);
    expect(created.code).toBe(0);
    const sideKey = JSON.parse(created.stdout).api_key;
    expect((await get(`http://127.0.0.1:${port}/api/v1/customers`, { 'x-api-key': sideKey })).status).toBe(200);

    // The CLI pointed at another port finds the data directory taken, and says so plainly.
    const clash = await admin(['tenant:create', '--name', 'Clash', '--plan', 'growth'], {
      ...env,
      EMBEDDED_PG_PORT: String(await freePort()),
    });
    expect(clash.code).not.toBe(0);
    expect(clash.stderr).toMatch(/could not start the embedded PostgreSQL .* using this data directory/);

    expect(await stop(first.child)).toBe(0);

    const second = startService('all', env, /Try: curl/);
    const again = await second.started;
    expect(again).not.toContain('just created');
    expect(again).toContain(key);
    expect((await get(`http://127.0.0.1:${port}/api/v1/customers`, { 'x-api-key': sideKey })).status).toBe(200);
    expect(await stop(second.child)).toBe(0);
  }, 180_000);
});
