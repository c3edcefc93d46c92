import {
  ALERT_SEVERITIES,
  ALERT_STATUSES,
  ALERT_TYPES,
  CIRCUIT_STATES,
  DIMENSIONS,
  HEALTH_STATUSES,
  PLANS,
  PROVIDERS,
  RISK_LEVELS,
  ROLES,
  STATS_WINDOW_NAMES,
} from '../contract/enums.ts';
import { builder } from './builder.ts';

// The GraphQL enums, from the one table of values (src/contract/enums.ts). Values keep the API's snake_case
// spelling, so REST and GraphQL speak the same words; the dashboard gets them through the generated types.
export const Plan = builder.enumType('Plan', { values: PLANS });
export const Role = builder.enumType('Role', { values: ROLES });
export const HealthStatus = builder.enumType('HealthStatus', { values: HEALTH_STATUSES });
export const RiskLevel = builder.enumType('RiskLevel', { values: RISK_LEVELS });
export const AlertStatus = builder.enumType('AlertStatus', { values: ALERT_STATUSES });
export const AlertSeverity = builder.enumType('AlertSeverity', { values: ALERT_SEVERITIES });
export const AlertType = builder.enumType('AlertType', { values: ALERT_TYPES });
export const Provider = builder.enumType('Provider', { values: PROVIDERS });
export const Dimension = builder.enumType('Dimension', { values: DIMENSIONS });
export const CircuitState = builder.enumType('CircuitState', { values: CIRCUIT_STATES });
export const WebhookStatsWindow = builder.enumType('WebhookStatsWindow', { values: STATS_WINDOW_NAMES });
