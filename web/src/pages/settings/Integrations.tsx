import { useState, type FormEvent } from 'react';
import { useMutation, useQuery } from 'urql';
import { StatusPill } from '../../components/Badges.tsx';
import { SecretOnce } from '../../components/SecretOnce.tsx';
import { ErrorState, FormError, Loading } from '../../components/States.tsx';
import { graphql } from '../../gql/index.ts';
import type { IntegrationsQuery } from '../../gql/graphql.ts';
import { formatDateTime, formatRelative } from '../../lib/format.ts';
import { PROVIDER_GUIDES } from '../../lib/providers.ts';
import { useViewer } from '../../lib/viewer.tsx';

const IntegrationsDoc = graphql(`
  query Integrations {
    integrations {
      provider
      inboundPath
      secretSet
      verifyTokenSet
      previousSecretValidUntil
      lastEvent {
        id
        eventType
        status
        receivedAt
      }
      freshness {
        usualGapSeconds
        silentAfterSeconds
        silent
        silentSince
      }
    }
  }
`);

const SetSecretDoc = graphql(`
  mutation SetInboundSecret($provider: Provider!, $secret: String, $verifyToken: String) {
    setInboundSecret(provider: $provider, secret: $secret, verifyToken: $verifyToken) {
      provider
      secret
      rotated
    }
  }
`);

type Integration = IntegrationsQuery['integrations'][number];

/** A wait in the largest whole unit that says it: "6 hours", "2 days". */
function span(seconds: number): string {
  const [n, unit] = seconds >= 172_800 ? [seconds / 86_400, 'day'] : seconds >= 7200 ? [seconds / 3600, 'hour'] : [seconds / 60, 'minute'];
  const whole = Math.round(n);
  return `${whole} ${unit}${whole === 1 ? '' : 's'}`;
}

/** Whether the provider's events still arrive as usual; silent ones make their dimensions stale. */
function Freshness({ freshness }: { freshness: Integration['freshness'] }) {
  if (!freshness) return null;
  if (freshness.silent)
    return (
      <p className="small warning" data-testid="freshness" role="status">
        <span className="pill pill-failed">Silent</span> No events for longer than {span(freshness.silentAfterSeconds ?? 3600)} (its usual
        longest wait is {span(freshness.usualGapSeconds ?? 0)}), since {formatDateTime(freshness.silentSince)}. The dimensions it feeds show
        as stale on customers' health until its events return.
      </p>
    );
  return (
    <p className="small muted" data-testid="freshness">
      {freshness.usualGapSeconds === null
        ? 'Learning how often it sends: a silence is flagged once it has been heard on 3 days and 10 events.'
        : `Usually sends within ${span(freshness.usualGapSeconds)}; flagged silent after ${span(freshness.silentAfterSeconds ?? 3600)} without events.`}
    </p>
  );
}

export function Integrations() {
  const { canManage } = useViewer();
  const [{ data, error, fetching }, refetch] = useQuery({ query: IntegrationsDoc });
  const reload = () => refetch({ requestPolicy: 'network-only' });
  if (error && !data) return <ErrorState error={error} retry={reload} />;
  if (!data) return fetching ? <Loading label="Loading integrations" /> : null;
  return (
    <>
      <div className="page-head">
        <h1>Integrations</h1>
        <button type="button" className="ghost" onClick={reload} disabled={fetching}>
          Refresh
        </button>
      </div>
      <p className="muted">
        Each provider posts to your workspace’s own URL and signs with a secret only you and it know. Events are accepted on every plan and
        do not count against the API rate limit.
      </p>
      <div className="cards">
        {data.integrations.map((i) => (
          <IntegrationCard key={i.provider} integration={i} canManage={canManage} onChanged={reload} />
        ))}
      </div>
    </>
  );
}

function IntegrationCard({
  integration: i,
  canManage,
  onChanged,
}: {
  integration: Integration;
  canManage: boolean;
  onChanged: () => void;
}) {
  const guide = PROVIDER_GUIDES[i.provider];
  const url = `${window.location.origin}${i.inboundPath}`;
  const [mode, setMode] = useState<'idle' | 'paste'>('idle');
  const [secret, setSecret] = useState('');
  const [verifyToken, setVerifyToken] = useState('');
  const [issued, setIssued] = useState<{ secret: string; rotated: boolean; generated: boolean } | null>(null);
  const [{ fetching, error }, put] = useMutation(SetSecretDoc);
  const [copied, setCopied] = useState(false);

  const generate = async () => {
    const r = await put({ provider: i.provider });
    if (r.data) {
      setIssued({ secret: r.data.setInboundSecret.secret, rotated: r.data.setInboundSecret.rotated, generated: true });
      onChanged();
    }
  };
  const paste = async (e: FormEvent) => {
    e.preventDefault();
    const r = await put({ provider: i.provider, secret: secret.trim() || null, verifyToken: verifyToken.trim() || null });
    if (r.data) {
      setSecret('');
      setVerifyToken('');
      setMode('idle');
      setIssued(r.data.setInboundSecret.rotated ? { secret: '', rotated: true, generated: false } : null);
      onChanged();
    }
  };
  const copyUrl = async () => {
    try {
      await navigator.clipboard.writeText(url);
      setCopied(true);
    } catch {
      setCopied(false);
    }
  };

  return (
    <article className="card integration" aria-labelledby={`int-${i.provider}`} data-provider={i.provider}>
      <div className="card-head">
        <h2 id={`int-${i.provider}`}>{PROVIDER_GUIDES[i.provider].label}</h2>
        <span className={`pill ${i.secretSet ? 'pill-active' : 'pill-disabled'}`}>{i.secretSet ? 'Connected' : 'Not set up'}</span>
      </div>
      <p className="muted small">{guide.kind}</p>
      <label className="field">
        <span>Inbound URL</span>
        <span className="secret-row">
          <input readOnly value={url} className="mono" onFocus={(e) => e.currentTarget.select()} data-testid="inbound-url" />
          <button type="button" onClick={copyUrl}>
            {copied ? 'Copied' : 'Copy'}
          </button>
        </span>
      </label>
      <p className="small">{guide.steps}</p>
      <div className="last-event" data-testid="last-event">
        <span className="muted small">Last event: </span>
        {i.lastEvent ? (
          <>
            <code>{i.lastEvent.eventType}</code> <StatusPill status={i.lastEvent.status} />{' '}
            <time className="small" title={formatDateTime(i.lastEvent.receivedAt)}>
              {formatRelative(i.lastEvent.receivedAt)}
            </time>
          </>
        ) : (
          <span className="small">none received yet</span>
        )}
      </div>
      <Freshness freshness={i.freshness} />
      {i.previousSecretValidUntil ? (
        <p className="small muted">The previous secret keeps verifying until {formatDateTime(i.previousSecretValidUntil)}.</p>
      ) : null}
      {i.provider === 'meta_ads' && i.secretSet && !i.verifyTokenSet ? (
        <p className="small warning">Set a verify token so Meta can confirm the subscription.</p>
      ) : null}

      {issued?.generated ? (
        <SecretOnce label={`${PROVIDER_GUIDES[i.provider].label} signing secret`} secret={issued.secret} onDone={() => setIssued(null)}>
          {issued.rotated ? (
            <p className="small">The previous secret keeps verifying for 24 hours while you update {PROVIDER_GUIDES[i.provider].label}.</p>
          ) : null}
        </SecretOnce>
      ) : null}
      {issued && !issued.generated ? (
        <p role="status" className="small">
          Saved. The previous secret keeps verifying for 24 hours.
        </p>
      ) : null}

      {canManage && !issued?.generated ? (
        mode === 'paste' ? (
          <form onSubmit={paste} className="stack">
            <label className="field">
              <span>{guide.provided}</span>
              <input
                className="mono"
                autoComplete="off"
                value={secret}
                onChange={(e) => setSecret(e.target.value)}
                required={i.provider !== 'meta_ads' || !i.secretSet}
              />
            </label>
            {i.provider === 'meta_ads' ? (
              <label className="field">
                <span>Verify token</span>
                <input autoComplete="off" value={verifyToken} onChange={(e) => setVerifyToken(e.target.value)} />
              </label>
            ) : null}
            <FormError error={error} />
            <span className="toolbar">
              <button type="submit" className="primary" disabled={fetching}>
                Save
              </button>
              <button type="button" className="ghost" onClick={() => setMode('idle')}>
                Cancel
              </button>
            </span>
          </form>
        ) : (
          <div className="toolbar">
            {guide.generate ? (
              <button type="button" className="primary" disabled={fetching} onClick={generate}>
                {i.secretSet ? 'Rotate secret' : 'Generate secret'}
              </button>
            ) : null}
            <button type="button" onClick={() => setMode('paste')}>
              {i.provider === 'discord' ? (i.secretSet ? 'Replace public key' : 'Set public key') : 'Use the provider’s secret'}
            </button>
            <FormError error={error} />
          </div>
        )
      ) : null}
      {!canManage ? <p className="muted small">Owners and admins set up integrations.</p> : null}
    </article>
  );
}
