import { builder } from './builder.ts';
import { requireCapability } from './guards.ts';

interface PortfolioView {
  customers: number;
  healthy: number;
  neutral: number;
  atRisk: number;
  unscored: number;
  highRisk: number;
  averageScore: number | null;
  openAlerts: number;
  criticalAlerts: number;
}

const Portfolio = builder.objectRef<PortfolioView>('Portfolio').implement({
  description: 'The tenant’s customers at a glance.',
  fields: (t) => ({
    customers: t.exposeInt('customers'),
    healthy: t.exposeInt('healthy'),
    neutral: t.exposeInt('neutral'),
    atRisk: t.exposeInt('atRisk'),
    unscored: t.exposeInt('unscored', { description: 'Customers without a score yet.' }),
    highRisk: t.exposeInt('highRisk', { description: 'Customers at high or critical churn risk.' }),
    averageScore: t.exposeFloat('averageScore', { nullable: true }),
    openAlerts: t.exposeInt('openAlerts', { description: 'Alerts open or acknowledged (snoozed ones not counted).' }),
    criticalAlerts: t.exposeInt('criticalAlerts'),
  }),
});

builder.queryField('portfolio', (t) =>
  t.field({
    type: Portfolio,
    resolve: async (_r, _a, ctx) => {
      const { tenantId } = requireCapability(ctx, 'read');
      const [byStatus, risky, average, alerts] = await Promise.all([
        ctx.prisma.customer.groupBy({ by: ['healthStatus'], where: { tenantId }, _count: { _all: true } }),
        ctx.prisma.customer.count({ where: { tenantId, churnRiskLevel: { in: ['high', 'critical'] } } }),
        ctx.prisma.customer.aggregate({ where: { tenantId }, _avg: { healthScore: true } }),
        ctx.prisma.alert.groupBy({
          by: ['severity'],
          where: { tenantId, status: { in: ['open', 'acknowledged'] } },
          _count: { _all: true },
        }),
      ]);
      const status = (s: 'healthy' | 'neutral' | 'at_risk' | null) => byStatus.find((r) => r.healthStatus === s)?._count._all ?? 0;
      return {
        customers: byStatus.reduce((n, r) => n + r._count._all, 0),
        healthy: status('healthy'),
        neutral: status('neutral'),
        atRisk: status('at_risk'),
        unscored: status(null),
        highRisk: risky,
        averageScore: average._avg.healthScore === null ? null : Math.round(average._avg.healthScore * 10) / 10,
        openAlerts: alerts.reduce((n, r) => n + r._count._all, 0),
        criticalAlerts: alerts.find((r) => r.severity === 'critical')?._count._all ?? 0,
      };
    },
  }),
);
