import { describe, expect, it } from 'vitest';
import { ALERT_TYPES as STORED_TYPES } from '../contract/enums.ts';
import { ALERT_TYPES, type ExistingAlert, type Firing, MANUAL_RESOLVE_COOLDOWN_MS, planAlertChanges } from './alert-rules.ts';

const now = new Date('2026-11-20T00:00:00Z');
const firing = (severity: Firing['severity'], details: Record<string, unknown> = {}): Firing => ({
  severity,
  title: 't',
  message: 'm',
  details,
});
const quiet = () => Object.fromEntries(ALERT_TYPES.map((t) => [t, null])) as Record<(typeof ALERT_TYPES)[number], Firing | null>;
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
    expect([...ALERT_TYPES].sort()).toEqual([...STORED_TYPES].sort());
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
