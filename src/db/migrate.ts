import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The project root (where prisma/ lives), whether this runs from src/ or compiled dist/src/. */
function projectRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'prisma', 'schema.prisma'))) {
    const up = dirname(dir);
    if (up === dir) throw new Error('cannot find prisma/schema.prisma above the running code');
    dir = up;
  }
  return dir;
}

/** Applies pending migrations with `prisma migrate deploy` (through the engine bridge), before the service listens. */
export function migrateDeploy(databaseUrl: string, log: (line: string) => void = () => {}): Promise<void> {
  const cli = join(dirname(createRequire(import.meta.url).resolve('prisma/package.json')), 'build', 'index.js');
  const root = projectRoot();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [cli, 'migrate', 'deploy'], {
      cwd: root,
      env: {
        ...process.env,
        DATABASE_URL: databaseUrl,
        CHECKPOINT_DISABLE: '1',
        PRISMA_HIDE_UPDATE_MESSAGE: '1',
        // The engine bridge (docs/prisma-engine.md), named here too in case the config file is not picked up.
        PRISMA_SCHEMA_ENGINE_BINARY: process.env.PRISMA_SCHEMA_ENGINE_BINARY ?? join(root, 'prisma', 'engine-bridge.mjs'),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    const collect = (chunk: Buffer) => {
      output += chunk.toString();
      for (const line of chunk.toString().split('\n')) if (line.trim()) log(line.trim());
    };
    child.stdout.on('data', collect);
    child.stderr.on('data', collect);
    child.on('error', reject);
    child.on('exit', (code) =>
      code === 0
        ? resolve()
        : reject(new Error(`prisma migrate deploy failed (exit ${code}):\n${output.replaceAll(databaseUrl, '<DATABASE_URL>')}`)),
    );
  });
}
