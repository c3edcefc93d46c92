import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { promisify } from 'node:util';
import { judgeAddress, literalAddress } from './address-policy.ts';

export { isPublicAddress } from './address-policy.ts';

export class TargetRefused extends Error {}

export interface UrlRule {
  ok: boolean;
  reason?: string;
}

const lookupAll = promisify(dnsLookup) as unknown as (host: string, opts: { all: true }) => Promise<LookupAddress[]>;

/** Endpoint URLs must be https:// with no space or control character and, unless private targets are allowed, resolve only to public addresses. */
export async function checkEndpointUrl(raw: string, allowPrivate: boolean): Promise<UrlRule> {
  // The URL parser drops tabs and line breaks and trims controls and spaces, so it would accept a URL that
  // is stored, shown and audited otherwise than it is sent.
  if (/[\s\u0000-\u001f\u007f-\u009f]/.test(raw)) return { ok: false, reason: 'must not contain spaces or control characters' };
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { ok: false, reason: 'must be an absolute URL' };
  }
  if (url.protocol !== 'https:') return { ok: false, reason: 'must use https://' };
  if (url.username || url.password) return { ok: false, reason: 'must not carry credentials' };
  if (allowPrivate) return { ok: true };
  const literal = literalAddress(url.hostname);
  let addresses: string[];
  try {
    addresses = literal ? [literal] : (await lookupAll(url.hostname, { all: true })).map((a) => a.address);
  } catch {
    return { ok: false, reason: `host ${url.hostname} does not resolve` };
  }
  for (const a of addresses) {
    const verdict = judgeAddress(a);
    if (!verdict.allowed) return { ok: false, reason: literal ? verdict.reason! : `resolves to ${verdict.reason}` };
  }
  return { ok: true };
}

/**
 * The connect-time check for a URL whose host is an IP literal: Node connects to those without
 * calling `lookup`, so the guarded lookup below never sees them. Null when the URL may proceed.
 */
export function refusedLiteral(raw: string, allowPrivate: boolean): string | null {
  if (allowPrivate) return null;
  let host: string;
  try {
    host = new URL(raw).hostname;
  } catch {
    return null; // the request itself reports the malformed URL
  }
  const literal = literalAddress(host);
  if (!literal) return null;
  const verdict = judgeAddress(literal);
  return verdict.allowed ? null : verdict.reason!;
}

/**
 * A `lookup` for outgoing connections that vets every address it hands to the socket: the check
 * happens on the address actually connected to, so DNS rebinding between check and use cannot slip by.
 */
export function guardedLookup(allowPrivate: boolean) {
  return (hostname: string, options: object, callback: (err: Error | null, address: string | LookupAddress[], family?: number) => void) => {
    dnsLookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, '');
      const list = addresses as LookupAddress[];
      const usable = allowPrivate ? list : list.filter((a) => judgeAddress(a.address).allowed);
      if (usable.length === 0) return callback(new TargetRefused(`${hostname} resolves only to non-public addresses`), '');
      if ((options as { all?: boolean }).all) return callback(null, usable);
      callback(null, usable[0]!.address, usable[0]!.family);
    });
  };
}
