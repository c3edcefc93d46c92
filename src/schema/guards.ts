import { can, type Capability, type Principal } from '../auth/principal.ts';
import type { Actor } from '../services/audit.ts';
import { forbidden, missingCredentials } from '../errors.ts';
import type { Context } from './context.ts';

/** The caller's principal, with the capability checked; every tenant-scoped resolver starts here. */
export function requireCapability(ctx: Context, capability: Capability = 'read'): Principal {
  const p = ctx.principal;
  if (!p) throw missingCredentials();
  if (!can(p, capability)) {
    throw forbidden(
      capability === 'own'
        ? 'Only an owner of the workspace, signed in, may do this.'
        : capability === 'manage_credentials' && p.kind === 'api_key'
          ? 'API keys and inbound secrets are managed by a signed-in admin, not with an API key.'
          : 'Your role does not allow this action.',
    );
  }
  return p;
}

/** Who may export a workspace's data or a customer's: `startDataExport` authorises with it, and a streaming export asks it again before each page. */
export const EXPORT_CAPABILITY: Capability = 'manage';

/** Whether a caller, resolved again while its request streams, may still do what it began: same workspace, capability kept. */
export function stillMay(then: Principal, now: Principal, capability: Capability): boolean {
  return now.tenantId === then.tenantId && can(now, capability);
}

/** The caller as the audit log names it: whose principal, from which address, in which request. */
export function actorOf(ctx: Context, p: Principal): Actor {
  return {
    tenantId: p.tenantId,
    type: p.kind === 'session' ? 'user' : 'api_key',
    id: p.kind === 'session' ? p.userId : p.apiKeyId,
    clientAddress: ctx.clientAddress,
    requestId: ctx.requestId,
  };
}
