import { beforeAll, describe, expect, it } from 'vitest';
import type { CheckResult } from '../support/mixed-workload-checks.ts';
import { runBudgetMs, runMixedWorkload, sizeFromEnv, summary, type MixedReport } from '../support/mixed-workload.ts';

// Every writing path at once over the same customers of several tenants, on two API and two worker
// processes (test/support/mixed-workload.ts): the safety net for changes to how the service locks. One
// run, then one test per invariant over what it recorded; the per-path figures are printed, and the
// processes' logs and a JSON report are kept under test-output/mixed-workload/.
// MIXED_SCALE=large (npm run test:mixed) runs the same harness longer and wider; MIXED_SECONDS,
// MIXED_TENANTS, MIXED_CUSTOMERS, MIXED_CONCURRENCY, MIXED_BATCH, MIXED_ERASURES and
// MIXED_QUIESCE_SECONDS set one figure each.
const size = sizeFromEnv();
let report: MixedReport;

beforeAll(async () => {
  report = await runMixedWorkload(size);
  console.log(summary(report));
}, runBudgetMs(size));

/** A failed check's message carries its summary and first findings, so the failure says what broke. */
const expectHolds = (c: CheckResult) => expect(c.ok, `${c.summary}\n${JSON.stringify(c.details, null, 2)}`).toBe(true);

describe('every writing path at once over the same customers', () => {
  it('the harness itself ran without errors, so what fails below is the service', () => {
    expectHolds(report.checks.harnessClean);
  });

  it('no request answers 5xx while every writing path runs at once', () => {
    expectHolds(report.checks.noServerErrors);
  });

  it('PostgreSQL detects no deadlock and no service logs a deadlock or serialization failure', () => {
    expectHolds(report.checks.noDeadlocks);
  });

  it('the system drains afterwards: no event left unapplied, no outbox event unsent, no recompute due', () => {
    expectHolds(report.checks.drained);
  });

  it('every accepted provider event is applied exactly once', () => {
    expectHolds(report.checks.inboundExactlyOnce);
  });

  it('the events about one invoice or subscription, each sent after the one before was accepted, are applied in that order', () => {
    expectHolds(report.checks.inboundInOrder);
  });

  it('every accepted usage event is stored exactly once, a repeated Idempotency-Key included', () => {
    expectHolds(report.checks.usageExactlyOnce);
  });

  it('invoices and subscriptions end as applying the accepted events one at a time, in order, leaves them', () => {
    expectHolds(report.checks.serialEquivalence);
  });

  it('every outbound event reaches each subscribed endpoint: delivered to the healthy one, still retried to the failing and hanging ones', () => {
    expectHolds(report.checks.outboundDelivered);
  });

  it('no read or export answers with another tenant’s customer', () => {
    expectHolds(report.checks.tenantIsolation);
  });

  it('a workspace whose deletion fell due during the load is removed, leaving only its record', () => {
    expectHolds(report.checks.workspacePurged);
  });
});
