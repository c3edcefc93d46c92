import { discord } from './discord.ts';
import { github } from './github.ts';
import { intercom } from './intercom.ts';
import { metaAds } from './meta-ads.ts';
import { slack } from './slack.ts';
import { stripe } from './stripe.ts';
import type { ProviderName, ProviderSpec } from './types.ts';

export const PROVIDER_SPECS: Record<ProviderName, ProviderSpec> = {
  stripe,
  github,
  slack,
  discord,
  intercom,
  meta_ads: metaAds,
};
