import type { SignalKind } from '../../scoring/signal-kinds.ts';
import type { FieldError } from '../../errors.ts';
import { RangeCheck } from './ranges.ts';
import { companyDomain } from '../email-domain.ts';
import { type Normalizer, str } from './types.ts';

// Code-host activity by the customer's organisation (or the repository owner, for personal accounts).
const KINDS: Record<string, (b: any) => { kind: SignalKind; value?: number } | null> = {
  push: (b) => ({ kind: 'code.push', value: Array.isArray(b.commits) ? Math.max(1, b.commits.length) : 1 }),
  issues: (b) => (b.action === 'opened' ? { kind: 'code.issue_opened' } : b.action === 'closed' ? { kind: 'code.issue_closed' } : null),
  issue_comment: (b) => (b.action === 'created' ? { kind: 'code.comment' } : null),
  pull_request: (b) =>
    b.action === 'opened'
      ? { kind: 'code.pr_opened' }
      : b.action === 'closed' && b.pull_request?.merged
        ? { kind: 'code.pr_merged' }
        : null,
  pull_request_review: (b) => (b.action === 'submitted' ? { kind: 'code.review' } : null),
  star: (b) => (b.action === 'created' ? { kind: 'code.star' } : null),
  watch: (b) => (b.action === 'started' ? { kind: 'code.star' } : null),
  release: (b) => (b.action === 'published' ? { kind: 'code.release' } : null),
};

export const normalizeGithub: Normalizer = (event) => {
  const [name] = event.eventType.split('.');
  const b = event.body ?? {};
  const k = KINDS[name ?? '']?.(b);
  if (!k) return [];
  const org = str(b.organization?.login) ?? str(b.repository?.owner?.login);
  const domain = companyDomain(b.pusher?.email ?? b.sender?.email ?? b.head_commit?.author?.email);
  return [
    {
      kind: 'activity',
      match: { accountIds: [org, str(b.sender?.login)], emailDomain: domain },
      signal: {
        kind: k.kind,
        value: k.value ?? 1,
        occurredAt: event.receivedAt,
        accountId: org,
        altAccountId: str(b.sender?.login),
        emailDomain: domain,
        attributes: { repository: str(b.repository?.full_name), actor: str(b.sender?.login) },
      },
    },
  ];
};

/** The logins a GitHub event's signals are kept under, out of range (ranges.ts). */
export function githubRangeErrors(body: any): FieldError[] {
  return new RangeCheck()
    .key('organization.login', body?.organization?.login)
    .key('repository.owner.login', body?.repository?.owner?.login)
    .key('sender.login', body?.sender?.login).errors;
}
