import https from 'node:https';
import { storableText } from '../../text.ts';
import { untracedAgent } from '../../runtime/trace-context.ts';
import { guardedLookup, refusedLiteral, TargetRefused } from '../endpoints/ssrf.ts';

export const DELIVERY_TIMEOUT_MS = 15_000;
const EXCERPT_BYTES = 2048;

export interface SendResult {
  statusCode: number | null;
  durationMs: number;
  error: string | null;
  bodyExcerpt: string | null;
  /** From Retry-After on 429/503, in milliseconds. */
  retryAfterMs: number | null;
}

function retryAfter(value: string | string[] | undefined): number | null {
  const v = Array.isArray(value) ? value[0] : value;
  if (!v) return null;
  if (/^\d+$/.test(v)) return Number(v) * 1000;
  const at = Date.parse(v);
  return Number.isNaN(at) ? null : Math.max(0, at - Date.now());
}

/**
 * One POST with a hard 15 s limit on the whole exchange. Redirects are not followed (a 3xx is a
 * failed attempt), only the first 2 KB of the answer is read, and every connection is vetted: names
 * through the SSRF-guarded lookup, IP literals (which Node connects to without a lookup) before the
 * request is made. Never throws: every outcome is a result.
 */
export function createSender(opts: { allowPrivateTargets: boolean; timeoutMs?: number; ca?: string | Buffer }) {
  // Receivers' certificates are checked against the system store plus NODE_EXTRA_CA_CERTS (or `ca`, in tests).
  // Deliveries are traced by the deliverer's own span; the instrumentation neither wraps nor marks them.
  const agent = untracedAgent(
    new https.Agent({
      keepAlive: true,
      maxSockets: 64,
      lookup: guardedLookup(opts.allowPrivateTargets) as never,
      ...(opts.ca ? { ca: opts.ca } : {}),
    }),
  );
  const timeoutMs = opts.timeoutMs ?? DELIVERY_TIMEOUT_MS;

  return {
    send(url: string, headers: Record<string, string>, body: string): Promise<SendResult> {
      const started = performance.now();
      return new Promise((resolve) => {
        let settled = false;
        // Declared before anything can settle, so an early refusal does not touch it uninitialised.
        let timer: NodeJS.Timeout | undefined;
        const done = (r: Omit<SendResult, 'durationMs'>) => {
          if (settled) return;
          settled = true;
          clearTimeout(timer);
          // The receiver writes the answer: a NUL in it must not make the attempt unrecordable, which
          // would leave the delivery leased, unattempted, and sent again after every lease for ever.
          const text = (s: string | null) => (s === null ? null : storableText(s));
          resolve({ ...r, error: text(r.error), bodyExcerpt: text(r.bodyExcerpt), durationMs: Math.round(performance.now() - started) });
        };
        let req: ReturnType<typeof https.request>;
        const refused = refusedLiteral(url, opts.allowPrivateTargets);
        if (refused) return done({ statusCode: null, error: `refused target: ${refused}`, bodyExcerpt: null, retryAfterMs: null });
        try {
          req = https.request(url, { method: 'POST', agent, headers: { ...headers, 'content-length': Buffer.byteLength(body) } }, (res) => {
            const chunks: Buffer[] = [];
            let size = 0;
            res.on('data', (c: Buffer) => {
              if (size < EXCERPT_BYTES) chunks.push(c.subarray(0, EXCERPT_BYTES - size));
              size += c.length;
              if (size >= EXCERPT_BYTES) res.destroy();
            });
            const finish = () =>
              done({
                statusCode: res.statusCode ?? null,
                error: null,
                bodyExcerpt: Buffer.concat(chunks).toString('utf8'),
                retryAfterMs: res.statusCode === 429 || res.statusCode === 503 ? retryAfter(res.headers['retry-after']) : null,
              });
            res.on('end', finish);
            res.on('close', finish);
            res.on('error', finish);
          });
        } catch (e) {
          return done({ statusCode: null, error: `invalid request: ${(e as Error).message}`, bodyExcerpt: null, retryAfterMs: null });
        }
        timer = setTimeout(() => {
          req.destroy(new Error(`no complete answer within ${timeoutMs / 1000} s`));
        }, timeoutMs);
        req.on('error', (e) =>
          done({
            statusCode: null,
            error:
              e instanceof TargetRefused || (e as { cause?: unknown }).cause instanceof TargetRefused
                ? `refused target: ${e.message}`
                : e.message,
            bodyExcerpt: null,
            retryAfterMs: null,
          }),
        );
        req.end(body);
      });
    },
    close: () => agent.destroy(),
  };
}

export type Sender = ReturnType<typeof createSender>;
