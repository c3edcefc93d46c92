import { recordSignals, type SignalInput } from '../scoring/signals.ts';
import {
  applyBilling,
  type BillingCommand,
  type InvoiceSegment,
  invoiceSegment,
  type InvoiceTransition,
  isInvoiceTransition,
  touchesNoInvoice,
} from './billing-commands.ts';
import { resolveCustomer } from './customer-match.ts';
import type { ApplyContext, Outcome } from './inbound-context.ts';

export type { ApplyContext, Outcome };

// What an inbound event asks of the domain, as its provider's normalizer reads it (pure data, no statement),
// and the one place that applies it. Normalizers map; this module and billing-commands.ts write.

/** The customer an activity is about, as the event names it: resolved when applied (customer-match.ts). */
export interface CustomerMatch {
  accountIds: (string | null)[];
  emailDomain?: string | null;
}

/** A provider activity (a push, a message, a conversation, a lead): one signal of the customer it names. */
export interface ActivityCommand {
  kind: 'activity';
  match: CustomerMatch;
  signal: Omit<SignalInput, 'tenantId' | 'customerId' | 'inboxEventId' | 'source'>;
}

export type InboundCommand = ActivityCommand | BillingCommand;

/**
 * Applies an event's commands in order. `segment` is the invoice segment the batch put the event in
 * (`planSegments`); without one, its invoice transitions are a segment of their own.
 */
export async function applyCommands(ctx: ApplyContext, commands: InboundCommand[], segment?: InvoiceSegment): Promise<Outcome> {
  let outcome: Outcome = 'ignored';
  const signals: SignalInput[] = [];
  for (const command of commands) {
    if (command.kind === 'activity') {
      const customerId = await resolveCustomer(ctx.sql, ctx.event.tenantId, { provider: ctx.event.provider, ...command.match });
      signals.push({ ...command.signal, tenantId: ctx.event.tenantId, customerId, inboxEventId: ctx.event.id, source: ctx.event.provider });
      outcome = 'processed';
    } else if (isInvoiceTransition(command)) {
      const s = segment ?? alone(ctx.event.id, command);
      if ((await s.outcomeOf(ctx.event.id, ctx)) === 'processed') outcome = 'processed';
    } else if ((await applyBilling(ctx, command)) === 'processed') outcome = 'processed';
  }
  await recordSignals(ctx.sql, signals);
  return outcome;
}

/** An invoice transition applied on its own: a segment of one. */
function alone(eventId: string, t: InvoiceTransition): InvoiceSegment {
  const segment = invoiceSegment();
  segment.add(eventId, t);
  return segment;
}

/**
 * The invoice segments of a batch (its events in the order they are applied, each with its commands): runs
 * of events that each ask one invoice transition, applied together when the first is reached, with the
 * events between them that touch no invoice (billing-commands.ts, `InvoiceSegment`). Any other event ends
 * a segment.
 */
export function planSegments(events: { id: string; commands: InboundCommand[] }[]): Map<string, InvoiceSegment> {
  const planned = new Map<string, InvoiceSegment>();
  let segment = invoiceSegment();
  const end = () => {
    for (const id of segment.ids()) planned.set(id, segment);
    segment = invoiceSegment();
  };
  for (const { id, commands } of events) {
    const [only] = commands;
    if (commands.length === 1 && isInvoiceTransition(only!)) segment.add(id, only);
    else if (!commands.every(touchesNoInvoice)) end();
  }
  end();
  return planned;
}
