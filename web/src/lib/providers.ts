import type { Provider } from '../gql/graphql.ts';

/**
 * Each inbound provider as the dashboard shows it: its name, and where it takes the URL and the secret, so
 * the integration card says what to do next. Keyed by the schema's Provider enum: a provider added to the
 * service fails to compile here until it is described.
 */
export const PROVIDER_GUIDES: Record<Provider, { label: string; kind: string; steps: string; provided?: string; generate: boolean }> = {
  stripe: {
    label: 'Stripe',
    kind: 'Payments',
    steps:
      'In Stripe, add an endpoint under Developers → Webhooks with this URL. Paste Stripe’s signing secret (whsec_…) here, or generate one here for a test sender.',
    provided: 'Stripe signing secret (whsec_…)',
    generate: true,
  },
  github: {
    label: 'GitHub',
    kind: 'Code host',
    steps:
      'In GitHub, add a webhook to the repository or organisation with this URL, content type application/json, and the secret generated here.',
    provided: 'Webhook secret',
    generate: true,
  },
  slack: {
    label: 'Slack',
    kind: 'Team chat',
    steps:
      'Set this URL as the Request URL under Event Subscriptions of your Slack app, and paste the app’s Signing Secret (Basic Information) here.',
    provided: 'Slack signing secret',
    generate: true,
  },
  discord: {
    label: 'Discord',
    kind: 'Community chat',
    steps:
      'Discord signs with your application’s key pair: paste the application’s public key (General Information), then set this URL as the Interactions Endpoint URL.',
    provided: 'Application public key (64 hex characters)',
    generate: false,
  },
  intercom: {
    label: 'Intercom',
    kind: 'Customer messaging',
    steps: 'In the Intercom Developer Hub, add this URL under Webhooks and paste your app’s client secret here, which Intercom signs with.',
    provided: 'Client secret',
    generate: true,
  },
  meta_ads: {
    label: 'Meta Ads',
    kind: 'Ad platform',
    steps:
      'In your Meta app, subscribe to leadgen webhooks with this URL and the verify token you set here; paste the app secret, which Meta signs with.',
    provided: 'App secret',
    generate: true,
  },
};

export const providerLabel = (p: Provider) => PROVIDER_GUIDES[p].label;
