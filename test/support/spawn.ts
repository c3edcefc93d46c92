import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { join } from 'node:path';

export const ROOT = join(import.meta.dirname, '..', '..');
const TSX = join(ROOT, 'node_modules', '.bin', 'tsx');

/** Runs the operator CLI as an operator would; resolves with its exit code and output. */
export function admin(args: string[], env: Record<string, string | undefined>): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(TSX, ['src/cli/admin.ts', ...args], { cwd: ROOT, env: { ...process.env, ...env }, timeout: 60_000 }, (err, stdout, stderr) =>
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
    srv.on('error', reject);
  });
}

// Whatever a test started dies with the test process, even when the test fails half-way.
const children = new Set<ChildProcess>();
process.on('exit', () => {
  for (const c of children) c.kill('SIGKILL');
});

/** Starts `src/main.ts <role>` and waits until its output matches `ready`. */
export function startService(role: string, env: Record<string, string | undefined>, ready: RegExp, timeoutMs = 90_000) {
  // Node itself with tsx's loader, not the tsx CLI: the CLI runs the service in a child process of its
  // own, so a SIGKILL meant for the service would kill only the wrapper and leave the service running.
  return startNode(['--import', 'tsx', 'src/main.ts', role], env, ready, timeoutMs);
}

/** Starts the compiled build, `dist/src/main.js <role>`, as `npm run start:prod` does (build it first). */
export function startCompiledService(role: string, env: Record<string, string | undefined>, ready: RegExp, timeoutMs = 90_000) {
  return startNode(['dist/src/main.js', role], env, ready, timeoutMs);
}

function startNode(args: string[], env: Record<string, string | undefined>, ready: RegExp, timeoutMs: number) {
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  child.on('exit', () => children.delete(child));
  let output = '';
  const started = new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`service did not start:\n${output}`));
    }, timeoutMs);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (ready.test(output)) {
        clearTimeout(timer);
        resolve(output);
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.on('exit', (code) => reject(new Error(`service exited with ${code}:\n${output}`)));
  });
  return { child, started, output: () => output };
}

export function stop(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => {
    // Killed by a signal, a child has no exit code but a signal code: it is gone all the same.
    if (child.exitCode !== null || child.signalCode !== null) return resolve(child.exitCode);
    child.once('exit', (code) => resolve(code));
    child.kill('SIGTERM');
  });
}
