import { operator } from '../../src/services/audit.ts';
import { randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';
import { sign } from '@octokit/webhooks-methods';
import { describe, expect, it } from 'vitest';
import { createInboundSecretStore } from '../../src/services/integrations.ts';
import { appWithWorker, testSecretBox } from '../support/app.ts';
import { tenantWithKey } from '../support/factories.ts';
import { githubHeaders } from '../support/providers.ts';

const t = appWithWorker();

// Every example payload GitHub's SDK keeps for every event, for github.com and each GitHub Enterprise
// Server version it covers; a payload shared by several versions is sent once.
const require = createRequire(import.meta.url);
const VERSIONS = ['api.github.com', 'ghes-31', 'ghes-32', 'ghes-33', 'ghes-34', 'ghes-35'];
const bodies = new Map<string, { event: string; version: string }>();
for (const version of VERSIONS) {
  const defs: { name: string; examples: object[] }[] = require(`@octokit/webhooks-examples/${version}/index.json`);
  for (const d of defs)
    for (const payload of d.examples)
      if (!bodies.has(JSON.stringify(payload))) bodies.set(JSON.stringify(payload), { event: d.name, version });
}
const all = [...bodies].map(([body, { event, version }]) => ({ event, version, body }));

describe('GitHub: every example payload of @octokit/webhooks-examples', () => {
  it(`accepts all ${all.length} examples, signed as GitHub signs them, and processes each without a failure`, async () => {
    const { tenantId } = await tenantWithKey(t.prisma);
    const { secret } = await createInboundSecretStore(t.prisma, testSecretBox(), { cacheMs: 0 }).put({ tenantId, provider: 'github' }, operator(tenantId));
    const answers: { event: string; version: string; status: number; body: string }[] = [];
    for (let from = 0; from < all.length; from += 25) {
      await Promise.all(
        all.slice(from, from + 25).map(async ({ event, version, body }) => {
          const headers = { ...githubHeaders(secret, event, body, randomUUID()), 'x-hub-signature-256': await sign(secret, body) };
          const res = await t.app.inject({ method: 'POST', url: `/api/v1/webhooks/in/github/${tenantId}`, headers, payload: body });
          answers.push({ event, version, status: res.statusCode, body: res.body });
        }),
      );
    }
    const unexpected = answers.filter((a) => (a.event === 'ping' ? a.status !== 200 : a.status !== 202 && a.status !== 200));
    expect(unexpected).toEqual([]);
    expect(answers.filter((a) => a.event === 'ping').every((a) => JSON.parse(a.body).pong === true)).toBe(true);

    await expect
      .poll(() => t.prisma.inboxEvent.count({ where: { tenantId, status: 'received' } }), { timeout: 60_000, interval: 200 })
      .toBe(0);
    const failed = await t.prisma.inboxEvent.findMany({
      where: { tenantId, status: 'failed' },
      select: { eventType: true, lastError: true },
    });
    expect(failed).toEqual([]);
    const stored = await t.prisma.inboxEvent.count({ where: { tenantId } });
    expect(stored).toBe(all.filter((a) => a.event !== 'ping').length);
    expect(await t.prisma.signal.count({ where: { tenantId } })).toBeGreaterThan(0);
  }, 120_000);
});
