// npm run eval:churn [-- --small] [--scenarios a,b] [--docs]
//   --small      the CI run: four scenarios, random split only
//   --scenarios  only these (names in eval/churn/scenarios.ts)
//   --docs       also write the mixture scenario's reliability plot to docs/churn-calibration.svg
//   --dump       also write every customer's model inputs (as scored and as training computes them) beside its hidden drivers and outcome (JSON)
//   --live URL   instead, measure a running service's workspace against its own labels (eval/churn/live.ts);
//                the workspace's API key in CHS_API_KEY; --train also fits a model there without using it
import { spawnSync } from 'node:child_process';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: {
    small: { type: 'boolean', default: false },
    scenarios: { type: 'string' },
    docs: { type: 'boolean', default: false },
    dump: { type: 'boolean', default: false },
    live: { type: 'string' },
    train: { type: 'boolean', default: false },
  },
});
if (values.live) {
  const key = process.env.CHS_API_KEY;
  if (!key) {
    console.error('--live needs the workspace API key in CHS_API_KEY');
    process.exit(2);
  }
  const { evaluateLive } = await import('./live.ts');
  const out = process.env.EVAL_OUT ?? 'test-output/churn-eval';
  const report = await evaluateLive(values.live, key, { train: values.train, out });
  const { mkdirSync, writeFileSync } = await import('node:fs');
  mkdirSync(out, { recursive: true });
  writeFileSync(`${out}/live.md`, report);
  console.log(`${report}
report: ${out}/live.md`);
  process.exit(0);
}
const env = {
  ...process.env,
  EVAL_SMALL: values.small ? '1' : '0',
  EVAL_SCENARIOS: values.scenarios ?? '',
  EVAL_DOCS: values.docs ? '1' : '0',
  EVAL_DUMP: values.dump ? '1' : '0',
  TEST_DATABASE_NAME: process.env.TEST_DATABASE_NAME ?? 'chs_eval',
};
const r = spawnSync('npx', ['vitest', 'run', '--config', 'eval/vitest.config.ts'], { stdio: 'inherit', env });
process.exit(r.status ?? 1);
