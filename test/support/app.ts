import type { FastifyInstance } from 'fastify';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import { inject } from 'vitest';
import { buildApp } from '../../src/app.ts';
import { createSessions, type Sessions } from '../../src/auth/sessions.ts';
import { type Config, loadConfig } from '../../src/config.ts';
import { createPrisma, type Db } from '../../src/db/prisma.ts';

export const SESSION_SECRET = 'test-session-secret-0123456789-abcdefghijklmnop';

export interface TestApp {
  app: FastifyInstance;
  prisma: Db;
  sessions: Sessions;
  config: Config;
  /** SQL statements the app sent since the last reset, to catch N+1 queries. */
  queries: string[];
  close(): Promise<void>;
}

export function testConfig(env: Record<string, string> = {}): Config {
  return loadConfig({
    NODE_ENV: 'test',
    LOG_LEVEL: 'silent',
    DATABASE_URL: inject('databaseUrl'),
    SESSION_SECRET,
    API_KEY_CACHE_MS: '0',
    ...env,
  });
}

/** The same composition as production (buildApp), on the real test database, and Redis when asked. */
export async function createTestApp(opts: { env?: Record<string, string>; redis?: boolean; logger?: pino.Logger } = {}): Promise<TestApp> {
  const config = testConfig(opts.env);
  const queries: string[] = [];
  const prisma = createPrisma({ url: config.database.url!, poolSize: 5, onQuery: (q) => queries.push(q) });
  const redis = opts.redis ? new Redis(inject('redisUrl'), { maxRetriesPerRequest: 1 }) : undefined;
  const sessions = createSessions({ secret: SESSION_SECRET, ttlSeconds: 3600 });
  const app = await buildApp({ config, prisma, sessions, redis, logger: opts.logger ?? pino({ level: 'silent' }) });
  await app.ready();
  return {
    app,
    prisma,
    sessions,
    config,
    queries,
    close: async () => {
      await app.close();
      await prisma.$disconnect();
      await redis?.quit();
    },
  };
}
