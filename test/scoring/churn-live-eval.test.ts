import type { AddressInfo } from 'node:net';
import { describe, expect } from 'vitest';
import { evaluateLive } from '../../eval/churn/live.ts';
import { testWith } from '../support/fixtures.ts';
import { customer, historyPoint } from '../support/factories.ts';

// `npm run eval:churn -- --live`: a running service measured against a workspace's own labels, over HTTP
// with the workspace's API key only.
const test = testWith();

async function baseUrl(app: { app: { server: { listening: boolean; address(): unknown }; listen(o: object): Promise<unknown> } }) {
  if (!app.app.server.listening) await app.app.listen({ port: 0, host: '127.0.0.1' });
  return `http://127.0.0.1:${(app.app.server.address() as AddressInfo).port}`;
}

const day = (n: number) => new Date(Date.now() - n * 86_400_000).toISOString();

describe('the live churn evaluation', () => {
  test('measures each latest label against the health the service gave before that outcome', async ({ app, api, tenant }) => {
    const label = async (id: string, churned: boolean, at: string) =>
      expect((await api.post(`/api/v1/customers/${id}/churn-outcome`, { churned, at })).statusCode).toBe(201);
    // Churners scored low and the retained high the day before their outcomes; what came after is not read.
    for (const [score, churned] of [
      [20, true],
      [30, true],
      [70, false],
      [80, false],
    ] as const) {
      const c = await customer(app.prisma, tenant.tenantId);
      await historyPoint(app.prisma, tenant.tenantId, c.id, 3, { score, usage: score });
      await historyPoint(app.prisma, tenant.tenantId, c.id, 0, { score: 100 - score, usage: 100 - score });
      await label(c.id, !churned, day(10)); // superseded by the later label
      await label(c.id, churned, day(1));
    }
    // Its only health point is later than its outcome: it cannot be measured.
    const late = await customer(app.prisma, tenant.tenantId);
    await historyPoint(app.prisma, tenant.tenantId, late.id, 0, { score: 90 });
    await label(late.id, true, day(2));

    const report = await evaluateLive(await baseUrl(app), tenant.apiKey, { train: true, out: 'test-output/churn-eval-live' });
    expect(report).toContain(
      '5 labelled customers (latest label each), 4 with a health point before their outcome (2 churned, 2 retained)',
    );
    expect(report).toMatch(/\| 100 − health score \| 4 \| 1\.000 \|/);
    expect(report).toMatch(/\| 100 − usage \| 4 \| 1\.000 \|/);
    expect(report).toMatch(/\| 100 − support \| 0 \| n\/a \|/);
    expect(report).toContain('Not trained: not_enough_data');
  });

  test('refuses a workspace without labels', async ({ app, tenant }) => {
    await expect(evaluateLive(await baseUrl(app), tenant.apiKey, { train: false, out: 'test-output/churn-eval-live' })).rejects.toThrow(
      /no churn labels/,
    );
  });
});
