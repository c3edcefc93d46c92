// The set-up the outbound test files share: a test app that delivers to private addresses, trusting the
// certificate of a local HTTPS receiver, both started before a file's tests and closed after them.
import { afterAll, beforeAll } from 'vitest';
import { join } from 'node:path';
import { createTestApp, type TestApp } from './app.ts';
import { fileDatabaseUrl } from './database.ts';
import { ROOT } from './spawn.ts';
import { startReceiver, testCertificate } from './receiver.ts';

export type Receiver = Awaited<ReturnType<typeof startReceiver>>;

/** Starts the app and the receiver for the file and hands them to `use`; returns the receiver's certificate. */
export function withOutboundApp(use: (t: TestApp, rx: Receiver) => void, receiver: Parameters<typeof startReceiver>[1] = {}) {
  const tls = testCertificate();
  let t: TestApp | undefined;
  let rx: Receiver | undefined;
  beforeAll(async () => {
    t = await createTestApp({ env: { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' }, ca: tls.cert, deliveryTimeoutMs: 1500 });
    rx = await startReceiver(tls, receiver);
    use(t, rx);
  });
  afterAll(async () => {
    rx?.close();
    await t?.close();
  });
  return tls;
}

/** The API as a caller with `key` sees it, through the app's inject. */
export const apiAs = (t: () => TestApp, key: string) => ({
  post: (url: string, payload?: object) =>
    t().app.inject({ method: 'POST', url, headers: { 'x-api-key': key }, ...(payload ? { payload } : {}) }),
  get: (url: string) => t().app.inject({ method: 'GET', url, headers: { 'x-api-key': key } }),
  patch: (url: string, payload: object) => t().app.inject({ method: 'PATCH', url, headers: { 'x-api-key': key }, payload }),
  del: (url: string) => t().app.inject({ method: 'DELETE', url, headers: { 'x-api-key': key } }),
});

/**
 * The environment of a worker process that delivers for the test app: its database and the key its endpoint
 * secrets are sealed with (testSecretBox), queues of its own under `prefix`, and trust in the certificate of
 * the test's HTTPS receivers. `extra` adds or overrides settings.
 */
export async function outboundWorkerEnv(prefix: string, extra: Record<string, string> = {}): Promise<Record<string, string>> {
  return {
    DATABASE_URL: await fileDatabaseUrl(),
    AMQP_URL: process.env.AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672',
    AMQP_PREFIX: prefix,
    ENCRYPTION_KEY: `test:${Buffer.alloc(32, 7).toString('base64')}`,
    SESSION_SECRET: 'outbound-worker-session-secret-0123456789',
    SEED_DEMO: 'never',
    LOG_LEVEL: 'info',
    MAX_EVENT_LOOP_DELAY_MS: '0',
    WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
    NODE_EXTRA_CA_CERTS: join(ROOT, 'test-output', 'tls', 'cert.pem'),
    ...extra,
  };
}
