// Runs with every test file (vitest setupFiles): once its tests are done, the answers they received
// must all match the OpenAPI description (see contract.ts). With CONTRACT_COUNT_FILE set, the number
// of answers checked is appended to that file, one line per test file; with CONTRACT_ANSWERS_FILE set,
// each checked answer's `operationId status`, one line per answer.
import { appendFileSync } from 'node:fs';
import { afterAll, expect } from 'vitest';
import { takeContractResults } from './contract.ts';

afterAll(() => {
  const { mismatches, checked, answered } = takeContractResults();
  if (process.env.CONTRACT_COUNT_FILE) appendFileSync(process.env.CONTRACT_COUNT_FILE, `${checked}\n`);
  if (process.env.CONTRACT_ANSWERS_FILE && answered.length) appendFileSync(process.env.CONTRACT_ANSWERS_FILE, `${answered.join('\n')}\n`);
  expect(mismatches, 'answers that do not match the OpenAPI description').toEqual([]);
});
