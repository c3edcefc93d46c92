import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

/**
 * Which addresses a webhook may be delivered to: an allow-list of globally routable unicast. IPv4
 * is allowed unless it falls in a special-purpose block; IPv6 only inside 2000::/3 (global unicast)
 * and outside its special-purpose blocks. IPv6 forms that carry an IPv4 address are decoded and the
 * IPv4 address judged, so `::ffff:127.0.0.1` or `64:ff9b::a9fe:a9fe` cannot reach loopback or the
 * cloud metadata service. ipaddr.js's range names are not used as the rule: they lag the registries.
 */

type Cidr = [ipaddr.IPv4 | ipaddr.IPv6, number];
const cidrs = (list: string[]) => list.map((c) => ipaddr.parseCIDR(c) as Cidr);

// The IANA IPv4 special-purpose registry, plus multicast and the reserved 240/4 (with broadcast).
const IPV4_REFUSED = cidrs([
  '0.0.0.0/8', // "this network"
  '10.0.0.0/8', // private
  '100.64.0.0/10', // carrier-grade NAT
  '127.0.0.0/8', // loopback
  '169.254.0.0/16', // link-local, the cloud metadata service
  '172.16.0.0/12', // private
  '192.0.0.0/24', // IETF protocol assignments
  '192.0.2.0/24', // documentation
  '192.31.196.0/24', // AS112
  '192.52.193.0/24', // AMT
  '192.88.99.0/24', // 6to4 relay anycast
  '192.168.0.0/16', // private
  '192.175.48.0/24', // AS112 direct delegation
  '198.18.0.0/15', // benchmarking
  '198.51.100.0/24', // documentation
  '203.0.113.0/24', // documentation
  '224.0.0.0/4', // multicast
  '240.0.0.0/4', // reserved, and 255.255.255.255
]);

const IPV6_GLOBAL_UNICAST = ipaddr.parseCIDR('2000::/3') as Cidr;
// Special-purpose blocks inside 2000::/3 that are refused whatever follows.
const IPV6_REFUSED = cidrs([
  '2001::/23', // IETF protocol assignments: Teredo (2001::/32), benchmarking, ORCHID, …
  '2001:db8::/32', // documentation
  '3fff::/20', // documentation
]);
const IPV4_MAPPED = ipaddr.parseCIDR('::ffff:0:0/96') as Cidr;
const IPV4_COMPATIBLE = ipaddr.parseCIDR('::/96') as Cidr;
const NAT64_WELL_KNOWN = ipaddr.parseCIDR('64:ff9b::/96') as Cidr;
const NAT64_LOCAL = ipaddr.parseCIDR('64:ff9b:1::/48') as Cidr;
const SIX_TO_FOUR = ipaddr.parseCIDR('2002::/16') as Cidr;

const inAny = (ip: ipaddr.IPv4 | ipaddr.IPv6, list: Cidr[]) => list.some((c) => ip.kind() === c[0].kind() && ip.match(c));

const v4FromWords = (hi: number, lo: number) => ipaddr.IPv4.parse(`${hi >> 8}.${hi & 0xff}.${lo >> 8}.${lo & 0xff}`);

export interface AddressVerdict {
  allowed: boolean;
  /** Why it was refused, naming the embedded IPv4 address when there is one. */
  reason?: string;
}

const refuse = (reason: string): AddressVerdict => ({ allowed: false, reason });

function judgeV4(ip: ipaddr.IPv4, shown: string): AddressVerdict {
  return inAny(ip, IPV4_REFUSED)
    ? refuse(`${shown} is a loopback, private, link-local or otherwise non-public address`)
    : { allowed: true };
}

function judgeV6(ip: ipaddr.IPv6, shown: string): AddressVerdict {
  const p = ip.parts;
  const embedded = (hi: number, lo: number, form: string, allowPublic: boolean): AddressVerdict => {
    const v4 = v4FromWords(hi, lo);
    const verdict = judgeV4(v4, `${shown} (${form} of ${v4.toString()})`);
    if (!verdict.allowed || allowPublic) return verdict;
    return refuse(`${shown} is an ${form} of ${v4.toString()}, a form that is not routed`);
  };
  if (ip.match(IPV4_MAPPED)) return embedded(p[6]!, p[7]!, 'IPv4-mapped form', true);
  if (ip.match(NAT64_WELL_KNOWN)) return embedded(p[6]!, p[7]!, 'NAT64 form', true);
  if (ip.match(NAT64_LOCAL)) return refuse(`${shown} is in the local-use NAT64 prefix 64:ff9b:1::/48`);
  // ::/96 also holds :: and ::1; the deprecated IPv4-compatible form is never routed.
  if (ip.match(IPV4_COMPATIBLE)) {
    if (p[6] === 0 && p[7]! <= 1) return refuse(`${shown} is the unspecified or loopback address`);
    return embedded(p[6]!, p[7]!, 'IPv4-compatible form', false);
  }
  if (ip.match(SIX_TO_FOUR)) return embedded(p[1]!, p[2]!, '6to4 form', true);
  if (!ip.match(IPV6_GLOBAL_UNICAST)) return refuse(`${shown} is not a global unicast IPv6 address`);
  if (inAny(ip, IPV6_REFUSED)) return refuse(`${shown} is in a special-purpose IPv6 block`);
  return { allowed: true };
}

// ipaddr.js reads `::8.8.8.8` as `::ffff:8.8.8.8`: hand it the trailing dotted quad as two hex
// words instead, so the IPv4-compatible and IPv4-mapped forms stay apart.
function dottedTailToHex(v6: string): string {
  const m = /^(.*:)(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(v6);
  if (!m) return v6;
  const [a, b, c, d] = m.slice(2).map(Number) as [number, number, number, number];
  return `${m[1]}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
}

/** The verdict on one address as a resolver or a URL gives it (IPv6 with or without brackets or a zone). */
export function judgeAddress(address: string): AddressVerdict {
  const bare = address.replace(/^\[|\]$/g, '');
  if (!isIP(bare.split('%')[0]!)) return refuse(`${address} is not an IP address`);
  try {
    const [addr, zone] = bare.split('%') as [string, string | undefined];
    const ip = ipaddr.parse(isIP(addr) === 6 ? dottedTailToHex(addr) + (zone ? `%${zone}` : '') : bare);
    return ip.kind() === 'ipv4' ? judgeV4(ip as ipaddr.IPv4, bare) : judgeV6(ip as ipaddr.IPv6, bare);
  } catch {
    return refuse(`${address} is not an IP address`);
  }
}

export const isPublicAddress = (address: string) => judgeAddress(address).allowed;

/**
 * The IP address a URL's host names literally, or null for a DNS name. The WHATWG parser has
 * already turned decimal, octal and hex IPv4 forms (`2130706433`, `0x7f.1`) and a trailing dot
 * into dotted quads, so what is left is either an IP or a name to resolve.
 */
export function literalAddress(hostname: string): string | null {
  const bare = hostname.replace(/^\[|\]$/g, '');
  return isIP(bare) ? bare : null;
}
