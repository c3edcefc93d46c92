import { LRUCache } from 'lru-cache';
import { type AttemptCounter, clientKey, createFailureBudget } from '../auth/attempt-counter.ts';

/** How long a sender whose signature verified at an address stays exempt from that address's budgets. */
const KNOWN_SENDER_TTL_MS = 3_600_000;

/**
 * Budgets of failed signature checks at the inbound addresses of tenants that exist (docs/inbound-webhooks.md,
 * "Failed signatures"). Counted per sender (a client address at one inbound address), per client address
 * over every inbound address, and per inbound address over every client; once one is spent, that sender is
 * refused (429) until its window ends, before its body is read. A sender whose signature verified at the
 * address within the hour (in this process) is exempt from all three: a provider sends from the same few
 * addresses, and failures others cause there — at one tenant's address, or at many — must not cut it off.
 */
export interface VerificationBudget {
  /** Seconds `client` must wait before its requests to `address` are verified again, or 0. */
  waitFor(client: string, address: string): number;
  /** Counts a failed verification by `client` at `address`. */
  failed(client: string, address: string): Promise<void>;
  /** Remembers that `client` verified at `address`. */
  verified(client: string, address: string): void;
}

export function createVerificationBudget(opts: {
  counter: (name: string) => AttemptCounter;
  perSender: number;
  perClient: number;
  perAddress: number;
}): VerificationBudget {
  const senders = createFailureBudget(opts.counter('inbound-bad-signature-sender'), opts.perSender);
  const clients = createFailureBudget(opts.counter('inbound-bad-signature-client'), opts.perClient);
  const addresses = createFailureBudget(opts.counter('inbound-bad-signature-address'), opts.perAddress);
  const known = new LRUCache<string, true>({ max: 100_000, ttl: KNOWN_SENDER_TTL_MS });
  const sender = (client: string, address: string) => `${clientKey(client)} ${address}`;
  return {
    waitFor(client, address) {
      const key = sender(client, address);
      if (known.has(key)) return 0;
      return Math.max(senders.waitFor(key), clients.waitFor(client), addresses.waitFor(address));
    },
    async failed(client, address) {
      await Promise.all([senders.fail(sender(client, address)), clients.fail(client), addresses.fail(address)]);
    },
    verified(client, address) {
      known.set(sender(client, address), true);
    },
  };
}
