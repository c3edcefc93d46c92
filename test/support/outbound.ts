// The set-up the outbound test files share: a test app that delivers to private addresses, trusting the
// certificate of a local HTTPS receiver, both started before a file's tests and closed after them.
import { afterAll, beforeAll } from 'vitest';
import { createTestApp, type TestApp } from './app.ts';
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
