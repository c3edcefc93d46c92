import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

/** A provider request as recorded: its headers (names lower-cased) and the exact body bytes. */
export interface RecordedRequest {
  name: string;
  headers: Record<string, string>;
  body: Buffer;
}

const ROOT = path.join(import.meta.dirname, '..', 'fixtures', 'providers');

/** Reads `NAME.headers` (one `Name: value` per line) and `NAME.json` (the body, byte for byte); see test/fixtures/providers/README.md. */
export function readFixture(provider: string, name: string): RecordedRequest {
  const dir = path.join(ROOT, provider);
  const headers: Record<string, string> = {};
  for (const line of readFileSync(path.join(dir, `${name}.headers`), 'utf8').split(/\r?\n/)) {
    const colon = line.indexOf(':');
    if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  return { name, headers, body: readFileSync(path.join(dir, `${name}.json`)) };
}

/** Every recorded request of a provider whose name starts with the prefix, in name order. */
export function fixtureNames(provider: string, prefix = ''): string[] {
  return readdirSync(path.join(ROOT, provider))
    .filter((f) => f.endsWith('.headers') && f.startsWith(prefix))
    .map((f) => f.slice(0, -'.headers'.length))
    .sort();
}

/** The headers to send again: the transport's own (Host, Content-Length) are left to the client. */
export const replayHeaders = (r: RecordedRequest, overrides: Record<string, string> = {}) => {
  const { host: _host, 'content-length': _length, ...rest } = r.headers;
  return { ...rest, ...overrides };
};
