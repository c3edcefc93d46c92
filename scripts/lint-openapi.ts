// Lints openapi.json with the rules of redocly.yaml and fails on any finding: errors, and warnings too.
import { execFileSync } from 'node:child_process';

let out: string;
try {
  out = execFileSync('npx', ['redocly', 'lint', 'openapi.json', '--format=json'], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'ignore'],
  });
} catch (e) {
  // redocly exits non-zero on errors; its report is still on stdout.
  out = String((e as { stdout?: string }).stdout ?? '');
}
const report = JSON.parse(out) as { totals: { errors: number; warnings: number }; problems: { ruleId: string; message: string }[] };
for (const p of report.problems) console.error(`${p.ruleId}: ${p.message}`);
console.log(`openapi.json: ${report.totals.errors} errors, ${report.totals.warnings} warnings`);
if (report.totals.errors + report.totals.warnings > 0) process.exit(1);
