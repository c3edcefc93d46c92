// Runs every benchmark scenario in turn; each prints its table and writes bench/results/<scenario>.md.
const scenarios = (process.argv[2] ?? 'read').split(',');
for (const s of scenarios) {
  const { spawnSync } = await import('node:child_process');
  const r = spawnSync(process.execPath, ['--import', 'tsx', `bench/${s}.ts`], { stdio: 'inherit', cwd: new URL('..', import.meta.url) });
  if (r.status !== 0) process.exit(r.status ?? 1);
}
