import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { migrateDeploy } from '../../src/db/migrate.ts';
import { buildWebIfStale } from '../../scripts/build-web.ts';
import { makeTestCertificate } from './receiver.ts';

// One fresh, migrated database per run on the real PostgreSQL; tests isolate themselves by tenant.
export default async function setup(project: TestProject) {
  const admin = process.env.TEST_PG_ADMIN_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';
  const name = process.env.TEST_DATABASE_NAME ?? 'chs_test';
  const client = new pg.Client({ connectionString: admin });
  await client.connect();
  await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await client.query(`CREATE DATABASE ${name}`);
  await client.end();
  const url = new URL(admin);
  url.pathname = `/${name}`;
  await migrateDeploy(url.toString());
  makeTestCertificate();
  // The browser tests drive the real bundle, as `npm start` would serve it.
  await buildWebIfStale({ quiet: true });
  project.provide('databaseUrl', url.toString());
  project.provide('redisUrl', process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
  // Each file cloned its own database from this one; drop the clones when the run ends.
  return async () => {
    const c = new pg.Client({ connectionString: admin });
    await c.connect();
    // Exactly this run's clones (`<name>_<8 hex>`, test/support/database.ts): a run under another name that
    // shares this prefix, `chs_test_x` beside `chs_test`, keeps its databases.
    const { rows } = await c.query<{ datname: string }>('SELECT datname FROM pg_database WHERE datname ~ $1', [`^${name}_[0-9a-f]{8}$`]);
    for (const { datname } of rows) await c.query(`DROP DATABASE IF EXISTS ${datname} WITH (FORCE)`);
    await c.end();
  };
}

declare module 'vitest' {
  export interface ProvidedContext {
    databaseUrl: string;
    redisUrl: string;
  }
}
