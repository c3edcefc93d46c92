import type { Db } from '../db/prisma.ts';
import { onPrisma } from '../db/sql.ts';
import { validationFailed } from '../errors.ts';
import { DEFAULT_WEIGHTS, DIMENSIONS, type DimensionKey, tenantWeights, type Weights } from '../scoring/dimensions.ts';
import { changedFields, recordAudit, type Actor } from './audit.ts';
import { setScoringWeights } from './workspace.ts';
import { requestTenant } from '../scoring/scoring-queue.ts';

export type WeightsView = Weights & { isDefault: boolean };

export const weightsView = (stored: unknown): WeightsView => ({
  ...tenantWeights(stored),
  isDefault: stored === null || stored === undefined,
});

/** Weights must each be 0..1 and sum to 1 (within rounding). */
export function checkWeights(w: Record<DimensionKey, number>): Weights {
  const errors = DIMENSIONS.flatMap((k) =>
    !Number.isFinite(w[k]) || w[k] < 0 || w[k] > 1 ? [{ path: k, message: 'must be a number from 0 to 1' }] : [],
  );
  if (errors.length) throw validationFailed(errors);
  const sum = DIMENSIONS.reduce((s, k) => s + w[k], 0);
  if (Math.abs(sum - 1) > 0.001)
    throw validationFailed([{ path: 'weights', message: `must sum to 1 (they sum to ${Math.round(sum * 1000) / 1000})` }]);
  return Object.fromEntries(DIMENSIONS.map((k) => [k, w[k]])) as Weights;
}

/**
 * A tenant's dimension weights (docs/decisions.md §7). The new weights (tenants: Prisma) and the queueing of
 * every customer for a recompute (the scoring queue's SQL, joined to the transaction) commit together: a
 * failure leaves neither, never weights the scores do not follow.
 */
export function createHealthSettingsService(deps: { prisma: Db }) {
  const { prisma } = deps;
  async function store(actor: Actor, weights: Weights | null) {
    const { tenantId } = actor;
    await prisma.$transaction(async (tx) => {
      const before = await tx.tenant.findUniqueOrThrow({ where: { id: tenantId }, select: { scoringWeights: true } });
      await setScoringWeights(onPrisma(tx), tenantId, weights);
      await requestTenant(onPrisma(tx), tenantId);
      const { isDefault: _, ...from } = weightsView(before.scoringWeights);
      await recordAudit(onPrisma(tx), actor, {
        action: 'scoring_weights.changed',
        targetType: 'scoring_weights',
        changes: changedFields(from, weights ?? DEFAULT_WEIGHTS),
      });
    });
  }
  return {
    async weights(tenantId: string): Promise<WeightsView> {
      const tenant = await prisma.tenant.findUniqueOrThrow({ where: { id: tenantId }, select: { scoringWeights: true } });
      return weightsView(tenant.scoringWeights);
    },
    /** Sets the weights and recomputes every customer. */
    async setWeights(actor: Actor, input: Record<DimensionKey, number>): Promise<WeightsView> {
      const weights = checkWeights(input);
      await store(actor, weights);
      return { ...weights, isDefault: false };
    },
    /** Returns to the default weights and recomputes every customer. */
    async resetWeights(actor: Actor): Promise<WeightsView> {
      await store(actor, null);
      return { ...DEFAULT_WEIGHTS, isDefault: true };
    },
  };
}

export type HealthSettingsService = ReturnType<typeof createHealthSettingsService>;
