import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ALERT_TYPES } from '../contract/enums.ts';
import { RULE_TYPES, type ExistingAlert, type Firing, MANUAL_RESOLVE_COOLDOWN_MS, planAlertChanges } from './alert-rules.ts';

const now = new Date('2026-11-20T00:00:00Z');
const firing = (severity: Firing['severity'], details: Record<string, unknown> = {}): Firing => ({
  severity,
  title: 't',
  message: 'm',
  details,
});
const quiet = () => Object.fromEntries(RULE_TYPES.map((t) => [t, null])) as Record<(typeof RULE_TYPES)[number], Firing | null>;
const alert = (over: Partial<ExistingAlert>): ExistingAlert => ({
  id: 'a1',
  alertType: 'health_drop',
  severity: 'medium',
  status: 'open',
  details: {},
  resolvedBy: null,
  resolvedAt: null,
  ...over,
});

describe('the alert rules', () => {
  it('have one rule for every alert type the database stores', () => {
    expect([...RULE_TYPES].sort()).toEqual([...ALERT_TYPES].sort());
  });

  it('are each stated in the alerts table of docs/scoring.md, the one place that lists the types', () => {
    const doc = readFileSync(join(import.meta.dirname, '..', '..', 'docs', 'scoring.md'), 'utf8');
    const lines = doc.slice(doc.indexOf('\n## Alerts\n')).split('\n');
    const body = lines.slice(lines.findIndex((l) => l.startsWith('|---')) + 1);
    const end = body.findIndex((l) => !l.startsWith('|'));
    const rows = body.slice(0, end);
    const documented = rows.map((row) => /^\| `([a-z_]+)` \|/.exec(row)?.[1]);
    expect(documented.sort()).toEqual([...RULE_TYPES].sort());
  });

  it('open an alert for a condition that fires and has none', () => {
    const f = { ...quiet(), health_drop: firing('high') };
    expect(planAlertChanges(f, [], [], now)).toEqual([{ kind: 'create', alertType: 'health_drop', firing: f.health_drop }]);
  });

  it('resolve an unresolved alert whose condition cleared', () => {
    expect(planAlertChanges(quiet(), [alert({})], [], now)).toEqual([{ kind: 'resolve', id: 'a1' }]);
  });

  it('follow the numbers: a new severity or new details update the alert, the same ones change nothing', () => {
    const open = alert({ severity: 'medium', details: { score: 40 } });
    expect(planAlertChanges({ ...quiet(), health_drop: firing('medium', { score: 40 }) }, [open], [], now)).toEqual([]);
    const worse = firing('high', { score: 30 });
    expect(planAlertChanges({ ...quiet(), health_drop: worse }, [open], [], now)).toEqual([{ kind: 'update', id: 'a1', firing: worse }]);
  });

  it('keep a hand-resolved alert quiet for a week unless it gets worse', () => {
    const resolved = alert({ status: 'resolved', resolvedBy: 'user', resolvedAt: new Date(now.getTime() - 86_400_000) });
    expect(planAlertChanges({ ...quiet(), health_drop: firing('medium') }, [], [resolved], now)).toEqual([]);
    expect(planAlertChanges({ ...quiet(), health_drop: firing('high') }, [], [resolved], now)).toHaveLength(1);
    const longAgo = { ...resolved, resolvedAt: new Date(now.getTime() - MANUAL_RESOLVE_COOLDOWN_MS - 1) };
    expect(planAlertChanges({ ...quiet(), health_drop: firing('medium') }, [], [longAgo], now)).toHaveLength(1);
  });
});
