import type { ProviderName } from '../providers/types.ts';
import { normalizeDiscord, normalizeSlack } from './chat.ts';
import { normalizeGithub } from './github.ts';
import { normalizeIntercom } from './intercom.ts';
import { normalizeMetaAds } from './meta-ads.ts';
import { normalizeStripe } from './stripe.ts';
import type { Normalizer } from './types.ts';

export const NORMALIZERS: Record<ProviderName, Normalizer> = {
  stripe: normalizeStripe,
  github: normalizeGithub,
  slack: normalizeSlack,
  discord: normalizeDiscord,
  intercom: normalizeIntercom,
  meta_ads: normalizeMetaAds,
};
