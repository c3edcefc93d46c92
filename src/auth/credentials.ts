import type { IncomingHttpHeaders } from 'node:http';
import { DomainError } from '../errors.ts';

/**
 * The credential a request carries, from `Authorization: Bearer` or `X-API-Key` (SEED §Authentication).
 * Both present with different values is refused before anything else; the same value twice is fine.
 */
export function extractCredential(headers: IncomingHttpHeaders): string | null {
  const authorization = headers.authorization;
  const xApiKey = headers['x-api-key'];
  const apiKey = Array.isArray(xApiKey) ? xApiKey.join(',') : xApiKey;

  let bearer: string | undefined;
  if (authorization !== undefined) {
    const match = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(authorization);
    bearer = match ? match[1] : authorization;
    if (apiKey !== undefined && bearer !== apiKey.trim()) {
      throw new DomainError(
        'conflicting_credentials',
        'Authorization and X-API-Key carry different credentials; send one, or the same key in both.',
      );
    }
    if (!match) throw new DomainError('invalid_credentials', 'The Authorization header must use the Bearer scheme.');
    return bearer;
  }
  if (apiKey !== undefined) {
    const trimmed = apiKey.trim();
    if (!trimmed) throw new DomainError('invalid_credentials', 'The X-API-Key header is empty.');
    return trimmed;
  }
  return null;
}
