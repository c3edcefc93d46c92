// Builds the dashboard into dist/web when its sources changed since the last build; `npm start` and the
// test setup run it, so a fresh clone serves a current bundle without a separate step.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';

const ROOT = join(import.meta.dirname, '..');
const OUT = join(ROOT, 'dist', 'web');
// Beside the bundle, not in it: the service serves everything under dist/web.
const STAMP = join(ROOT, 'dist', 'web.source-hash');

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? files(p) : [p];
  });
}

export function sourceHash(): string {
  const inputs = [
    ...files(join(ROOT, 'web', 'src')),
    join(ROOT, 'web', 'index.html'),
    join(ROOT, 'web', 'vite.config.ts'),
    join(ROOT, 'package-lock.json'),
  ];
  const h = createHash('sha256');
  for (const f of inputs.sort()) h.update(relative(ROOT, f)).update('\0').update(readFileSync(f)).update('\0');
  return h.digest('hex');
}

/** Resolves true when it built, false when the bundle was already current. */
export async function buildWebIfStale(opts: { force?: boolean; quiet?: boolean } = {}): Promise<boolean> {
  const hash = sourceHash();
  if (!opts.force && existsSync(join(OUT, 'index.html')) && existsSync(STAMP) && readFileSync(STAMP, 'utf8') === hash) return false;
  const bin = join(ROOT, 'node_modules', 'vite', 'bin', 'vite.js');
  if (!existsSync(bin)) throw new Error('vite is not installed: run `npm install` (with dev dependencies) to build the dashboard.');
  // A child process with NODE_ENV=production: under the test runner NODE_ENV is `test`, which would
  // make Vite bundle React's development build.
  execFileSync(
    process.execPath,
    [bin, 'build', '--config', join(ROOT, 'web', 'vite.config.ts'), '--logLevel', opts.quiet ? 'warn' : 'info'],
    {
      cwd: ROOT,
      stdio: 'inherit',
      env: { ...process.env, NODE_ENV: 'production' },
    },
  );
  writeFileSync(STAMP, hash);
  return true;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const force = process.argv.includes('--force');
  buildWebIfStale({ force, quiet: !force })
    .then((built) => {
      if (!built) console.log('dashboard bundle is current (dist/web)');
    })
    .catch((e: unknown) => {
      console.error(e instanceof Error ? e.message : e);
      process.exit(1);
    });
}
