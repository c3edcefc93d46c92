import { builder } from './builder.ts';
import { RiskLevel } from './enums.ts';

interface RiskFactorView {
  code: string;
  description: string;
  impact: number;
}
interface InterventionView {
  code: string;
  title: string;
  description: string;
  priority: string;
}
export interface ChurnView {
  customerId: string;
  probability: number | null;
  riskLevel: 'low' | 'medium' | 'high' | 'critical' | null;
  riskFactors: RiskFactorView[];
  recommendedInterventions: InterventionView[];
  modelVersion: string | null;
  predictedAt: Date | null;
}

const RiskFactor = builder.objectRef<RiskFactorView>('RiskFactor').implement({
  description: 'A feature that pushes the churn probability up.',
  fields: (t) => ({
    code: t.exposeString('code'),
    description: t.exposeString('description'),
    impact: t.exposeFloat('impact', { description: 'Share of the log-odds above the baseline this factor accounts for (0-1).' }),
  }),
});

const Intervention = builder.objectRef<InterventionView>('Intervention').implement({
  fields: (t) => ({
    code: t.exposeString('code'),
    title: t.exposeString('title'),
    description: t.exposeString('description'),
    priority: t.exposeString('priority', { description: '`high`, `medium` or `low`.' }),
  }),
});

export const ChurnPrediction = builder.objectRef<ChurnView>('ChurnPrediction').implement({
  description: 'The latest churn prediction; fields are null before the first one is made.',
  fields: (t) => ({
    customerId: t.field({ type: 'UUID', resolve: (c) => c.customerId }),
    probability: t.exposeFloat('probability', { nullable: true }),
    riskLevel: t.field({ type: RiskLevel, nullable: true, resolve: (c) => c.riskLevel }),
    riskFactors: t.field({ type: [RiskFactor], resolve: (c) => c.riskFactors }),
    recommendedInterventions: t.field({ type: [Intervention], resolve: (c) => c.recommendedInterventions }),
    modelVersion: t.exposeString('modelVersion', { nullable: true }),
    predictedAt: t.field({ type: 'DateTime', nullable: true, resolve: (c) => c.predictedAt }),
  }),
});

builder.prismaObjectField('Customer', 'churnPrediction', (t) =>
  t.field({
    type: ChurnPrediction,
    select: { id: true, churnPredictions: { orderBy: { predictedAt: 'desc' }, take: 1 } },
    resolve: (c): ChurnView => {
      const p = c.churnPredictions[0];
      return {
        customerId: c.id,
        probability: p?.probability ?? null,
        riskLevel: p?.riskLevel ?? null,
        riskFactors: (p?.riskFactors as unknown as RiskFactorView[]) ?? [],
        recommendedInterventions: (p?.recommendedInterventions as unknown as InterventionView[]) ?? [],
        modelVersion: p?.modelVersion ?? null,
        predictedAt: p?.predictedAt ?? null,
      };
    },
  }),
);
