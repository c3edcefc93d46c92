import type { IncomingHttpHeaders } from 'node:http';
import { DomainError } from '../errors.ts';
import { isApiKeyShaped } from './api-keys.ts';

const conflicting = (detail: string) => new DomainError('conflicting_credentials', detail);

/** How many times a header appears in the raw request: Node keeps the first Authorization and joins repeated X-API-Keys. */
function occurrences(rawHeaders: readonly string[], name: string): number {
  let n = 0;
  for (let i = 0; i < rawHeaders.length; i += 2) {
    // Only a name of the same length can match: most headers are passed over without a lowercased copy.
    const raw = rawHeaders[i]!;
    if (raw.length === name.length && raw.toLowerCase() === name) n++;
  }
  return n;
}

/**
 * The credential a request carries, from `Authorization: Bearer` or `X-API-Key`. Anything
 * ambiguous is refused before anything else: either header twice, or both with different values
 * (the same key in both is fine). X-API-Key carries API keys only; session tokens go in Authorization.
 */
export function extractCredential(headers: IncomingHttpHeaders, rawHeaders: readonly string[] = []): string | null {
  if (occurrences(rawHeaders, 'authorization') > 1) throw conflicting('Send one Authorization header, not several.');
  if (occurrences(rawHeaders, 'x-api-key') > 1) throw conflicting('Send one X-API-Key header, not several.');
  const authorization = headers.authorization;
  const xApiKey = headers['x-api-key'];
  const apiKey = Array.isArray(xApiKey) ? xApiKey.join(',') : xApiKey;

  let bearer: string | undefined;
  if (authorization !== undefined) {
    const match = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(authorization);
    bearer = match ? match[1] : authorization;
    if (apiKey !== undefined && bearer !== apiKey.trim()) {
      throw conflicting('Authorization and X-API-Key carry different credentials; send one, or the same key in both.');
    }
    if (!match) throw new DomainError('invalid_credentials', 'The Authorization header must use the Bearer scheme.');
    if (apiKey !== undefined && !isApiKeyShaped(bearer!)) throw onlyApiKeys();
    return bearer!;
  }
  if (apiKey !== undefined) {
    const trimmed = apiKey.trim();
    if (!trimmed) throw new DomainError('invalid_credentials', 'The X-API-Key header is empty.');
    if (!isApiKeyShaped(trimmed)) throw onlyApiKeys();
    return trimmed;
  }
  return null;
}

const onlyApiKeys = () =>
  new DomainError('invalid_credentials', 'X-API-Key takes an API key (sk_...); send a session token as Authorization: Bearer.');
