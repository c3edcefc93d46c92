import type { FastifyInstance } from 'fastify';

/**
 * `POST /api/v1/churn-model/train` as a client does it: a 200 is the result; a 202 is followed to its
 * training (`Location`) until the training has ended. Answers 200 and the result when it succeeded; the
 * problem's status and body when refused at once; 0 and the training's `error` when it failed after a 202.
 */
export async function trainToEnd(app: FastifyInstance, apiKey: string): Promise<{ status: number; body: Record<string, any> }> {
  const res = await app.inject({ method: 'POST', url: '/api/v1/churn-model/train', headers: { 'x-api-key': apiKey } });
  if (res.statusCode !== 202) return { status: res.statusCode, body: res.json() };
  const location = res.headers.location as string;
  for (const until = Date.now() + 120_000; Date.now() < until; await new Promise((r) => setTimeout(r, 100))) {
    const run = (await app.inject({ method: 'GET', url: location, headers: { 'x-api-key': apiKey } })).json();
    if (run.status === 'succeeded') return { status: 200, body: run.result };
    if (run.status === 'failed') return { status: 0, body: run.error };
  }
  throw new Error(`the training at ${location} did not end within 2 minutes`);
}
