import type { FieldError } from '../../errors.ts';
import { RangeCheck } from './ranges.ts';
import { companyDomain } from '../email-domain.ts';
import type { InboundCommand } from '../../services/inbound-commands.ts';
import { fromUnix, type Normalizer, str } from './types.ts';

/** The lead's email, where the delivery carries the form answers (field_data) or an email field. */
function leadEmail(value: any): string | null {
  const fields: any[] = Array.isArray(value?.field_data) ? value.field_data : [];
  const f = fields.find((x) => /e-?mail/i.test(String(x?.name ?? '')));
  return str(f?.values?.[0]) ?? str(value?.email);
}

/** Meta lead ads (leadgen): each lead is attributed by page/ad account identity, else by the email domain. */
export const normalizeMetaAds: Normalizer = (event) => {
  const commands: InboundCommand[] = [];
  for (const entry of Array.isArray(event.body?.entry) ? event.body.entry : []) {
    for (const change of Array.isArray(entry?.changes) ? entry.changes : []) {
      if (change?.field !== 'leadgen') continue;
      const v = change.value ?? {};
      const page = str(v.page_id) ?? str(entry.id);
      const adAccount = str(v.ad_account_id);
      const domain = companyDomain(leadEmail(v));
      commands.push({
        kind: 'activity',
        match: { accountIds: [page, adAccount], emailDomain: domain },
        signal: {
          kind: 'ads.lead',
          occurredAt: fromUnix(v.created_time) ?? fromUnix(entry.time) ?? event.receivedAt,
          accountId: page,
          altAccountId: adAccount,
          emailDomain: domain,
          attributes: { leadgen_id: str(v.leadgen_id), ad_id: str(v.ad_id), form_id: str(v.form_id) },
        },
      });
    }
  }
  return commands;
};

/** The times a Meta delivery's lead signals would be recorded at and the ids they are kept under, out of range (ranges.ts). */
export function metaAdsRangeErrors(body: any): FieldError[] {
  const check = new RangeCheck();
  const entries: any[] = Array.isArray(body?.entry) ? body.entry : [];
  entries.forEach((entry, i) => {
    check.unix(`entry.${i}.time`, entry?.time).key(`entry.${i}.id`, entry?.id);
    const changes: any[] = Array.isArray(entry?.changes) ? entry.changes : [];
    changes.forEach((change, j) => {
      if (change?.field !== 'leadgen') return;
      const v = change?.value ?? {};
      check
        .unix(`entry.${i}.changes.${j}.value.created_time`, v.created_time)
        .key(`entry.${i}.changes.${j}.value.page_id`, v.page_id)
        .key(`entry.${i}.changes.${j}.value.ad_account_id`, v.ad_account_id)
        .key(`entry.${i}.changes.${j}.value`, leadEmail(v));
    });
  });
  return check.errors;
}
