import { builder } from './builder.ts';
import './scalars.ts';
import './enums.ts';
import './tenant.ts';
import './session.ts';
import './customer.ts';
import './health.ts';
import './churn.ts';
import './alert.ts';
import './api-key.ts';
import './audit.ts';
import './integration.ts';
import './webhook.ts';
import './usage-event.ts';
import './signal.ts';
import './portfolio.ts';
import './workspace.ts';

export const schema = builder.toSchema({ sortSchema: true });
