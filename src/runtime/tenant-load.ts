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
  /** Whether another tenant has anything running: an API request or a webhook being accepted. */
  othersBusy(tenantId: string): boolean;
}

export function createTenantLoad(): TenantLoad {
  // Per tenant, both kinds; `all` counts every piece of work of any kind and tenant.
  const counts = new Map<string, { api: number; inbound: number }>();
  let all = 0;
  let api = 0;
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
    },
    running: (tenantId) => counts.get(tenantId)?.api ?? 0,
    active: () => api,
    othersBusy(tenantId) {
      const c = counts.get(tenantId);
      return all - (c ? c.api + c.inbound : 0) > 0;
    },
  };
}
