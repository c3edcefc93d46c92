import { afterEach, describe, expect, it } from 'vitest';
import { DomainError } from '../errors.ts';
import { type CpuShare, unmetered } from '../runtime/cpu-share.ts';
import { FEATURE_CODES } from './churn-model.ts';
import { createThreadFitter, fitHere } from './fit-runner.ts';
import type { FitInput } from './tenant-fit.ts';

// Labels whose first input drives churn, deterministic so both fits see the same data.
function cohort(n: number): FitInput {
  let seed = 7;
  const random = () => (seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648) / 2_147_483_648;
  const raw = Array.from({ length: n }, () => FEATURE_CODES.map(() => random()));
  const y = raw.map((r) => (r[0]! + random() * 0.8 > 0.9 ? 1 : 0));
  return { raw, y, keys: raw.map((_, i) => `customer-${i}`) };
}

let fitter: ReturnType<typeof createThreadFitter> | undefined;
afterEach(async () => {
  await fitter?.close();
  fitter = undefined;
});

describe('fitting churn models on a thread of their own', () => {
  it('gives the same model as fitting in the caller’s thread', async () => {
    fitter = createThreadFitter();
    const input = cohort(200);
    expect(await fitter('tenant-a', input)).toEqual(await fitHere('tenant-a', input));
  });

  it('leaves the caller’s event loop turning while it fits', async () => {
    fitter = createThreadFitter();
    await fitter('warm-up', cohort(60)); // the thread's start is not what is measured
    let ticks = 0;
    const timer = setInterval(() => ticks++, 5);
    await fitter('tenant-a', cohort(1000));
    clearInterval(timer);
    // In the caller's thread the same fit lets no timer run at all until it is done.
    expect(ticks).toBeGreaterThan(2);
  });

  it('refuses a second training of a workspace while its first is under way (409), and takes it once that ends', async () => {
    fitter = createThreadFitter();
    const first = fitter('tenant-a', cohort(600));
    await expect(fitter('tenant-a', cohort(60))).rejects.toMatchObject({ code: 'conflict' });
    await first;
    await expect(fitter('tenant-a', cohort(60))).resolves.toHaveProperty('kind');
  });

  it('refuses trainings beyond the workspaces it may hold waiting (503)', async () => {
    fitter = createThreadFitter({ maxTenants: 2 });
    const running = [fitter('tenant-a', cohort(300)), fitter('tenant-b', cohort(60))];
    const refused = await fitter('tenant-c', cohort(60)).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(DomainError);
    expect((refused as DomainError).code).toBe('service_unavailable');
    expect((refused as DomainError).retryAfterSeconds).toBe(60);
    await Promise.all(running);
  });

  it('answers a failed fit as an error and fits again afterwards', async () => {
    fitter = createThreadFitter();
    const broken = { ...cohort(60), raw: null } as unknown as FitInput;
    await expect(fitter('tenant-a', broken)).rejects.toThrow();
    await expect(fitter('tenant-a', cohort(60))).resolves.toHaveProperty('kind');
  });
});

/** A share that records what each tenant's fits were charged and holds them while `holding` says so. */
function recordingShare(holding: () => boolean) {
  const charged = new Map<string, number>();
  const share: CpuShare = {
    ...unmetered,
    account(tenantId, ms) {
      charged.set(tenantId, (charged.get(tenantId) ?? 0) + ms);
      return holding();
    },
  };
  return { share, charged };
}

describe('a fit on its thread within its tenant’s share of the CPU', () => {
  it('charges the fit’s time on the thread to the tenant whose model it fits', async () => {
    const { share, charged } = recordingShare(() => false);
    fitter = createThreadFitter({ cpuShare: share });
    await fitter('warm-up', cohort(60));
    charged.clear();
    const started = performance.now();
    await fitter('tenant-a', cohort(1500));
    const wall = performance.now() - started;
    expect([...charged.keys()]).toEqual(['tenant-a']);
    // The thread counts its own steps: most of the wall time, never more.
    expect(charged.get('tenant-a')).toBeGreaterThan(wall * 0.5);
    expect(charged.get('tenant-a')).toBeLessThanOrEqual(wall + 5);
  });

  it('holds the fit between its steps while the share says so, and lets it finish once it no longer does', async () => {
    let hold = false;
    const { share } = recordingShare(() => hold);
    fitter = createThreadFitter({ cpuShare: share });
    await fitter('warm-up', cohort(60)); // the thread's start is not what is measured
    hold = true;
    let done = false;
    const fit = fitter('tenant-a', cohort(300)).then((o) => ((done = true), o));
    // Alone, this fit takes a few tens of milliseconds.
    await new Promise((r) => setTimeout(r, 1000));
    expect(done).toBe(false);
    hold = false;
    await expect(fit).resolves.toHaveProperty('kind');
  });

  it('does not hold a fit while another workspace’s fit waits behind it for the thread', async () => {
    const { share, charged } = recordingShare(() => true);
    fitter = createThreadFitter({ cpuShare: share });
    const first = fitter('tenant-a', cohort(300));
    const second = fitter('tenant-b', cohort(60));
    await expect(first).resolves.toHaveProperty('kind');
    // The second, alone on the thread, is held as the share says: it is let go at the close.
    expect(charged.get('tenant-a')).toBeGreaterThan(0);
    const secondEnds = expect(second).rejects.toThrow('closed');
    await fitter.close();
    await secondEnds;
  });

  it('fits as it would unpaced: the pacing changes when, never what', async () => {
    let holding = false;
    let looks = 0;
    // Every third look while it fits holds it.
    const { share } = recordingShare(() => holding && ++looks % 3 === 0);
    fitter = createThreadFitter({ cpuShare: share });
    await fitter('warm-up', cohort(60));
    holding = true;
    const input = cohort(400);
    const paced = await fitter('tenant-a', input);
    expect(looks).toBeGreaterThan(6);
    expect(paced).toEqual(await fitHere('tenant-a', input));
  });
});
