import type { InvoiceStatus } from '../contract/enums.ts';

export type { InvoiceStatus };

// docs/decisions.md §6. Anything else — including every move backwards — is an out-of-order event and is ignored.
const ALLOWED: Record<InvoiceStatus, readonly InvoiceStatus[]> = {
  draft: ['open', 'sent', 'paid', 'void'],
  open: ['sent', 'paid', 'overdue', 'void', 'uncollectible'],
  sent: ['paid', 'overdue', 'void', 'uncollectible'],
  overdue: ['paid', 'void', 'uncollectible'],
  uncollectible: ['paid'],
  paid: [],
  void: [],
};

export const canMove = (from: InvoiceStatus, to: InvoiceStatus) => ALLOWED[from].includes(to);

/** The outbound event a status announces, where there is one. */
export const EVENT_FOR_STATUS: Partial<Record<InvoiceStatus, 'invoice.created' | 'invoice.sent' | 'invoice.paid' | 'invoice.overdue'>> = {
  draft: 'invoice.created',
  sent: 'invoice.sent',
  paid: 'invoice.paid',
  overdue: 'invoice.overdue',
};
