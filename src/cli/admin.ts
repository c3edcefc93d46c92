// Operator commands (docs/decisions.md §8): each prints one JSON object on stdout and exits 0, or prints an
// error on stderr and exits non-zero. Logs go to stderr so stdout stays machine-readable.
import { parseArgs } from 'node:util';
import { pino } from 'pino';
import { z } from 'zod';
import { type Config, loadConfig } from '../config.ts';
import { createResealer } from '../crypto/reencrypt.ts';
import { resealInboundSecrets } from '../services/integrations.ts';
import { resealEndpointSecrets } from '../services/webhook-endpoints.ts';
import { PROVIDERS } from '../contract/enums.ts';
import { DomainError } from '../errors.ts';
import { migrateDeploy } from '../db/migrate.ts';
import { PLANS, ROLES } from '../contract/enums.ts';
import type { Composition } from '../composition.ts';
import { operator } from '../services/audit.ts';
import { createMemoryQueue } from '../queue/memory.ts';

class UsageError extends Error {}

const uuid = z.string().uuid();

function option(values: Record<string, string | boolean | undefined>, name: string, schema: z.ZodType<string> = z.string().min(1)): string {
  const r = schema.safeParse(values[name]);
  if (!r.success) throw new UsageError(`--${name}: ${values[name] === undefined ? 'is required' : r.error.issues[0]?.message}`);
  return r.data;
}

type Command = (c: Composition, values: Record<string, string | boolean | undefined>, config: Config, files: string[]) => Promise<object>;

/** Exit status when every step ran but the service refused at least one replayed request. */
const EXIT_REFUSED = 3;

const commands: Record<string, { options: string[]; files?: boolean; run: Command }> = {
  'tenant:create': {
    options: ['name', 'plan'],
    run: async (c, v) => {
      const name = option(v, 'name', z.string().trim().min(1).max(200));
      const plan = option(v, 'plan', z.enum(PLANS)) as (typeof PLANS)[number];
      const { tenant, apiKey } = await c.services.accounts.createTenant({ name, plan });
      return { tenant_id: tenant.id, api_key: apiKey };
    },
  },
  'apikey:create': {
    options: ['tenant', 'name'],
    run: async (c, v) => {
      const tenantId = option(v, 'tenant', uuid);
      if (!(await c.services.accounts.tenantExists(tenantId))) throw new UsageError(`no tenant ${tenantId}`);
      const { key, secret } = await c.services.apiKeys.issue(operator(tenantId), { name: typeof v.name === 'string' ? v.name : 'CLI key' });
      return { api_key_id: key.id, api_key: secret };
    },
  },
  'apikey:revoke': {
    options: ['key-id'],
    run: async (c, v) => {
      const keyId = option(v, 'key-id', uuid);
      if (!(await c.services.apiKeys.revokeAsOperator(keyId))) throw new UsageError(`no API key ${keyId}`);
      return { revoked: true };
    },
  },
  'user:create': {
    options: ['tenant', 'email', 'password', 'role'],
    run: async (c, v) => {
      const tenantId = option(v, 'tenant', uuid);
      const email = option(v, 'email', z.string().trim().toLowerCase().email());
      const password = option(v, 'password', z.string().min(8, 'must be at least 8 characters').max(1024));
      const role = option(v, 'role', z.enum(ROLES)) as (typeof ROLES)[number];
      if (!(await c.services.accounts.tenantExists(tenantId))) throw new UsageError(`no tenant ${tenantId}`);
      if (await c.services.accounts.emailTaken(email)) throw new UsageError(`a user with email ${email} exists`);
      const user = await c.services.accounts.createUser(operator(tenantId), { email, password, role });
      return { user_id: user.id };
    },
  },
  'user:role': {
    options: ['user-id', 'role'],
    run: async (c, v) => {
      const userId = option(v, 'user-id', uuid);
      const role = option(v, 'role', z.enum(ROLES)) as (typeof ROLES)[number];
      const tenantId = await c.services.accounts.tenantOfUser(userId);
      if (!tenantId) throw new UsageError(`no user ${userId}`);
      await c.services.workspace.setUserRole(operator(tenantId), userId, role);
      return { user_id: userId, role };
    },
  },
  'user:remove': {
    options: ['user-id'],
    run: async (c, v) => {
      const userId = option(v, 'user-id', uuid);
      const tenantId = await c.services.accounts.tenantOfUser(userId);
      if (!tenantId) throw new UsageError(`no user ${userId}`);
      await c.services.workspace.removeUser(operator(tenantId), userId);
      return { removed: true };
    },
  },
  'inbound:secret': {
    options: ['tenant', 'provider', 'secret', 'verify-token'],
    run: async (c, v) => {
      const tenantId = option(v, 'tenant', uuid);
      const provider = option(v, 'provider', z.enum(PROVIDERS)) as (typeof PROVIDERS)[number];
      if (!(await c.services.accounts.tenantExists(tenantId))) throw new UsageError(`no tenant ${tenantId}`);
      const { secret } = await c.services.integrations.secrets.put(
        {
          tenantId,
          provider,
          secret: typeof v.secret === 'string' ? v.secret : null,
          verifyToken: typeof v['verify-token'] === 'string' ? v['verify-token'] : null,
        },
        operator(tenantId),
      );
      return { provider, secret };
    },
  },
  'inbound:replay': {
    // Recorded provider requests (the fixture format of test/fixtures/providers), signed with the
    // tenant's current inbound secret and posted to a running service; prints every answer.
    options: ['tenant', 'provider', 'url'],
    files: true,
    run: async (c, v, config, files) => {
      const tenantId = option(v, 'tenant', uuid);
      const provider = option(v, 'provider', z.enum(PROVIDERS)) as (typeof PROVIDERS)[number];
      const base = option({ url: `http://127.0.0.1:${config.http.port}`, ...v }, 'url', z.string().url()).replace(/\/+$/, '');
      if (files.length === 0) throw new UsageError('inbound:replay: give one or more recorded request files');
      if (provider === 'discord')
        throw new UsageError(`--provider: discord requests cannot be re-signed: Discord signs with a private key only Discord holds`);
      // Loaded for this command only: signing goes through the provider registry and its normalizers.
      const { readRecordedRequest, replayable, signatureHeaders } = await import('../ingest/recorded-request.ts');
      const requests = await Promise.all(files.map(async (file) => ({ file, ...replayable(await readRecordedRequest(file)) })));
      const active = await c.services.integrations.secrets.active(tenantId, provider);
      if (!active) throw new UsageError(`tenant ${tenantId} has no inbound secret for ${provider}: set one with inbound:secret`);
      const url = `${base}/api/v1/webhooks/in/${provider}/${tenantId}`;
      const answers = [];
      for (const r of requests) {
        const headers = { ...r.headers, ...signatureHeaders(provider, active.secrets[0]!, r.body, Math.floor(Date.now() / 1000)) };
        const res = await fetch(url, { method: 'POST', headers, body: r.body, signal: AbortSignal.timeout(30_000) });
        const text = await res.text();
        let body: unknown = text;
        try {
          body = text ? JSON.parse(text) : null;
        } catch {
          // Not JSON: printed as the text it is.
        }
        answers.push({ file: r.file, status: res.status, body });
      }
      if (answers.some((a) => a.status >= 300)) process.exitCode = EXIT_REFUSED;
      return { url, answers };
    },
  },
  'secrets:reencrypt': {
    options: [],
    run: async (c) => {
      const resealer = createResealer(c.box);
      const rows = (await resealInboundSecrets(c.db.prisma, resealer)) + (await resealEndpointSecrets(c.db.prisma, resealer));
      return { resealed: resealer.resealed, rows };
    },
  },
};

async function main() {
  const [name, ...rest] = process.argv.slice(2);
  const command = name ? commands[name] : undefined;
  if (!command) {
    throw new UsageError(`usage: npm run admin -- <command> [--option value ...]\ncommands: ${Object.keys(commands).join(', ')}`);
  }
  const { values, positionals } = parseArgs({
    args: rest,
    options: Object.fromEntries(command.options.map((o) => [o, { type: 'string' as const }])),
    strict: true,
    allowPositionals: command.files ?? false,
  });
  const config = loadConfig();
  const log = pino({ level: 'warn' }, pino.destination(2));
  // The CLI publishes nothing and signs nobody in: an in-process queue and no session secret.
  const queue = createMemoryQueue();
  // Loaded after the arguments are checked, so usage errors and --help answer at once.
  const { compose } = await import('../composition.ts');
  const c = await compose(config, { log, poolSize: 2, queue, sessions: null });
  try {
    // A brand-new database (first command before the first start) gets its schema first.
    const [{ ready }] = await c.db.prisma.$queryRaw<{ ready: boolean }[]>`SELECT to_regclass('public.tenants') IS NOT NULL AS ready`;
    if (!ready) await migrateDeploy(c.db.url);
    const out = await command.run(c, values, config, positionals);
    process.stdout.write(`${JSON.stringify(out)}\n`);
  } finally {
    await c.close();
    await queue.close();
  }
}

main().then(
  () => process.exit(process.exitCode ?? 0),
  (e) => {
    const known = e instanceof UsageError || e instanceof TypeError || e instanceof DomainError;
    process.stderr.write(`${known ? e.message : (e?.stack ?? e)}\n`);
    process.exit(known ? 2 : 1);
  },
);
