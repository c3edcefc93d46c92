import { describe, expect, it } from 'vitest';
import { judgeAddress, literalAddress } from '../../src/outbox/endpoints/address-policy.ts';
import { checkEndpointUrl, refusedLiteral } from '../../src/outbox/endpoints/ssrf.ts';

// Which addresses a webhook may reach: only globally routable unicast, with every IPv6 form that
// carries an IPv4 address judged by that IPv4 address.
const REFUSED = [
  // IPv4 special-purpose space
  ['0.0.0.0', 'this network'],
  ['10.0.0.1', 'private'],
  ['100.64.0.1', 'carrier-grade NAT'],
  ['127.0.0.1', 'loopback'],
  ['127.255.255.254', 'loopback, top of the block'],
  ['169.254.169.254', 'cloud metadata (link-local)'],
  ['172.16.0.1', 'private'],
  ['172.31.255.255', 'private, top of the block'],
  ['192.0.0.8', 'IETF protocol assignments'],
  ['192.0.2.1', 'documentation'],
  ['192.88.99.1', '6to4 relay anycast'],
  ['192.168.1.1', 'private'],
  ['198.18.0.1', 'benchmarking'],
  ['198.51.100.7', 'documentation'],
  ['203.0.113.9', 'documentation'],
  ['224.0.0.1', 'multicast'],
  ['240.0.0.1', 'reserved'],
  ['255.255.255.255', 'broadcast'],
  // IPv6 outside global unicast
  ['::', 'unspecified'],
  ['::1', 'loopback'],
  ['fe80::1', 'link-local'],
  ['fe80::1%eth0', 'link-local with a zone'],
  ['fc00::1', 'unique local'],
  ['fd12:3456::1', 'unique local'],
  ['fec0::1', 'deprecated site-local'],
  ['5f00::1', 'SRv6 segment identifiers'],
  ['ff02::1', 'multicast'],
  ['100::1', 'discard-only'],
  // IPv6 forms embedding IPv4
  ['::127.0.0.1', 'IPv4-compatible loopback'],
  ['::7f00:1', 'IPv4-compatible loopback in hex'],
  ['::a9fe:a9fe', 'IPv4-compatible metadata address'],
  ['::10.0.0.1', 'IPv4-compatible private'],
  ['::8.8.8.8', 'IPv4-compatible form, never routed even for a public address'],
  ['::ffff:127.0.0.1', 'IPv4-mapped loopback'],
  ['::ffff:a9fe:a9fe', 'IPv4-mapped metadata address'],
  ['64:ff9b::7f00:1', 'NAT64 of loopback'],
  ['64:ff9b::a9fe:a9fe', 'NAT64 of the metadata address'],
  ['64:ff9b:1::a9fe:a9fe', 'local-use NAT64'],
  ['64:ff9b:1::808:808', 'local-use NAT64 even of a public address'],
  ['2002:7f00:1::1', '6to4 of loopback'],
  ['2002:a9fe:a9fe::1', '6to4 of the metadata address'],
  ['2002:c0a8:101::1', '6to4 of a private address'],
  // Special-purpose blocks inside 2000::/3
  ['2001:0:4136:e378:8000:63bf:3fff:fdd2', 'Teredo'],
  ['2001:2::1', 'benchmarking'],
  ['2001:10::1', 'ORCHID'],
  ['2001:db8::1', 'documentation'],
  ['3fff::1', 'documentation (2024)'],
  // Not addresses at all
  ['localhost', 'a name'],
  ['', 'empty'],
] as const;

const ALLOWED = [
  ['8.8.8.8', 'public IPv4'],
  ['93.184.215.14', 'public IPv4'],
  ['1.1.1.1', 'public IPv4'],
  ['172.32.0.1', 'just above 172.16.0.0/12'],
  ['100.128.0.1', 'just above carrier-grade NAT'],
  ['2606:4700:4700::1111', 'public IPv6'],
  ['2a00:1450:4001:81c::200e', 'public IPv6'],
  ['[2606:4700:4700::1111]', 'public IPv6 in URL brackets'],
  ['::ffff:8.8.8.8', 'IPv4-mapped public address'],
  ['64:ff9b::808:808', 'NAT64 of a public address'],
  ['2002:808:808::1', '6to4 of a public address'],
] as const;

describe('address policy', () => {
  it.each(REFUSED)('refuses %s (%s)', (address) => {
    const verdict = judgeAddress(address);
    expect(verdict.allowed).toBe(false);
    expect(verdict.reason).toBeTruthy();
  });

  it.each(ALLOWED)('allows %s (%s)', (address) => {
    expect(judgeAddress(address)).toEqual({ allowed: true });
  });

  it('names the embedded IPv4 address when it refuses an IPv6 form', () => {
    expect(judgeAddress('::a9fe:a9fe').reason).toContain('169.254.169.254');
    expect(judgeAddress('64:ff9b::7f00:1').reason).toContain('127.0.0.1');
    expect(judgeAddress('2002:a9fe:a9fe::1').reason).toContain('169.254.169.254');
  });
});

describe('IP literals in URLs', () => {
  it.each([
    ['https://127.0.0.1:8443/h', '127.0.0.1'],
    ['https://2130706433/h', '127.0.0.1'],
    ['https://0x7f.1/h', '127.0.0.1'],
    ['https://017700000001/h', '127.0.0.1'],
    ['https://127.0.0.1./h', '127.0.0.1'],
    ['https://[::1]/h', '::1'],
    ['https://[::127.0.0.1]/h', '::7f00:1'],
  ])('reads %s as the address %s', (url, address) => {
    expect(literalAddress(new URL(url).hostname)).toBe(address);
  });

  it('leaves a DNS name, trailing dot or not, to the guarded lookup', () => {
    expect(literalAddress(new URL('https://localhost./h').hostname)).toBeNull();
    expect(literalAddress(new URL('https://hooks.example.com/h').hostname)).toBeNull();
  });

  it.each(['https://127.0.0.1:8443/h', 'https://2130706433/h', 'https://0x7f.1/h', 'https://[::ffff:7f00:1]/h', 'https://[fd00::1]/h'])(
    'refuses %s at connect time unless private targets are allowed',
    (url) => {
      expect(refusedLiteral(url, false)).toMatch(/./);
      expect(refusedLiteral(url, true)).toBeNull();
    },
  );

  it('lets a public literal and a name through to the connection', () => {
    expect(refusedLiteral('https://8.8.8.8/h', false)).toBeNull();
    expect(refusedLiteral('https://hooks.example.com/h', false)).toBeNull();
  });
});

describe('endpoint URLs', () => {
  it.each([
    'https://[::127.0.0.1]/x',
    'https://[::7f00:1]/x',
    'https://[::a9fe:a9fe]/x',
    'https://[::10.0.0.1]/x',
    'https://[64:ff9b:1::a9fe:a9fe]/x',
    'https://[64:ff9b::a9fe:a9fe]/x',
    'https://[fec0::1]/x',
    'https://[5f00::1]/x',
    'https://[2001:db8::1]/x',
    'https://2130706433/x',
    'https://0x7f.1/x',
    'https://0251.0376.0251.0376/x',
  ])('refuses %s unless private targets are allowed', async (url) => {
    expect((await checkEndpointUrl(url, false)).ok).toBe(false);
    expect((await checkEndpointUrl(url, true)).ok).toBe(true);
  });

  it('accepts a public IPv6 literal', async () => {
    expect(await checkEndpointUrl('https://[2606:4700:4700::1111]/hook', false)).toEqual({ ok: true });
  });
});
