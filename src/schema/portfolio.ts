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
    resolve: (_r, _a, ctx) => {
      return ctx.services.customers.portfolio(requireCapability(ctx, 'read').tenantId);
    },
  }),
);
