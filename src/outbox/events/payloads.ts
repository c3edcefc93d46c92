// The events about records, built from domain values for every writer of the outbox (the API's services,
// the inbound normalizers, the scoring and overdue passes): the payload is the registry's shape
// (./registry.ts) put through the one serializer, so a field added to a shape is demanded here by the
// compiler from every writer.
import { formatAmount } from '../../contract/money.ts';
import { serialize, type SourceOf } from '../../contract/serialize.ts';
import type { OutboxInput } from './enqueue.ts';
import { EVENTS, type EventName, type PayloadOf } from './registry.ts';

/**
 * An event of type `type` about `subject`, its payload serialized from the domain values of `source`.
 * `dedupKey` defaults to `<type>:<subject>`: writing the same event twice stays one event.
 */
export function eventOf<N extends EventName>(
  type: N,
  source: SourceOf<PayloadOf<N>> & { tenantId: string },
  opts: { subject: string; dedupKey?: string },
): OutboxInput {
  const payload = serialize(EVENTS[type].payload, source as never);
  return {
    tenantId: source.tenantId,
    type,
    subject: opts.subject,
    dedupKey: opts.dedupKey ?? `${type}:${opts.subject}`,
    payload,
  } as OutboxInput;
}

/** A customer as its events need it: the fields of its payload, as the domain names them. */
export type CustomerRecord = SourceOf<PayloadOf<'customer.created'>>;
export const customerCreated = (c: CustomerRecord) => eventOf('customer.created', c, { subject: c.id });

/** An alert as its events need it. */
export type AlertRecord = SourceOf<PayloadOf<'alert.created'>>;

export const alertEvent = (type: 'alert.created' | 'alert.resolved', a: AlertRecord) =>
  eventOf(type, a, {
    subject: a.id,
    // A reopened alert can resolve again: each resolution is its own event.
    dedupKey: type === 'alert.resolved' ? `${type}:${a.id}:${serialize(EVENTS[type].payload, a).resolved_at}` : undefined,
  });

/** An invoice row as the invoices table holds it (amounts in minor units). */
export interface InvoiceRecord {
  id: string;
  tenant_id: string;
  status: PayloadOf<'invoice.created'>['status'];
  total_minor: string | bigint;
  currency: string;
  customer_id: string | null;
  due_at: Date | null;
}

type InvoiceEvent = 'invoice.created' | 'invoice.sent' | 'invoice.paid' | 'invoice.overdue';

/** An invoice event, for the provider's changes and the overdue pass alike. */
export const invoiceEvent = (type: InvoiceEvent, inv: InvoiceRecord) =>
  eventOf(
    type,
    {
      tenantId: inv.tenant_id,
      invoiceId: inv.id,
      status: inv.status,
      total: formatAmount(BigInt(inv.total_minor), inv.currency),
      currency: inv.currency,
      customerId: inv.customer_id,
      dueAt: inv.due_at,
    },
    { subject: inv.id },
  );

/** A payment that failed or was refunded: its amount in minor units of its currency. */
export interface PaymentRecord {
  tenantId: string;
  paymentId: string;
  invoiceId: string | null;
  customerId: string | null;
  amountMinor: bigint;
  currency: string;
  reason: string | null;
}

export const paymentEvent = (type: 'payment.failed' | 'payment.refunded', p: PaymentRecord, opts: { subject: string; dedupKey: string }) =>
  eventOf(type, { ...p, amount: formatAmount(p.amountMinor, p.currency) }, opts);
