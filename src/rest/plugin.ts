import type { FastifyInstance } from 'fastify';
import { missingCredentials } from '../errors.ts';
import type { RestDeps } from './deps.ts';
import { alertRoutes } from './routes/alerts.ts';
import { auditRoutes } from './routes/audit.ts';
import { authRoutes } from './routes/auth.ts';
import { customerRoutes } from './routes/customers.ts';
import { webhookRoutes } from './routes/webhooks.ts';
import { eventRoutes } from './routes/events.ts';
import { scoringRoutes } from './routes/scoring.ts';
import { workspaceRoutes } from './routes/workspace.ts';

/** The REST facade under /api/v1: thin routes, each one named GraphQL operation. */
export async function restApi(v1: FastifyInstance, opts: RestDeps) {
  // Only the dependencies travel on: the options also carry this plugin's own prefix.
  const deps: RestDeps = { run: opts.run, context: opts.context };
  await v1.register(authRoutes, deps);
  await v1.register(async (authed) => {
    authed.addHook('onRequest', (req, _reply, done) => {
      done(req.principal ? undefined : missingCredentials());
    });
    await authed.register(customerRoutes, deps);
    await authed.register(alertRoutes, deps);
    await authed.register(webhookRoutes, deps);
    await authed.register(eventRoutes, deps);
    await authed.register(scoringRoutes, deps);
    await authed.register(auditRoutes, deps);
    await authed.register(workspaceRoutes, deps);
  });
}
