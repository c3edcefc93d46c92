import type { Role } from './sessions.ts';

export type Plan = 'free' | 'starter' | 'growth' | 'scale';

/** Who is calling: a tenant's API key (the machine path) or a signed-in user (the browser path). */
export type Principal =
  | { kind: 'api_key'; tenantId: string; plan: Plan; apiKeyId: string }
  | {
      kind: 'session';
      tenantId: string;
      plan: Plan;
      userId: string;
      role: Role;
      /** The session's id on the server (`sessionIdOf` its token) and when it ends: what signing out records. */
      sessionId: string;
      sessionExpiresAt: Date;
    };

export const PLANS_WITH_API_ACCESS: readonly Plan[] = ['growth', 'scale'];

/**
 * What a caller may do. `write` is day-to-day work (customers, alerts, events); `manage` is
 * configuration (webhook endpoints, weights); `manage_credentials` — API keys and inbound secrets —
 * belongs to signed-in admins only, never to an API key (docs/decisions.md §3); `own` — users' roles and
 * the workspace's deletion — to its signed-in owners alone.
 */
export type Capability = 'read' | 'write' | 'manage' | 'manage_credentials' | 'own';

export function can(p: Principal, capability: Capability): boolean {
  if (capability === 'own') return p.kind === 'session' && p.role === 'owner';
  if (p.kind === 'api_key') return capability !== 'manage_credentials';
  switch (capability) {
    case 'read':
      return true;
    case 'write':
      return p.role !== 'viewer';
    default:
      return p.role === 'owner' || p.role === 'admin';
  }
}
