#!/usr/bin/env node
// Stands in for Prisma's native schema-engine binary, which the CLI would otherwise download from a
// host this machine cannot reach. It speaks the same JSON-RPC-over-stdio protocol and runs the
// schema engine that Prisma publishes on npm as WebAssembly, on top of the pg driver adapter.
// prisma.config.ts points PRISMA_SCHEMA_ENGINE_BINARY here.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { randomUUID } from 'node:crypto';
import pg from 'pg';

const require = createRequire(import.meta.url);

function parseArgs(argv) {
  const out = { datamodels: [], datasource: undefined, cli: undefined };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--datamodels') out.datamodels.push(argv[++i]);
    else if (a === '--datasource') out.datasource = JSON.parse(argv[++i]);
    else if (a === '--enabled-preview-features' || a === '--extension-types') i++;
    else if (a === 'cli') out.cli = argv[++i];
    else if (a === '--version' || a === '-V') out.cli = 'version';
  }
  return out;
}

// pg lets a connectionString override discrete fields, so the adapter's shadow database would
// silently become the main one; always hand it discrete fields.
function discreteConfig(url, database) {
  const u = new URL(url);
  return {
    host: decodeURIComponent(u.hostname) || 'localhost',
    port: u.port ? Number(u.port) : 5432,
    user: decodeURIComponent(u.username) || process.env.PGUSER || 'postgres',
    password: decodeURIComponent(u.password) || undefined,
    database: database ?? (decodeURIComponent(u.pathname.slice(1)) || 'postgres'),
  };
}

const CHAR_OID = 18;
const TEXT_OID = 25;
// The adapter cannot map Postgres' internal "char" type, which the schema describer selects.
function charAsText(result) {
  for (const r of Array.isArray(result) ? result : [result]) {
    for (const f of r?.fields ?? []) if (f.dataTypeID === CHAR_OID) f.dataTypeID = TEXT_OID;
  }
  return result;
}
class CharAsTextClient extends pg.Client {
  query(...args) {
    const cb = args[args.length - 1];
    if (typeof cb === 'function') {
      args[args.length - 1] = (err, res) => cb(err, res && charAsText(res));
      return super.query(...args);
    }
    const r = super.query(...args);
    return r && typeof r.then === 'function' ? r.then(charAsText) : r;
  }
}

// The wasm engine reports a Rust panic's message through this global before it traps.
let lastPanic = null;
globalThis.PRISMA_WASM_PANIC_REGISTRY = {
  set_message(message) {
    lastPanic = message;
  },
};

async function loadEngine() {
  const bg = await import('@prisma/schema-engine-wasm/schema_engine_bg');
  const dir = dirname(require.resolve('@prisma/schema-engine-wasm'));
  const bytes = readFileSync(join(dir, 'schema_engine_bg.wasm'));
  const { instance } = await WebAssembly.instantiate(bytes, { './schema_engine_bg.js': bg });
  bg.__wbg_set_wasm(instance.exports);
  instance.exports.__wbindgen_start();
  return bg;
}

async function makeAdapterFactory(url) {
  const { PrismaPg } = await import('@prisma/adapter-pg');
  const { bindMigrationAwareSqlAdapterFactory } = await import('@prisma/driver-adapter-utils');
  const base = discreteConfig(url);

  const connectTo = async (database) => {
    const pool = new pg.Pool({ ...base, database, Client: CharAsTextClient, max: 4 });
    const adapter = await new PrismaPg(pool).connect();
    // The stock adapter splits scripts on ';', which breaks statements that contain one.
    adapter.executeScript = async (script) => {
      try {
        await pool.query(script);
      } catch (error) {
        adapter.onError(error);
      }
    };
    return { adapter, pool };
  };

  const factory = {
    provider: 'postgres',
    adapterName: '@prisma/adapter-pg',
    async connect() {
      const { adapter, pool } = await connectTo(base.database);
      adapter.dispose = () => pool.end();
      return adapter;
    },
    async connectToShadowDb() {
      const name = `prisma_migrate_shadow_db_${randomUUID().replaceAll('-', '')}`;
      const admin = new pg.Client({ ...base, database: 'postgres' });
      await admin.connect();
      await admin.query(`CREATE DATABASE "${name}"`);
      const { adapter, pool } = await connectTo(name);
      // Close the pool before dropping: Postgres refuses to drop a database with open sessions.
      adapter.dispose = async () => {
        await pool.end();
        await admin.query(`DROP DATABASE IF EXISTS "${name}"`);
        await admin.end();
      };
      return adapter;
    },
  };
  return bindMigrationAwareSqlAdapterFactory(factory);
}

function logLine(level, message, extra = {}) {
  process.stderr.write(
    JSON.stringify({ timestamp: new Date().toISOString(), level, target: 'schema_engine::logger', fields: { message, ...extra } }) + '\n',
  );
}

async function runCli(command, datasource) {
  const cfg = discreteConfig(datasource.url);
  const admin = new pg.Client({ ...cfg, database: 'postgres' });
  // The CLI skips the first stderr line when it parses errors.
  process.stderr.write('engine-bridge\n');
  try {
    if (command === 'version') {
      const bg = await loadEngine();
      process.stdout.write(`schema-engine-wasm ${bg.version()}\n`);
      return 0;
    }
    if (command === 'can-connect-to-database') {
      const c = new pg.Client(cfg);
      try {
        await c.connect();
        await c.end();
        return 0;
      } catch (e) {
        const code = e.code === '3D000' ? 'P1003' : 'P1001';
        logLine('ERROR', e.message, { error_code: code });
        return 1;
      }
    }
    await admin.connect();
    if (command === 'create-database') {
      await admin.query(`CREATE DATABASE "${cfg.database.replaceAll('"', '""')}"`);
      return 0;
    }
    if (command === 'drop-database') {
      await admin.query(`DROP DATABASE IF EXISTS "${cfg.database.replaceAll('"', '""')}" WITH (FORCE)`);
      return 0;
    }
    logLine('ERROR', `unsupported cli command ${command}`);
    return 1;
  } catch (e) {
    logLine('ERROR', e.message, { error_code: 'P1000' });
    return 1;
  } finally {
    await admin.end().catch(() => {});
  }
}

async function serve(args) {
  const bg = await loadEngine();
  const datamodels = args.datamodels.map((p) => [p, readFileSync(p, 'utf8')]);
  // The native engine falls back to --datasource when given no schema (migrate diff); the wasm one
  // panics without a schema, so give it one that only names the connector.
  if (datamodels.length === 0) datamodels.push(['datasource.prisma', 'datasource db {\n  provider = "postgresql"\n}\n']);
  const url = args.datasource?.url;
  if (!url) throw new Error('engine-bridge: --datasource with a url is required');
  const adapterFactory = await makeAdapterFactory(url);
  const engine = await bg.SchemaEngine.new({ datamodels }, (msg) => process.stderr.write(`${msg}\n`), adapterFactory);

  const send = (obj) => process.stdout.write(JSON.stringify(obj) + '\n');
  let printId = 1_000_000;
  const methods = { getDatabaseVersion: 'version' };

  const rl = createInterface({ input: process.stdin, crlfDelay: Infinity });
  const pending = new Set();
  rl.on('line', (line) => {
    if (!line.trim()) return;
    const req = JSON.parse(line);
    if (!req.method) return; // the CLI's answer to one of our print requests
    const p = (async () => {
      const name = methods[req.method] ?? req.method;
      try {
        if (typeof engine[name] !== 'function') throw new Error(`method ${req.method} is not supported by the wasm engine`);
        let result = await engine[name](req.params ?? {});
        // The native engine prints a diff through a `print` request instead of returning it.
        if (req.method === 'diff' && result && typeof result.stdout === 'string') {
          if (result.stdout.length > 0) send({ jsonrpc: '2.0', id: printId++, method: 'print', params: { content: result.stdout } });
          result = { ...result, stdout: null };
        }
        send({ jsonrpc: '2.0', id: req.id, result: result ?? {} });
      } catch (e) {
        const panic = lastPanic;
        lastPanic = null;
        const message = panic ?? (typeof e === 'string' ? e : (e?.message ?? String(e)));
        const meta = e?.meta ?? null;
        const errorCode = e?.error_code ?? e?.code ?? null;
        send({
          jsonrpc: '2.0',
          id: req.id,
          error: { code: 4466, message: 'An error happened. Check the data field for details.', data: { is_panic: panic !== null, message, meta, error_code: errorCode } },
        });
      }
    })();
    pending.add(p);
    p.finally(() => pending.delete(p));
  });
  rl.on('close', async () => {
    await Promise.allSettled([...pending]);
    process.exit(0);
  });
}

const args = parseArgs(process.argv.slice(2));
if (args.cli) {
  process.exitCode = await runCli(args.cli, args.datasource ?? { url: 'postgresql://localhost/postgres' });
} else {
  serve(args).catch((e) => {
    logLine('ERROR', e?.stack ?? String(e));
    process.exit(1);
  });
}

// A panic inside an engine callback traps outside any promise; report its message before exiting.
process.on('uncaughtException', (e) => {
  logLine('ERROR', lastPanic ?? e?.stack ?? String(e), { is_panic: true });
  process.exit(101);
});
