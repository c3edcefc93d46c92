import type pg from 'pg';
import { onPg } from '../db/sql.ts';
import { queueTenant } from './scoring-queue.ts';
import { trainChurnModel } from './training.ts';

/** What the API asks of scoring beyond reading its results. */
export function createScoringService(pool: pg.Pool) {
  return {
    train: (tenantId: string) => trainChurnModel(pool, tenantId),
    /** Every customer of the tenant is recomputed within seconds (new weights or model). */
    rescoreTenant: (tenantId: string) => queueTenant(onPg(pool), tenantId),
  };
}

export type ScoringService = ReturnType<typeof createScoringService>;
