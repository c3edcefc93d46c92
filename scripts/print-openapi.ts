// Prints the service's OpenAPI description into the committed openapi.json; CI fails when the two differ,
// lints it, and compares it with the last release's (openapi.release.json) for breaking changes.
// The app is composed as in production but never listens, and nothing here opens a connection.
import { writeFileSync } from 'node:fs';
import { pino } from 'pino';
import { loadConfig } from '../src/config.ts';
import { compose } from '../src/composition.ts';
import { createSecretBox } from '../src/crypto/secret-box.ts';
import { createPool, createPrisma } from '../src/db/prisma.ts';
import { createMemoryQueue } from '../src/queue/memory.ts';

export async function openapiDocument(): Promise<Record<string, unknown>> {
  const url = 'postgresql://unused@127.0.0.1:1/unused';
  const config = loadConfig({ NODE_ENV: 'test', LOG_LEVEL: 'silent', DATABASE_URL: url, SESSION_SECRET: 'x'.repeat(48) });
  const log = pino({ level: 'silent' });
  const pool = createPool(url, 1);
  const prisma = createPrisma({ url, poolSize: 1, pool });
  const queue = createMemoryQueue();
  const c = await compose(config, {
    log,
    database: { url, prisma, pool, deliveryPool: pool },
    queue,
    box: createSecretBox([{ id: 'print', key: Buffer.alloc(32) }]),
  });
  const app = await c.app();
  await app.ready();
  const document = app.swagger() as unknown as Record<string, unknown>;
  await app.close();
  await c.close();
  await queue.close();
  await pool.end();
  return document;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const out = new URL('../openapi.json', import.meta.url);
  writeFileSync(out, `${JSON.stringify(await openapiDocument(), null, 2)}\n`);
}
