/**
 * What runs in the process for each tenant: its authenticated API requests, as admission starts and ends
 * them (http/admission.ts), and the webhooks providers deliver for it, while they are being accepted. The one
 * count of both: admission decides from it who may run, and the CPU share (cpu-share.ts) asks it whether
 * anyone else is being served.
 */
export type WorkKind = 'api' | 'inbound';

export interface TenantLoad {
  began(tenantId: string, kind: WorkKind): void;
  ended(tenantId: string, kind: WorkKind): void;
  /** The tenant's API requests running. */
  running(tenantId: string): number;
  /** API requests running over all tenants. */
  active(): number;
  /**
   * Whether another tenant is being served: it has anything running (an API request, a webhook being
   * accepted), or had within the last RECENTLY_MS. A tenant reading at a steady pace has nothing running
   * most of the time, between its requests; its next one should not find the cores taken by then.
   */
  othersBusy(tenantId: string): boolean;
}

/** How long after its last piece of work a tenant still counts as being served. */
export const RECENTLY_MS = 1000;

export function createTenantLoad(opts: { now?: () => number } = {}): TenantLoad {
  const now = opts.now ?? (() => performance.now());
  // Per tenant, both kinds; `all` counts every piece of work of any kind and tenant.
  const counts = new Map<string, { api: number; inbound: number }>();
  let all = 0;
  let api = 0;
  // The latest end of any tenant's work, and the latest of a tenant other than that one: so the latest end
  // of anyone but a given tenant is one of the two.
  let last = { tenantId: '', at: -Infinity };
  let lastOther = { tenantId: '', at: -Infinity };
  return {
    began(tenantId, kind) {
      let c = counts.get(tenantId);
      if (!c) counts.set(tenantId, (c = { api: 0, inbound: 0 }));
      c[kind]++;
      all++;
      if (kind === 'api') api++;
    },
    ended(tenantId, kind) {
      const c = counts.get(tenantId);
      if (!c || c[kind] === 0) return;
      c[kind]--;
      all--;
      if (kind === 'api') api--;
      if (c.api === 0 && c.inbound === 0) counts.delete(tenantId);
      if (last.tenantId !== tenantId) lastOther = last;
      last = { tenantId, at: now() };
    },
    running: (tenantId) => counts.get(tenantId)?.api ?? 0,
    active: () => api,
    othersBusy(tenantId) {
      const c = counts.get(tenantId);
      if (all - (c ? c.api + c.inbound : 0) > 0) return true;
      const othersLast = last.tenantId !== tenantId ? last.at : lastOther.at;
      return now() - othersLast < RECENTLY_MS;
    },
  };
}
