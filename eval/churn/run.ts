// npm run eval:churn [-- --small] [--scenarios a,b] [--docs]
//   --small      the CI run: three scenarios, random split only
//   --scenarios  only these (names in eval/churn/scenarios.ts)
//   --docs       also write the mixture scenario's reliability plot to docs/churn-calibration.svg
//   --dump       also write every customer's model inputs beside its hidden drivers and outcome (JSON)
import { spawnSync } from 'node:child_process';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: {
    small: { type: 'boolean', default: false },
    scenarios: { type: 'string' },
    docs: { type: 'boolean', default: false },
    dump: { type: 'boolean', default: false },
  },
});
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
