import { completeStripe, normalizeStripe, stripeRangeErrors, objectsOfStripeEvent, orderKeyOfStripeEvent } from '../normalizers/stripe.ts';
import { hexEqual, hmacHex } from './hmac.ts';
import { header, KIB, type ProviderSpec, TOLERANCE_SECONDS, withinRanges } from './types.ts';

/** `Stripe-Signature: t=<unix>,v1=<hex>[,v1=<hex>...]` over `{t}.{raw body}`; any v1 may match. */
export function parseStripeSignature(value: string | undefined): { t: number; v1: string[] } | null {
  if (!value) return null;
  let t: number | undefined;
  const v1: string[] = [];
  for (const part of value.split(',')) {
    const [k, v] = part.split('=', 2).map((s) => s.trim());
    if (k === 't' && /^\d+$/.test(v ?? '')) t = Number(v);
    else if (k === 'v1' && v) v1.push(v.toLowerCase());
  }
  return t === undefined || v1.length === 0 ? null : { t, v1 };
}

export const stripe: ProviderSpec = {
  normalize: withinRanges(normalizeStripe, stripeRangeErrors),
  rangeErrors: stripeRangeErrors,
  complete: completeStripe,
  objectsOf: objectsOfStripeEvent,
  orderKeyOf: orderKeyOfStripeEvent,
  sign: (secret, body, now) => ({ 'stripe-signature': `t=${now},v1=${hmacHex('sha256', secret, `${now}.`, body)}` }),
  name: 'stripe',
  // Event objects carry one API object each (an invoice lists its first lines only): tens of kilobytes.
  maxBodyBytes: 512 * KIB,
  signed(headers, now) {
    const sig = parseStripeSignature(header(headers, 'stripe-signature'));
    return sig !== null && Math.abs(now - sig.t) <= TOLERANCE_SECONDS;
  },
  verify({ headers, rawBody, now }, secrets) {
    const sig = parseStripeSignature(header(headers, 'stripe-signature'));
    if (!sig || Math.abs(now - sig.t) > TOLERANCE_SECONDS) return false;
    return secrets.some((secret) => {
      const expected = hmacHex('sha256', secret, `${sig.t}.`, rawBody);
      return sig.v1.some((candidate) => hexEqual(candidate, expected));
    });
  },
  describe: (body) => ({ dedupKey: String(body?.id ?? ''), eventType: String(body?.type ?? 'unknown') }),
  openapi: {
    label: 'Stripe',
    headers: { 'stripe-signature': '`t=<unix seconds>,v1=<hex HMAC-SHA256>`.' },
    example: {
      summary: 'invoice.payment_failed',
      value: {
        id: 'evt_1P2',
        object: 'event',
        type: 'invoice.payment_failed',
        created: 1767225600,
        data: { object: { id: 'in_1', customer: 'cus_123', amount_due: 4900 } },
      },
    },
  },
};
