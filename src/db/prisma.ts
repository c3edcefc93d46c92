import { PrismaPg } from '@prisma/adapter-pg';
import { PrismaClient } from '../generated/prisma/client.ts';

export type Db = PrismaClient;

export interface PrismaOptions {
  url: string;
  poolSize: number;
  /** Called with every SQL statement; tests use it to catch N+1 queries. */
  onQuery?: (sql: string) => void;
}

export function createPrisma({ url, poolSize, onQuery }: PrismaOptions): Db {
  const adapter = new PrismaPg({ connectionString: url, max: poolSize });
  const client = new PrismaClient({ adapter, log: onQuery ? [{ emit: 'event', level: 'query' }] : [] });
  if (onQuery) client.$on('query' as never, (e: { query: string }) => onQuery(e.query));
  return client;
}
