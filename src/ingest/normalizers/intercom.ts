import type { SignalKind } from '../../scoring/signal-kinds.ts';
import type { FieldError } from '../../errors.ts';
import { RangeCheck } from './ranges.ts';
import { companyDomain } from '../email-domain.ts';
import { sentimentOf } from '../sentiment.ts';
import { fromUnix, type Normalizer, str } from './types.ts';

const TOPICS: Record<string, SignalKind> = {
  'conversation.user.created': 'support.conversation_opened',
  'conversation.user.replied': 'support.customer_replied',
  'conversation.admin.replied': 'support.agent_replied',
  'conversation.admin.closed': 'support.conversation_closed',
  'conversation.admin.snoozed': 'support.conversation_snoozed',
  'conversation.admin.opened': 'support.conversation_reopened',
  'conversation.rating.added': 'support.rating',
};

/** Intercom conversations: opened, replied, closed, rated; by company, contact or email domain. */
export const normalizeIntercom: Normalizer = (event) => {
  // Own keys only: a topic named like an Object.prototype member (`constructor`) is just unknown.
  const kind = Object.hasOwn(TOPICS, event.eventType) ? TOPICS[event.eventType] : undefined;
  if (!kind) return [];
  const item = event.body?.data?.item ?? {};
  const contacts: any[] = item.contacts?.contacts ?? [];
  const author = item.source?.author ?? {};
  const email = author.email ?? contacts[0]?.email;
  const companyIds = (item.companies?.companies ?? []).map((c: any) => str(c?.company_id ?? c?.id));
  const contactIds = contacts.map((c) => str(c?.external_id ?? c?.id));
  const domain = companyDomain(email);
  const rating = Number(item.conversation_rating?.rating);
  const text = String(item.source?.body ?? item.conversation_parts?.conversation_parts?.at(-1)?.body ?? '').replace(/<[^>]+>/g, ' ');
  return [
    {
      kind: 'activity',
      match: { accountIds: [...companyIds, ...contactIds], emailDomain: domain },
      signal: {
        kind,
        value: kind === 'support.rating' && Number.isFinite(rating) ? rating : 1,
        sentiment: kind === 'support.conversation_opened' || kind === 'support.customer_replied' ? sentimentOf(text) : null,
        occurredAt: fromUnix(event.body?.created_at) ?? event.receivedAt,
        accountId: companyIds[0] ?? null,
        altAccountId: contactIds[0] ?? null,
        emailDomain: domain,
        attributes: { conversation_id: str(item.id), state: str(item.state) },
      },
    },
  ];
};

/** The time an Intercom notification's signal would be recorded at and the ids it is kept under, out of range (ranges.ts). */
export function intercomRangeErrors(body: any): FieldError[] {
  const check = new RangeCheck().unix('created_at', body?.created_at);
  const item = body?.data?.item ?? {};
  check.key('data.item.id', item.id).key('data.item.source.author.email', item.source?.author?.email);
  const companies: any[] = Array.isArray(item.companies?.companies) ? item.companies.companies : [];
  companies.forEach((c, i) => check.key(`data.item.companies.companies.${i}`, c?.company_id ?? c?.id));
  const contacts: any[] = Array.isArray(item.contacts?.contacts) ? item.contacts.contacts : [];
  contacts.forEach((c, i) =>
    check.key(`data.item.contacts.contacts.${i}`, c?.external_id ?? c?.id).key(`data.item.contacts.contacts.${i}.email`, c?.email),
  );
  return check.errors;
}
