import { DIMENSIONS } from '../scoring/dimensions.ts';
import { builder } from './builder.ts';

export const PLAN_VALUES = ['free', 'starter', 'growth', 'scale'] as const;
export const ROLE_VALUES = ['owner', 'admin', 'member', 'viewer'] as const;
export const HEALTH_STATUS_VALUES = ['healthy', 'neutral', 'at_risk'] as const;
export const RISK_LEVEL_VALUES = ['low', 'medium', 'high', 'critical'] as const;
export const ALERT_STATUS_VALUES = ['open', 'acknowledged', 'snoozed', 'resolved'] as const;
export const ALERT_SEVERITY_VALUES = ['low', 'medium', 'high', 'critical'] as const;
export const ALERT_TYPE_VALUES = [
  'health_drop',
  'churn_risk',
  'payment_failed',
  'invoice_overdue',
  'trial_ending',
  'inactivity',
  'support_backlog',
  'negative_sentiment',
] as const;
export const PROVIDER_VALUES = ['stripe', 'github', 'slack', 'discord', 'intercom', 'meta_ads'] as const;

// GraphQL enum values keep the API's snake_case spelling, so REST and GraphQL speak the same words.
export const Plan = builder.enumType('Plan', { values: PLAN_VALUES });
export const Role = builder.enumType('Role', { values: ROLE_VALUES });
export const HealthStatus = builder.enumType('HealthStatus', { values: HEALTH_STATUS_VALUES });
export const RiskLevel = builder.enumType('RiskLevel', { values: RISK_LEVEL_VALUES });
export const AlertStatus = builder.enumType('AlertStatus', { values: ALERT_STATUS_VALUES });
export const AlertSeverity = builder.enumType('AlertSeverity', { values: ALERT_SEVERITY_VALUES });
export const AlertType = builder.enumType('AlertType', { values: ALERT_TYPE_VALUES });
export const Provider = builder.enumType('Provider', { values: PROVIDER_VALUES });
export const Dimension = builder.enumType('Dimension', { values: DIMENSIONS });
