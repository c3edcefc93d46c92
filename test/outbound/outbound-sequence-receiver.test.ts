// The promise of docs/receiving-webhooks.md checked by a receiver written apart from the service, in
// Python with its standard library only (test/support/sequence-receiver.py): it verifies every signature
// itself, fails one delivery once, and reports whether each subject's numbers arrived gap-free and in order.
// The worker delivers here as in production: relay, queue, retries on their schedule.
import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import https from 'node:https';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { inTransaction } from '../../src/db/sql.ts';
import { enqueueEvents, type OutboxInput } from '../../src/outbox/events/enqueue.ts';
import { EVENTS } from '../../src/outbox/events/registry.ts';
import { appWithWorker } from '../support/app.ts';
import { tenantWithKey } from '../support/factories.ts';
import { testCertificate } from '../support/receiver.ts';
import { ROOT } from '../support/spawn.ts';

const tls = testCertificate();
const t = appWithWorker({ env: { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' }, ca: tls.cert });

interface Report {
  deliveries: number;
  duplicates: number;
  rejected_signatures: number;
  unnumbered: number;
  fail_once: { subject: string; sequence: number; answered_500: boolean; retried: boolean } | null;
  subjects: Record<string, { sequences: number[]; gap_free: boolean; in_order: boolean }>;
}

let child: ChildProcess;
let port: number;
const dir = join(ROOT, 'test-output', 'sequence-receiver');
const reportFile = join(dir, `report-${randomUUID().slice(0, 8)}.json`);
const readReport = (): Report => JSON.parse(readFileSync(reportFile, 'utf8'));

/** Starts the Python receiver with the endpoint's secret, failing the given subject's given number once. */
async function startPythonReceiver(secret: string, fail: { subject: string; sequence: number }) {
  mkdirSync(dir, { recursive: true });
  child = spawn(
    'python3',
    [
      join(ROOT, 'test', 'support', 'sequence-receiver.py'),
      '--cert',
      join(ROOT, 'test-output', 'tls', 'cert.pem'),
      '--key',
      join(ROOT, 'test-output', 'tls', 'key.pem'),
      '--report',
      reportFile,
      '--fail-subject',
      fail.subject,
      '--fail-sequence',
      String(fail.sequence),
    ],
    { env: { ...process.env, SIGNING_SECRET: secret, PYTHONDONTWRITEBYTECODE: '1' }, stdio: ['ignore', 'pipe', 'inherit'] },
  );
  let out = '';
  child.stdout!.on('data', (c) => (out += c));
  await expect.poll(() => out, { timeout: 10_000 }).toMatch(/listening \d+/);
  port = Number(/listening (\d+)/.exec(out)![1]);
  await expect.poll(() => existsSync(reportFile)).toBe(true);
}

afterAll(() => {
  child?.kill();
});

/** A POST to the Python receiver signed with a key it does not have. */
function forged(): Promise<number> {
  return new Promise((resolve, reject) => {
    const body = '{"forged":true}';
    const req = https.request(
      `https://127.0.0.1:${port}/`,
      {
        method: 'POST',
        ca: tls.cert,
        headers: {
          'content-type': 'application/json',
          'x-webhook-id': randomUUID(),
          'x-webhook-timestamp': String(Math.floor(Date.now() / 1000)),
          'x-webhook-signature': `v0=${'0'.repeat(64)}`,
          'x-webhook-sequence': '1',
          'x-webhook-sequence-subject': `customer:${randomUUID()}`,
        },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

describe('an independent receiver of an ordered endpoint', () => {
  const customers = [randomUUID(), randomUUID(), randomUUID()];
  const invoice = randomUUID();
  const PER_CUSTOMER = 4;
  const PER_INVOICE = 3;

  it('receives every subject’s events signed, gap-free and in order, the one it failed once retried before the next of its subject', async () => {
    const { tenantId, apiKey } = await tenantWithKey(t.prisma);
    // The endpoint first (its URL needs the receiver's port, the receiver needs its secret): made with a
    // URL nothing listens on, pointed at the receiver once it listens.
    const created = await t.app.inject({
      method: 'POST',
      url: '/api/v1/webhook-endpoints',
      headers: { 'x-api-key': apiKey },
      payload: { url: 'https://127.0.0.1:9/pending', events: ['alert.created', 'invoice.created', 'invoice.paid'], ordered: true },
    });
    expect(created.statusCode).toBe(201);
    const endpoint = created.json() as { id: string; secret: string };
    const failing = { subject: `customer:${customers[1]}`, sequence: 2 };
    await startPythonReceiver(endpoint.secret, failing);
    const moved = await t.app.inject({
      method: 'PATCH',
      url: `/api/v1/webhook-endpoints/${endpoint.id}`,
      headers: { 'x-api-key': apiKey },
      payload: { url: `https://127.0.0.1:${port}/hook` },
    });
    expect(moved.statusCode).toBe(200);
    // Its verifier refuses what we did not sign.
    expect(await forged()).toBe(401);

    // Several transactions, each with events of several subjects, interleaved.
    const alert = (c: string): OutboxInput => ({
      tenantId,
      type: 'alert.created',
      payload: { ...EVENTS['alert.created'].example, tenant_id: tenantId, id: randomUUID(), customer_id: c },
      dedupKey: `alert:${randomUUID()}`,
    });
    const invoiceEvent = (type: 'invoice.created' | 'invoice.paid'): OutboxInput => ({
      tenantId,
      type,
      payload: { ...EVENTS[type].example, tenant_id: tenantId, invoice_id: invoice },
      dedupKey: `${type}:${randomUUID()}`,
    });
    for (let round = 0; round < PER_CUSTOMER; round++) {
      await Promise.all(
        customers.map((c, i) =>
          inTransaction(t.pool, (sql) =>
            enqueueEvents(sql, [
              alert(c),
              ...(i === 0 && round < PER_INVOICE ? [invoiceEvent(round === 0 ? 'invoice.created' : 'invoice.paid')] : []),
            ]),
          ),
        ),
      );
    }

    const expected = customers.length * PER_CUSTOMER + PER_INVOICE;
    // The failed delivery's retry comes after the first wait of the schedule (5 s), then its subject's next.
    await expect.poll(() => readReport().deliveries, { timeout: 40_000, interval: 250 }).toBe(expected);
    const report = readReport();
    expect(report.rejected_signatures).toBe(1);
    expect(report.unnumbered).toBe(0);
    expect(report.fail_once).toEqual({ ...failing, answered_500: true, retried: true });
    expect(Object.keys(report.subjects).sort()).toEqual([...customers.map((c) => `customer:${c}`), `invoice:${invoice}`].sort());
    for (const [subject, seen] of Object.entries(report.subjects)) {
      expect(seen, subject).toMatchObject({ gap_free: true, in_order: true });
      expect(seen.sequences.length, subject).toBe(subject.startsWith('invoice:') ? PER_INVOICE : PER_CUSTOMER);
    }
  }, 60_000);
});
