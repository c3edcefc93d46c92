import type { InboundCommand } from '../../services/inbound-commands.ts';

export interface StoredEvent {
  id: string;
  tenantId: string;
  provider: string;
  eventType: string;
  body: any;
  receivedAt: Date;
}

/**
 * Reads a stored event into what it asks of the domain (services/inbound-commands.ts applies it): pure, no
 * statement. Nothing for the events kept but not used.
 */
export type Normalizer = (event: StoredEvent) => InboundCommand[];

export const fromUnix = (s: unknown): Date | null => (typeof s === 'number' && Number.isFinite(s) ? new Date(s * 1000) : null);
export const str = (v: unknown): string | null => (typeof v === 'string' && v.length > 0 ? v : typeof v === 'number' ? String(v) : null);
