// Runs with every test file (vitest setupFiles): once its tests are done, the answers they received
// must all match the OpenAPI description (see contract.ts).
import { afterAll, expect } from 'vitest';
import { takeContractResults } from './contract.ts';

afterAll(() => {
  const { mismatches } = takeContractResults();
  expect(mismatches, 'answers that do not match the OpenAPI description').toEqual([]);
});
