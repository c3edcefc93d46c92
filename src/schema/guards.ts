import { can, type Capability, type Principal } from '../auth/principal.ts';
import { forbidden, missingCredentials } from '../errors.ts';
import type { Context } from './context.ts';

/** The caller's principal, with the capability checked; every tenant-scoped resolver starts here. */
export function requireCapability(ctx: Context, capability: Capability = 'read'): Principal {
  const p = ctx.principal;
  if (!p) throw missingCredentials();
  if (!can(p, capability)) {
    throw forbidden(
      capability === 'manage_credentials' && p.kind === 'api_key'
        ? 'API keys and inbound secrets are managed by a signed-in admin, not with an API key.'
        : 'Your role does not allow this action.',
    );
  }
  return p;
}
