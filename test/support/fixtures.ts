import { test as base } from 'vitest';
import { createTestApp } from './app.ts';
import { customer, tenantWithKey, userWithSession } from './factories.ts';

type AppOptions = NonNullable<Parameters<typeof createTestApp>[0]>;
type Role = 'owner' | 'admin' | 'member' | 'viewer';

/**
 * Composable fixtures: each builds on the ones before it and exists only in the tests that name it.
 * `app` is one per test file and closed after it; the rest are new for every test:
 * app → tenant (with an API key) → apiKey, customer, signedIn(role), api (requests with the key).
 */
export function testWith(options: AppOptions = {}) {
  return base
    .extend('app', { scope: 'file' }, async ({}, { onCleanup }) => {
      const app = await createTestApp(options);
      onCleanup(() => app.close());
      return app;
    })
    .extend('tenant', async ({ app }) => tenantWithKey(app.prisma))
    .extend('apiKey', async ({ tenant }) => tenant.apiKey)
    .extend('customer', async ({ app, tenant }) => customer(app.prisma, tenant.tenantId))
    .extend(
      'signedIn',
      async ({ app, tenant }) =>
        (role: Role) =>
          userWithSession(app.prisma, app.sessions, tenant.tenantId, role),
    )
    .extend('api', async ({ app, apiKey }) => {
      const send = (method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE', url: string, payload?: object) =>
        app.app.inject({ method, url, headers: { 'x-api-key': apiKey }, ...(payload ? { payload } : {}) });
      return {
        get: (url: string) => send('GET', url),
        post: (url: string, payload: object) => send('POST', url, payload),
        patch: (url: string, payload: object) => send('PATCH', url, payload),
      };
    });
}

/** The fixtures over a default test app. */
export const test = testWith();
