// Parsed GraphQL documents are cached (Yoga's parser cache, the fast path's validated documents), and a
// valid document within every limit can keep a hundred times more heap than another of the same count:
// padded with comments, which the token limit does not count, or with one field repeated up to it. The
// caches are bounded by what their documents keep (src/http/document-cache.ts, by characters and by
// tokens), not by their number.
import v8 from 'node:v8';
import vm from 'node:vm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GRAPHQL_LIMITS } from '../../src/http/graphql-limits.ts';
import { createTestApp, type TestApp } from '../support/app.ts';
import { tenantWithKey } from '../support/factories.ts';

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;

let t: TestApp;
let apiKey: string;
beforeAll(async () => {
  t = await createTestApp({ env: { RATE_LIMIT_SCALE: '10000' } });
  apiKey = (await tenantWithKey(t.prisma)).apiKey;
});
afterAll(() => t?.close());

/** Valid documents within every limit, each distinct: one small operation padded with comments, or one field repeated up to the token limit. */
const PADDINGS = {
  comments: (i: number) => {
    const op = `query Q${i} { viewer { kind } }\n`;
    return op + '#\n'.repeat(Math.floor((GRAPHQL_LIMITS.maxDocumentChars - op.length) / 2));
  },
  tokens: (i: number) => `query Q${i} { viewer { ${'kind '.repeat(GRAPHQL_LIMITS.maxTokens - 20)} } }`,
};

const retainedHeap = () => {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
};

const send = (query: string) =>
  t.app.inject({
    method: 'POST',
    url: '/graphql',
    headers: { 'content-type': 'application/json', 'x-api-key': apiKey },
    payload: JSON.stringify({ query }),
  });

describe('the caches of parsed GraphQL documents', () => {
  it.each(Object.keys(PADDINGS) as (keyof typeof PADDINGS)[])(
    'keep a bounded amount of memory however many large distinct documents arrive (padded with %s)',
    { timeout: 120_000 },
    async (padding) => {
      // Warm up: the first requests build the app's own lazily created state.
      for (let i = 0; i < 4; i++) await send(`{ viewer { kind } } # warm ${i} ${Math.random()}`);
      const before = retainedHeap();
      // 100 such documents keep 95 to 150 MiB when every one of them is cached.
      for (let i = 0; i < 100; i++) {
        const answer = await send(PADDINGS[padding](i + Math.floor(Math.random() * 1e9)));
        expect(answer.statusCode).toBe(200);
      }
      const grown = (retainedHeap() - before) / 2 ** 20;
      expect(Math.round(grown), 'MiB retained after 100 large documents').toBeLessThan(48);
    },
  );
});

describe('the caches of parsed GraphQL documents, with documents dense in tokens', () => {
  // One character a token (nested lists): such a document keeps more than its characters account for.
  it('keep no more than their bound of documents that parse and then fail validation', { timeout: 120_000 }, async () => {
    for (let i = 0; i < 4; i++) await send(`{ viewer { kind } } # warm ${i} ${Math.random()}`);
    const depth = Math.floor((GRAPHQL_LIMITS.maxTokens - 10) / 2);
    const before = retainedHeap();
    // Each parses (and is cached), then fails validation.
    for (let i = 0; i < 300; i++) {
      const answer = await send(`{ q${i}_${Math.floor(Math.random() * 1e9)}(a: ${'['.repeat(depth)}${']'.repeat(depth)}) }`);
      expect(answer.json().errors?.length).toBeGreaterThan(0);
    }
    const grown = (retainedHeap() - before) / 2 ** 20;
    expect(Math.round(grown), 'MiB retained after 300 dense documents').toBeLessThan(40);
  });
});
