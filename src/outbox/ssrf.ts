import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { promisify } from 'node:util';
import ipaddr from 'ipaddr.js';

// Everything that is not ordinary public unicast is refused: loopback, private, link-local (and so
// the 169.254.169.254 metadata address), CGNAT, multicast, reserved, and their IPv6 forms.
const ALLOWED_RANGES = new Set(['unicast']);

export function isPublicAddress(address: string): boolean {
  try {
    let ip = ipaddr.parse(address);
    if (ip.kind() === 'ipv6' && (ip as ipaddr.IPv6).isIPv4MappedAddress()) ip = (ip as ipaddr.IPv6).toIPv4Address();
    return ALLOWED_RANGES.has(ip.range());
  } catch {
    return false;
  }
}

export class TargetRefused extends Error {}

export interface UrlRule {
  ok: boolean;
  reason?: string;
}

const lookupAll = promisify(dnsLookup) as unknown as (host: string, opts: { all: true }) => Promise<LookupAddress[]>;

/** Endpoint URLs must be https:// and, unless private targets are allowed, resolve only to public addresses. */
export async function checkEndpointUrl(raw: string, allowPrivate: boolean): Promise<UrlRule> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { ok: false, reason: 'must be an absolute URL' };
  }
  if (url.protocol !== 'https:') return { ok: false, reason: 'must use https://' };
  if (url.username || url.password) return { ok: false, reason: 'must not carry credentials' };
  if (allowPrivate) return { ok: true };
  const host = url.hostname.replace(/^\[|\]$/g, '');
  let addresses: string[];
  try {
    addresses = ipaddr.isValid(host) ? [host] : (await lookupAll(host, { all: true })).map((a) => a.address);
  } catch {
    return { ok: false, reason: `host ${host} does not resolve` };
  }
  const refused = addresses.find((a) => !isPublicAddress(a));
  return refused
    ? { ok: false, reason: `resolves to ${refused}, a loopback, private, link-local or otherwise non-public address` }
    : { ok: true };
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
      const usable = allowPrivate ? list : list.filter((a) => isPublicAddress(a.address));
      if (usable.length === 0) return callback(new TargetRefused(`${hostname} resolves only to non-public addresses`), '');
      if ((options as { all?: boolean }).all) return callback(null, usable);
      callback(null, usable[0]!.address, usable[0]!.family);
    });
  };
}
