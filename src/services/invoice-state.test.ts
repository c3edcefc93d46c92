import { describe, expect, it } from 'vitest';
import { INVOICE_STATUSES } from '../contract/enums.ts';
import { canMove, EVENT_FOR_STATUS } from './invoice-state.ts';

describe('the invoice state machine', () => {
  it('moves forward along draft → open → sent → paid', () => {
    expect(canMove('draft', 'open')).toBe(true);
    expect(canMove('open', 'sent')).toBe(true);
    expect(canMove('sent', 'paid')).toBe(true);
  });

  it('lets an overdue or uncollectible invoice still be paid', () => {
    expect(canMove('overdue', 'paid')).toBe(true);
    expect(canMove('uncollectible', 'paid')).toBe(true);
  });

  it('ignores every move backwards, an out-of-order event', () => {
    expect(canMove('paid', 'open')).toBe(false);
    expect(canMove('sent', 'draft')).toBe(false);
    expect(canMove('overdue', 'sent')).toBe(false);
  });

  it('treats paid and void as final', () => {
    for (const to of INVOICE_STATUSES) {
      expect(canMove('paid', to), `paid → ${to}`).toBe(false);
      expect(canMove('void', to), `void → ${to}`).toBe(false);
    }
  });

  it('never moves to the status it is in', () => {
    for (const s of INVOICE_STATUSES) expect(canMove(s, s), s).toBe(false);
  });

  it('announces draft, sent, paid and overdue, and nothing else', () => {
    expect(EVENT_FOR_STATUS).toEqual({ draft: 'invoice.created', sent: 'invoice.sent', paid: 'invoice.paid', overdue: 'invoice.overdue' });
  });
});
