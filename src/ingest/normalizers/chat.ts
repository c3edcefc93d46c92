import type { FieldError } from '../../errors.ts';
import { RangeCheck } from './ranges.ts';
import type { InboundCommand } from '../../services/inbound-commands.ts';
import { sentimentOf } from '../sentiment.ts';
import { fromUnix, type Normalizer, str } from './types.ts';

interface ChatFact {
  kind: 'chat.message' | 'chat.reaction' | 'chat.member_joined' | 'chat.member_left';
  account: string | null;
  alt: string | null;
  text?: string;
  at: Date;
  actor: string | null;
}

/** A chat activity: one signal of the customer its workspace or channel is. */
function record(f: ChatFact): InboundCommand[] {
  return [
    {
      kind: 'activity',
      match: { accountIds: [f.alt, f.account] },
      signal: {
        kind: f.kind,
        occurredAt: f.at,
        sentiment: f.text !== undefined ? sentimentOf(f.text) : null,
        accountId: f.account,
        altAccountId: f.alt,
        attributes: { actor: f.actor, length: f.text?.length ?? null },
      },
    },
  ];
}

/** The times a Slack event's signals would be recorded at and the ids they are kept under, out of range (ranges.ts). */
export function slackRangeErrors(body: any): FieldError[] {
  return new RangeCheck()
    .key('team_id', body?.team_id)
    .key('event.team', body?.event?.team)
    .key('event.channel', body?.event?.channel)
    .key('event.item.channel', body?.event?.item?.channel)
    .unix('event.event_ts', body?.event?.event_ts, { numericString: true })
    .unix('event.ts', body?.event?.ts, { numericString: true })
    .unix('event_time', body?.event_time).errors;
}

/** The time a Discord dispatch's signal would be recorded at and the ids it is kept under, out of range (ranges.ts). */
export function discordRangeErrors(body: any): FieldError[] {
  return new RangeCheck()
    .isoTime('d.timestamp', body?.d?.timestamp)
    .key('d.guild_id', body?.d?.guild_id)
    .key('guild_id', body?.guild_id)
    .key('d.channel_id', body?.d?.channel_id)
    .key('channel_id', body?.channel_id).errors;
}

/** Slack Events API: messages, reactions, joins and leaves, by team (workspace) or channel. */
export const normalizeSlack: Normalizer = (event) => {
  const b = event.body ?? {};
  const e = b.event ?? {};
  if (b.type !== 'event_callback') return [];
  const team = str(b.team_id) ?? str(e.team);
  const channel = str(e.channel) ?? str(e.item?.channel);
  const at = fromUnix(Number(e.event_ts ?? e.ts)) ?? fromUnix(b.event_time) ?? event.receivedAt;
  const base = { account: team, alt: channel, at, actor: str(e.user) };
  switch (e.type) {
    case 'message':
    case 'app_mention':
      // Edits, deletions and bot chatter are not the customer talking.
      if (e.subtype && e.subtype !== 'thread_broadcast' && e.subtype !== 'file_share') return [];
      if (e.bot_id) return [];
      return record({ ...base, kind: 'chat.message', text: String(e.text ?? '') });
    case 'reaction_added':
      return record({ ...base, kind: 'chat.reaction' });
    case 'member_joined_channel':
    case 'team_join':
      return record({ ...base, kind: 'chat.member_joined', actor: str(e.user?.id ?? e.user) });
    case 'member_left_channel':
      return record({ ...base, kind: 'chat.member_left' });
    default:
      return [];
  }
};

/**
 * Discord: gateway dispatches relayed by the tenant's bot (`{t, d}`: MESSAGE_CREATE,
 * MESSAGE_REACTION_ADD, GUILD_MEMBER_ADD, GUILD_MEMBER_REMOVE) and interactions, by guild. Webhook
 * Events (app authorised, entitlements, lobby messages) are kept but carry no customer signal.
 */
export const normalizeDiscord: Normalizer = (event) => {
  const b = event.body ?? {};
  const d = b.d ?? {};
  const at = (typeof d.timestamp === 'string' ? new Date(d.timestamp) : null) ?? event.receivedAt;
  const guild = str(d.guild_id) ?? str(b.guild_id);
  const base = { account: guild, alt: str(d.channel_id) ?? str(b.channel_id), at: Number.isNaN(at.getTime()) ? event.receivedAt : at };
  switch (b.t) {
    case 'MESSAGE_CREATE':
      if (d.author?.bot) return [];
      return record({ ...base, kind: 'chat.message', text: String(d.content ?? ''), actor: str(d.author?.id) });
    case 'MESSAGE_REACTION_ADD':
      return record({ ...base, kind: 'chat.reaction', actor: str(d.user_id) });
    case 'GUILD_MEMBER_ADD':
      return record({ ...base, kind: 'chat.member_joined', actor: str(d.user?.id) });
    case 'GUILD_MEMBER_REMOVE':
      return record({ ...base, kind: 'chat.member_left', actor: str(d.user?.id) });
    default:
      if (!guild || b.t || b.event) return [];
      // Interactions in a server: a command is the member talking to the app; a button click or a
      // form submitted counts as a reaction. Autocomplete fires per keystroke and counts for nothing.
      if (b.type === 2) return record({ ...base, kind: 'chat.message', text: '', actor: str(b.member?.user?.id) });
      if (b.type === 3 || b.type === 5) return record({ ...base, kind: 'chat.reaction', actor: str(b.member?.user?.id) });
      return [];
  }
};
