import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parseRecordedRequest } from '../../src/ingest/recorded-request.ts';

/** A provider request as recorded: its headers (names lower-cased) and the exact body bytes. */
export interface RecordedRequest {
  name: string;
  headers: Record<string, string>;
  body: Buffer;
}

const ROOT = path.join(import.meta.dirname, '..', 'fixtures', 'providers');

/** Reads `NAME.json`, a recording in the format of test/fixtures/providers/README.md (the one `inbound:replay` reads). */
export function readFixture(provider: string, name: string): RecordedRequest {
  const file = path.join(ROOT, provider, `${name}.json`);
  const r = parseRecordedRequest(readFileSync(file, 'utf8'), file);
  const headers = Object.fromEntries(Object.entries(r.headers).map(([k, v]) => [k.toLowerCase(), v]));
  return { name, headers, body: Buffer.from(r.rawBody ?? JSON.stringify(r.body), 'utf8') };
}

/** Every recorded request of a provider whose name starts with the prefix, in name order. */
export function fixtureNames(provider: string, prefix = ''): string[] {
  return readdirSync(path.join(ROOT, provider))
    .filter((f) => f.endsWith('.json') && f.startsWith(prefix))
    .map((f) => f.slice(0, -'.json'.length))
    .sort();
}

/** The headers to send again: the transport's own (Host, Content-Length) are left to the client. */
export const replayHeaders = (r: RecordedRequest, overrides: Record<string, string> = {}) => {
  const { host: _host, 'content-length': _length, ...rest } = r.headers;
  return { ...rest, ...overrides };
};
