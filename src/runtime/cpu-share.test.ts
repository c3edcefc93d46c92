import { describe, expect, it } from 'vitest';
import { createCpuShare, HEAVY_STATEMENTS_AT_ONCE, HEAVY_STATEMENTS_SHARED, MAX_HOLD_MS } from './cpu-share.ts';
import { createTenantLoad, RECENTLY_MS } from './tenant-load.ts';

/** A share on a clock the test moves: each step "takes" the time it is given, each wait is recorded. */
function onFakeClock(share = 0.25, burstMs = 50, onSleep: () => void = () => {}) {
  let clock = 0;
  const waits: number[] = [];
  const load = createTenantLoad({ now: () => clock });
  const cpu = createCpuShare({
    share,
    burstMs,
    othersBusy: load.othersBusy,
    now: () => clock,
    sleep: async (ms) => {
      waits.push(ms);
      clock += ms;
      onSleep();
    },
  });
  const step = (tenantId: string, ms: number) => cpu.run(tenantId, () => void (clock += ms));
  return { cpu, load, waits, step, advance: (ms: number) => (clock += ms) };
}

describe('a fair share of the process for heavy work', () => {
  it('lets a tenant alone run its steps back to back, however long', async () => {
    const { waits, step } = onFakeClock();
    for (let i = 0; i < 20; i++) await step('a', 40);
    expect(waits).toEqual([]);
  });

  it('holds a tenant past its share and burst while another tenant has a request running', async () => {
    const { load, waits, step } = onFakeClock(0.25, 50);
    load.began('b', 'api');
    for (let i = 0; i < 50; i++) await step('a', 40);
    // 2,000 ms of steps took about a quarter of the time that went by.
    const waited = waits.reduce((a, b) => a + b, 0);
    const part = 2000 / (2000 + waited);
    expect(part).toBeGreaterThan(0.2);
    expect(part).toBeLessThan(0.3);
  });

  it('charges the whole time of a step that reads from the database, as it charges a step on the event loop', async () => {
    const { cpu, load, waits, advance } = onFakeClock(0.25, 50);
    load.began('b', 'api');
    // A page read "taking" 40 ms, the statement's wait included.
    for (let i = 0; i < 50; i++) await cpu.read('a', async () => void advance(40));
    const waited = waits.reduce((a, b) => a + b, 0);
    const part = 2000 / (2000 + waited);
    expect(part).toBeGreaterThan(0.2);
    expect(part).toBeLessThan(0.3);
  });

  it('charges the whole time of a heavy GraphQL operation’s statements, as it charges a page read', async () => {
    const { cpu, load, waits, advance } = onFakeClock(0.25, 50);
    load.began('b', 'api');
    for (let i = 0; i < 50; i++) await cpu.statement('a', async () => void advance(40));
    const waited = waits.reduce((a, b) => a + b, 0);
    const part = 2000 / (2000 + waited);
    expect(part).toBeGreaterThan(0.2);
    expect(part).toBeLessThan(0.3);
  });

  it('does not hold the tenant whose own request is the only one running', async () => {
    const { load, waits, step } = onFakeClock();
    load.began('a', 'api');
    for (let i = 0; i < 10; i++) await step('a', 40);
    expect(waits).toEqual([]);
  });

  it('lets a tenant go on at full speed once the others have been idle for a while', async () => {
    const { load, waits, step, advance } = onFakeClock();
    load.began('b', 'api');
    for (let i = 0; i < 5; i++) await step('a', 40);
    const held = waits.length;
    expect(held).toBeGreaterThan(0);
    load.ended('b', 'api');
    advance(RECENTLY_MS);
    for (let i = 0; i < 5; i++) await step('a', 40);
    expect(waits.length).toBe(held);
  });

  it('keeps holding a tenant between the requests of another that reads at a steady pace', async () => {
    const { load, waits, step } = onFakeClock(0.25, 50);
    // b's request ended just now: its next one is due; a's steps stay within its share meanwhile.
    load.began('b', 'api');
    load.ended('b', 'api');
    for (let i = 0; i < 10; i++) await step('a', 40);
    const waited = waits.reduce((x, y) => x + y, 0);
    expect(400 / (400 + waited)).toBeLessThan(0.5);
  });

  it('forgives what a tenant spent once its share has paid it back', async () => {
    const { load, waits, step, advance } = onFakeClock(0.25, 50);
    for (let i = 0; i < 10; i++) await step('a', 40);
    advance(1600);
    load.began('b', 'api');
    await step('a', 40);
    expect(waits).toEqual([]);
  });

  it('does not charge a tenant later for what it spent while it was alone', async () => {
    const { load, waits, step } = onFakeClock(0.25, 50);
    for (let i = 0; i < 250; i++) await step('a', 40);
    load.began('b', 'api');
    await step('a', 40);
    expect(waits).toEqual([]);
  });

  it('lets a held step go once the other tenant has been idle for a while', async () => {
    let load!: ReturnType<typeof onFakeClock>['load'];
    const clock = onFakeClock(0.25, 50, () => load.ended('b', 'api'));
    load = clock.load;
    load.began('b', 'api');
    for (let i = 0; i < 3; i++) await clock.step('a', 40);
    const waited = clock.waits.reduce((x, y) => x + y, 0);
    expect(waited).toBeGreaterThan(0);
    expect(waited).toBeLessThanOrEqual(RECENTLY_MS + 20);
  });

  it('never holds anyone with a share of 1', async () => {
    const { load, waits, step } = onFakeClock(1, 50);
    load.began('b', 'api');
    for (let i = 0; i < 20; i++) await step('a', 80);
    expect(waits).toEqual([]);
  });

  it('runs two heavy requests of a tenant at once, the next when one ends, and another tenant’s at once', async () => {
    const { cpu } = onFakeClock();
    const order: string[] = [];
    const take = (tenant: string, name: string) => cpu.hold(tenant).then((release) => (order.push(name), release));
    const first = await take('a', 'a1');
    await take('a', 'a2');
    const third = take('a', 'a3');
    await take('b', 'b1');
    expect(order).toEqual(['a1', 'a2', 'b1']);
    first();
    first();
    await third;
    expect(order).toEqual(['a1', 'a2', 'b1', 'a3']);
  });

  it('runs a tenant’s heavy statements HEAVY_STATEMENTS_AT_ONCE at a time, the next when one ends, and another tenant’s at once', async () => {
    const { cpu } = onFakeClock();
    const started: string[] = [];
    const ends = new Map<string, () => void>();
    const statement = (tenant: string, name: string) =>
      cpu.statement(tenant, () => {
        started.push(name);
        return new Promise<void>((r) => ends.set(name, r));
      });
    const names = Array.from({ length: HEAVY_STATEMENTS_AT_ONCE + 1 }, (_, i) => `a${i}`);
    const running = names.map((n) => statement('a', n));
    const other = statement('b', 'b0');
    await new Promise((r) => setImmediate(r));
    expect(started).toEqual([...names.slice(0, -1), 'b0']);
    ends.get('a0')!();
    await running[0];
    await new Promise((r) => setImmediate(r));
    expect(started.at(-1)).toBe(names.at(-1));
    for (const end of ends.values()) end();
    await Promise.all([...running, other]);
  });

  it('runs a tenant’s heavy statements HEAVY_STATEMENTS_SHARED at a time while another tenant is served', async () => {
    const { cpu, load } = onFakeClock();
    load.began('b', 'api');
    const started: string[] = [];
    const ends = new Map<string, () => void>();
    const names = Array.from({ length: HEAVY_STATEMENTS_AT_ONCE }, (_, i) => `a${i}`);
    const running = names.map((name) =>
      cpu.statement('a', () => {
        started.push(name);
        return new Promise<void>((r) => ends.set(name, r));
      }),
    );
    await new Promise((r) => setImmediate(r));
    expect(HEAVY_STATEMENTS_SHARED).toBe(1);
    expect(HEAVY_STATEMENTS_SHARED).toBeLessThan(HEAVY_STATEMENTS_AT_ONCE);
    expect(started).toEqual(['a0']);
    for (let i = 0; i < names.length; i++) {
      ends.get(names[i]!)!();
      await running[i];
      await new Promise((r) => setImmediate(r));
    }
    expect(started).toEqual(names);
  });

  it('holds a tenant at most MAX_HOLD_MS at once, however long the step it paid for', async () => {
    const { load, waits, step } = onFakeClock(0.25, 50);
    load.began('b', 'api');
    // A page that took a minute (waiting for a thread on an overloaded machine) would be owed four.
    await step('a', 60_000);
    await step('a', 1);
    const held = waits.reduce((a, b) => a + b, 0);
    expect(held).toBeGreaterThan(MAX_HOLD_MS - 100);
    expect(held).toBeLessThanOrEqual(MAX_HOLD_MS + 20);
  });

  it('holds a tenant while a webhook for another tenant is being accepted', async () => {
    const { load, waits, step } = onFakeClock(0.25, 50);
    load.began('b', 'inbound');
    for (let i = 0; i < 10; i++) await step('a', 40);
    expect(waits.length).toBeGreaterThan(0);
  });

  it('does not hold a tenant for webhooks of its own', async () => {
    const { load, waits, step } = onFakeClock(0.25, 50);
    load.began('a', 'inbound');
    load.began('a', 'api');
    for (let i = 0; i < 10; i++) await step('a', 40);
    expect(waits).toEqual([]);
  });

  it('weighs heavy requests: parts of a place fit beside each other, and a whole one waits its turn behind them', async () => {
    const { cpu } = onFakeClock();
    const order: string[] = [];
    const take = (name: string, weight: number) => cpu.hold('a', weight).then((release) => (order.push(name), release));
    const first = await take('0.8', 0.8);
    const second = await take('0.8 again', 0.8);
    const whole = take('1', 1);
    const light = take('0.2', 0.2);
    await Promise.resolve();
    // The 0.2 would fit beside the two, but does not pass the whole place waiting before it.
    expect(order).toEqual(['0.8', '0.8 again']);
    first();
    await whole;
    await light;
    expect(order).toEqual(['0.8', '0.8 again', '1', '0.2']);
    second();
  });

  it('keeps each tenant’s account apart', async () => {
    const { load, waits, step } = onFakeClock();
    load.began('c', 'api');
    for (let i = 0; i < 10; i++) await step('a', 40);
    const heldA = waits.length;
    await step('b', 40);
    expect(waits.length).toBe(heldA);
  });
});
