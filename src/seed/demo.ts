import { issueApiKey } from '../auth/api-key-store.ts';
import { hashPassword } from '../auth/passwords.ts';
import type { Db } from '../db/prisma.ts';
import { composeHealth } from '../scoring/compose.ts';
import { DEFAULT_WEIGHTS, riskLevelFor } from '../scoring/dimensions.ts';

const COMPANIES = [
  ['Northwind Traders', 'northwind.example'],
  ['Globex', 'globex.example'],
  ['Initech', 'initech.example'],
  ['Umbrella Analytics', 'umbrella.example'],
  ['Hooli', 'hooli.example'],
  ['Vandelay Industries', 'vandelay.example'],
  ['Stark Logistics', 'stark.example'],
  ['Wayne Biotech', 'wayne.example'],
  ['Acme Robotics', 'acme.example'],
  ['Soylent Foods', 'soylent.example'],
  ['Cyberdyne Cloud', 'cyberdyne.example'],
  ['Tyrell Labs', 'tyrell.example'],
] as const;

export interface DemoTenant {
  tenantId: string;
  apiKey: string;
  email: string;
  password: string;
}

/** A Scale-plan demo tenant with customers whose health, churn and alerts make the read API worth calling. */
export async function seedDemoTenant(db: Db, password: string): Promise<DemoTenant> {
  const tenant = await db.tenant.create({ data: { name: 'Demo Co', plan: 'scale' } });
  const email = 'demo@example.com';
  await db.user.create({ data: { tenantId: tenant.id, email, passwordHash: await hashPassword(password), role: 'owner' } });
  const { secret } = await issueApiKey(db, { tenantId: tenant.id, name: 'Demo key' });

  let i = 0;
  for (const [name, domain] of COMPANIES) {
    i++;
    // Deterministic spread from thriving to failing customers.
    const base = 95 - i * 7;
    const dims = {
      usage: {
        score: clamp(base + 5),
        signals: [{ key: 'active_users_30d', label: 'Active users (30 days)', value: Math.max(1, 60 - i * 4) }],
      },
      engagement: { score: i % 4 === 0 ? null : clamp(base - 3), signals: [] },
      support: {
        score: clamp(base + 10),
        signals: [{ key: 'open_conversations', label: 'Open support conversations', value: Math.floor(i / 2) }],
      },
      billing: {
        score: clamp(i > 9 ? 20 : base + 8),
        signals: [{ key: 'failed_payments_30d', label: 'Failed payments (30 days)', value: i > 9 ? 2 : 0 }],
      },
      growth: { score: clamp(base), signals: [] },
    };
    const h = composeHealth(dims, DEFAULT_WEIGHTS);
    const probability = Math.round((1 / (1 + Math.exp((h.score! - 55) / 9))) * 1000) / 1000;
    const risk = riskLevelFor(probability);
    const customer = await db.customer.create({
      data: {
        tenantId: tenant.id,
        name,
        domain,
        email: `ops@${domain}`,
        externalId: `demo-${i}`,
        healthScore: h.score,
        healthStatus: h.status,
        churnProbability: probability,
        churnRiskLevel: risk,
        identities: { create: [{ tenantId: tenant.id, provider: 'stripe', externalId: `cus_demo${String(i).padStart(4, '0')}` }] },
      },
    });
    await db.healthSnapshot.create({
      data: {
        tenantId: tenant.id,
        customerId: customer.id,
        score: h.score!,
        status: h.status!,
        dimensions: h.dimensions as object[],
        trend7d: i % 3 === 0 ? -6 : 2,
        trend30d: i % 3 === 0 ? -12 : 4,
        weakestDimension: h.weakestDimension,
      },
    });
    await db.churnPrediction.create({
      data: {
        tenantId: tenant.id,
        customerId: customer.id,
        probability,
        riskLevel: risk,
        riskFactors:
          probability > 0.5 ? [{ code: 'failed_payments', description: 'Payments failed in the last 30 days', impact: 0.6 }] : [],
        recommendedInterventions:
          probability > 0.5
            ? [
                {
                  code: 'billing_outreach',
                  title: 'Reach out about billing',
                  description: 'Confirm the payment method and offer help.',
                  priority: 'high',
                },
              ]
            : [],
        modelVersion: 'default-v1',
      },
    });
    if (i > 9) {
      await db.alert.create({
        data: {
          tenantId: tenant.id,
          customerId: customer.id,
          alertType: 'payment_failed',
          severity: 'high',
          title: `${name}: payments failing`,
          message: 'Two payments failed in the last 30 days.',
          details: { failed_payments_30d: 2 },
        },
      });
    }
  }
  return { tenantId: tenant.id, apiKey: secret, email, password };
}

const clamp = (n: number) => Math.max(0, Math.min(100, n));
