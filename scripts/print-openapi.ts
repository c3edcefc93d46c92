// Prints the service's OpenAPI description into the committed openapi.json; CI fails when the two differ,
// lints it, and compares it with the last release's (openapi.release.json) for breaking changes.
// The app is composed as in production but never listens, and nothing here opens a connection.
import { writeFileSync } from 'node:fs';
import { pino } from 'pino';
import { buildApp } from '../src/app.ts';
import { createSessions, identityProvider } from '../src/auth/sessions.ts';
import { loadConfig } from '../src/config.ts';
import { createSecretBox } from '../src/crypto/secret-box.ts';
import { createPool, createPrisma } from '../src/db/prisma.ts';
import { createInbox } from '../src/ingest/inbox.ts';
import { createUsageEventService } from '../src/ingest/usage-events.ts';
import { createOutbound } from '../src/outbox/index.ts';
import { createMemoryQueue } from '../src/queue/memory.ts';
import { createScoringService } from '../src/scoring/service.ts';

export async function openapiDocument(): Promise<Record<string, unknown>> {
  const url = 'postgresql://unused@127.0.0.1:1/unused';
  const config = loadConfig({ NODE_ENV: 'test', LOG_LEVEL: 'silent', DATABASE_URL: url, SESSION_SECRET: 'x'.repeat(48) });
  const logger = pino({ level: 'silent' });
  const pool = createPool(url, 1);
  const prisma = createPrisma({ url, poolSize: 1, pool });
  const queue = createMemoryQueue();
  const box = createSecretBox([{ id: 'print', key: Buffer.alloc(32) }]);
  const inbox = createInbox(pool, queue, logger);
  const outbound = createOutbound({ prisma, pool, deliveryPool: pool, box, queue, allowPrivateTargets: false });
  const app = await buildApp({
    config,
    prisma,
    logger,
    secretBox: box,
    inbox,
    webhooks: outbound.service,
    scoring: createScoringService(pool),
    usageEvents: createUsageEventService(pool),
    sessions: createSessions({ secret: 'x'.repeat(48), ttlSeconds: 3600, idp: identityProvider(config.sessions) }),
  });
  await app.ready();
  const document = app.swagger() as unknown as Record<string, unknown>;
  await app.close();
  await inbox.close();
  outbound.close();
  await queue.close();
  await pool.end();
  return document;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const out = new URL('../openapi.json', import.meta.url);
  writeFileSync(out, `${JSON.stringify(await openapiDocument(), null, 2)}\n`);
}
