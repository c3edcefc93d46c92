import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import { PROVIDER_SPECS } from './providers/index.ts';
import type { ProviderName } from './providers/types.ts';

/**
 * A recorded provider request (test/fixtures/providers/README.md): the headers as the provider sent
 * them, and the body, as JSON or, where byte-exactness matters, as the exact text in `rawBody`.
 * Signature headers are re-made at replay time with the tenant's current secret.
 */
export const recordedRequestSchema = z
  .object({
    description: z.string().optional(),
    source: z.string().optional(),
    headers: z.record(z.string(), z.string()),
    body: z.unknown().optional(),
    rawBody: z.string().optional(),
  })
  .refine((r) => r.body !== undefined || r.rawBody !== undefined, { message: 'needs `body` or `rawBody`' });
export type RecordedRequest = z.infer<typeof recordedRequestSchema>;

/** Parses one recording's text; `path` only names the file in the error. */
export function parseRecordedRequest(text: string, path: string): RecordedRequest {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new TypeError(`${path}: is not valid JSON`);
  }
  const r = recordedRequestSchema.safeParse(json);
  if (!r.success) throw new TypeError(`${path}: ${r.error.issues.map((i) => `${i.path.join('.') || 'file'} ${i.message}`).join('; ')}`);
  return r.data;
}

export async function readRecordedRequest(path: string): Promise<RecordedRequest> {
  return parseRecordedRequest(await readFile(path, 'utf8'), path);
}

// Signature and transport headers are never replayed as recorded: the signature is made afresh.
const DROPPED = new Set([
  'stripe-signature',
  'x-hub-signature',
  'x-hub-signature-256',
  'x-slack-signature',
  'x-slack-request-timestamp',
  'x-signature-ed25519',
  'x-signature-timestamp',
  'content-length',
  'host',
  'connection',
  'transfer-encoding',
]);

/** The signature headers each provider sends for `body`, made with `secret` at unix time `now`. */
export const signatureHeaders = (provider: ProviderName, secret: string, body: string, now: number): Record<string, string> =>
  PROVIDER_SPECS[provider].sign(secret, body, now);

/** The request to send: the recorded headers (lower-cased, minus signature and transport ones) and body. */
export function replayable(r: RecordedRequest): { headers: Record<string, string>; body: string } {
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(r.headers)) if (!DROPPED.has(k.toLowerCase())) headers[k.toLowerCase()] = v;
  headers['content-type'] ??= 'application/json';
  return { headers, body: r.rawBody ?? JSON.stringify(r.body) };
}
