import { useEffect, useState, type FormEvent } from 'react';
import { Link, useNavigate, useParams } from 'react-router';
import { useMutation, useQuery } from 'urql';
import { CircuitBadge, StatusPill } from '../../components/Badges.tsx';
import { DeliveryChart } from '../../components/Charts.tsx';
import { Dialog } from '../../components/Dialog.tsx';
import { EventPicker } from '../../components/EventPicker.tsx';
import { describeFilters, FilterEditor } from '../../components/FilterEditor.tsx';
import { Pager, useCursorStack } from '../../components/Pager.tsx';
import { SecretOnce } from '../../components/SecretOnce.tsx';
import { SIGNATURE_SCHEME_LABELS, SignatureSchemePicker } from '../../components/SignatureSchemePicker.tsx';
import { Empty, ErrorState, FormError, Loading } from '../../components/States.tsx';
import { graphql } from '../../gql/index.ts';
import type { WebhookEndpointQuery, WebhookStatsWindow } from '../../gql/graphql.ts';
import { formatDateTime, formatPercent, formatRelative } from '../../lib/format.ts';
import { useViewer } from '../../lib/viewer.tsx';

const EndpointDoc = graphql(`
  query WebhookEndpoint($id: UUID!) {
    webhookEndpoint(id: $id) {
      ...EndpointFields
      previousSecretValidUntil
      previousPublicKey
      rateLimitPerSecond
      filters
      updatedAt
    }
  }
`);

const StatsDoc = graphql(`
  query WebhookEndpointFigures($endpointId: UUID!, $window: WebhookStatsWindow) {
    webhookEndpointStats(endpointId: $endpointId, window: $window) {
      window
      attempts
      succeeded
      failed
      successRate
      latencyMs {
        p50
        p95
        p99
      }
      pending
      held
      oldestPendingAgeSeconds
      points {
        from
        attempts
        succeeded
        failed
        p95Ms
      }
    }
  }
`);

const DeliveriesDoc = graphql(`
  query WebhookDeliveries($endpointId: UUID!, $first: Int, $after: String) {
    webhookDeliveries(endpointId: $endpointId, first: $first, after: $after) {
      totalCount
      pageInfo {
        endCursor
        hasNextPage
      }
      nodes {
        id
        eventType
        status
        isTest
        attempts
        lastStatusCode
        lastError
        nextAttemptAt
        createdAt
        envelope
        attemptLog {
          attempt
          startedAt
          durationMs
          statusCode
          error
          responseBody
        }
      }
    }
  }
`);

const UpdateEndpointDoc = graphql(`
  mutation UpdateWebhookEndpoint($id: UUID!, $input: WebhookEndpointInput!) {
    updateWebhookEndpoint(id: $id, input: $input) {
      ...EndpointFields
      rateLimitPerSecond
      filters
      updatedAt
    }
  }
`);

const TestEndpointDoc = graphql(`
  mutation TestWebhookEndpoint($id: UUID!, $event: String) {
    testWebhookEndpoint(id: $id, event: $event) {
      deliveryId
      event
      success
      statusCode
      durationMs
      error
    }
  }
`);

const RotateSecretDoc = graphql(`
  mutation RotateWebhookSecret($id: UUID!) {
    rotateWebhookEndpointSecret(id: $id) {
      secret
      endpoint {
        id
        previousSecretValidUntil
      }
    }
  }
`);

const DeleteEndpointDoc = graphql(`
  mutation DeleteWebhookEndpoint($id: UUID!) {
    deleteWebhookEndpoint(id: $id)
  }
`);

const ResendDoc = graphql(`
  mutation ResendWebhookDelivery($id: UUID!) {
    resendWebhookDelivery(id: $id)
  }
`);

const ReplayDoc = graphql(`
  mutation ReplayWebhookDeliveries($endpointId: UUID!, $since: DateTime!) {
    replayWebhookDeliveries(endpointId: $endpointId, since: $since)
  }
`);

type Endpoint = WebhookEndpointQuery['webhookEndpoint'];

export function WebhookEndpointPage() {
  const { id = '' } = useParams();
  const { canManage } = useViewer();
  const [{ data, error, fetching }, refetch] = useQuery({ query: EndpointDoc, variables: { id } });
  const [deliveriesVersion, setDeliveriesVersion] = useState(0);
  const reload = () => refetch({ requestPolicy: 'network-only' });

  if (error && !data) return <ErrorState error={error} retry={reload} />;
  if (!data) return fetching ? <Loading label="Loading endpoint" /> : null;
  const e = data.webhookEndpoint;
  return (
    <>
      <nav className="crumbs" aria-label="Breadcrumb">
        <Link to="/settings/webhooks">Webhooks</Link> / <span aria-current="page">Endpoint</span>
      </nav>
      <div className="page-head">
        <h1 className="mono break">{e.url}</h1>
        <span className="head-pills">
          {e.enabled ? <CircuitBadge circuit={e.circuit} /> : null}
          <span className={`pill ${e.enabled ? 'pill-active' : 'pill-disabled'}`}>{e.enabled ? 'Enabled' : 'Disabled'}</span>
        </span>
      </div>
      {!e.enabled && e.disabledReason ? (
        <p className="notice" role="status">
          Disabled: {e.disabledReason}. Fix the receiver, send a Test, then enable the endpoint again.
        </p>
      ) : null}
      {e.enabled && e.circuit.state !== 'closed' ? <CircuitNotice endpoint={e} canManage={canManage} onResumed={reload} /> : null}
      <p className="muted small">
        Created {formatDateTime(e.createdAt)} · last successful delivery {formatRelative(e.lastSuccessAt)}
        {e.previousSecretValidUntil ? ` · previous secret still signs until ${formatDateTime(e.previousSecretValidUntil)}` : ''}
      </p>
      <p className="muted small" data-testid="rate-limit">
        {e.rateLimitPerSecond === null ? 'No rate limit' : `At most ${e.rateLimitPerSecond} deliveries a second`}
      </p>
      <p className="muted small" data-testid="filters">
        {describeFilters(e.filters).length === 0
          ? 'No filters: every event of its types is sent'
          : `Sends ${describeFilters(e.filters).join('; ')}`}
      </p>
      <p className="muted small">
        Signed with {SIGNATURE_SCHEME_LABELS[e.signatureScheme] ?? e.signatureScheme}
        {e.signatureScheme === 'standard' && e.publicKey ? (
          <>
            {' '}
            · Ed25519 public key <code className="break">{e.publicKey}</code>
            {e.previousPublicKey ? (
              <>
                {' '}
                (and, until the previous secret expires, <code className="break">{e.previousPublicKey}</code>)
              </>
            ) : null}
          </>
        ) : null}
      </p>
      {canManage ? (
        <>
          <EndpointActions endpoint={e} onChanged={reload} />
          <TestPanel endpoint={e} onSent={() => setDeliveriesVersion((v) => v + 1)} />
          <EditPanel endpoint={e} onSaved={reload} />
        </>
      ) : (
        <section className="card">
          <h2>Events</h2>
          <ul className="inline-list">
            {e.events.map((ev) => (
              <li key={ev}>
                <code>{ev}</code>
              </li>
            ))}
          </ul>
        </section>
      )}
      <Figures endpointId={e.id} version={deliveriesVersion} />
      <DeliveryLog endpointId={e.id} version={deliveriesVersion} canResend={canManage} />
    </>
  );
}

/** What an open breaker means for the endpoint, and, for those who manage it, a way to resume at once. */
function CircuitNotice({ endpoint, canManage, onResumed }: { endpoint: Endpoint; canManage: boolean; onResumed: () => void }) {
  const [update, doUpdate] = useMutation(UpdateEndpointDoc);
  const c = endpoint.circuit;
  return (
    <div className="notice" role="status" data-testid="circuit-notice">
      <p>
        {c.state === 'open' ? 'Deliveries are paused' : 'A probe is being sent'}: {formatPercent(c.failureRate)} of the {c.recentAttempts}{' '}
        most recent attempts failed
        {c.openedAt ? `, paused since ${formatDateTime(c.openedAt)}` : ''}. Nothing is dropped: deliveries wait, and one is tried
        {c.state === 'open' && c.nextProbeAt ? ` ${formatRelative(c.nextProbeAt)} (${formatDateTime(c.nextProbeAt)})` : ' now'}; when it is
        delivered, everything held goes out. Each failed probe doubles the wait.
      </p>
      {canManage ? (
        <>
          <button
            type="button"
            disabled={update.fetching}
            onClick={async () => {
              const r = await doUpdate({ id: endpoint.id, input: { enabled: true } });
              if (r.data) onResumed();
            }}
          >
            Resume now
          </button>{' '}
          <span className="small muted">when you know the receiver is back: the held deliveries go out at once.</span>
          <FormError error={update.error} />
        </>
      ) : null}
    </div>
  );
}

const WINDOW_LABELS: Record<WebhookStatsWindow, string> = { day: 'Last 24 hours', hour: 'Last hour' };

const ms = (v: number | null) => (v === null ? '—' : `${v < 10 ? v.toFixed(1) : Math.round(v)} ms`);

/** The endpoint's delivery figures over the last day or hour: rates, latency percentiles, what waits, and a chart. */
function Figures({ endpointId, version }: { endpointId: string; version: number }) {
  const [span, setSpan] = useState<WebhookStatsWindow>('day');
  const [{ data, error, fetching }, refetch] = useQuery({ query: StatsDoc, variables: { endpointId, window: span } });
  useEffect(() => {
    if (version > 0) refetch({ requestPolicy: 'network-only' });
  }, [version, refetch]);
  const f = data?.webhookEndpointStats;
  return (
    <section className="card" aria-labelledby="figures-title" data-testid="figures">
      <div className="card-head">
        <h2 id="figures-title">Delivery figures</h2>
        <span className="toolbar">
          <select value={span} onChange={(ev) => setSpan(ev.target.value as WebhookStatsWindow)} aria-label="Window">
            {(Object.keys(WINDOW_LABELS) as WebhookStatsWindow[]).map((w) => (
              <option key={w} value={w}>
                {WINDOW_LABELS[w]}
              </option>
            ))}
          </select>
          <button type="button" className="ghost" onClick={() => refetch({ requestPolicy: 'network-only' })} disabled={fetching}>
            Reload figures
          </button>
        </span>
      </div>
      {error && !f ? <ErrorState error={error} retry={() => refetch({ requestPolicy: 'network-only' })} /> : null}
      {!f && fetching ? <Loading label="Loading figures" /> : null}
      {f ? (
        <>
          <dl className="figures">
            <div>
              <dt>Delivered</dt>
              <dd data-testid="success-rate">{f.successRate === null ? '—' : formatPercent(f.successRate, 1)}</dd>
            </div>
            <div>
              <dt>Attempts</dt>
              <dd>
                {f.attempts} ({f.failed} failed)
              </dd>
            </div>
            <div>
              <dt>Latency p50 / p95 / p99</dt>
              <dd>
                {ms(f.latencyMs.p50)} / {ms(f.latencyMs.p95)} / {ms(f.latencyMs.p99)}
              </dd>
            </div>
            <div>
              <dt>Waiting now</dt>
              <dd>
                {f.pending}
                {f.held ? ` (${f.held} held)` : ''}
              </dd>
            </div>
            <div>
              <dt>Oldest waiting</dt>
              <dd>{f.oldestPendingAgeSeconds === null ? '—' : formatAge(f.oldestPendingAgeSeconds)}</dd>
            </div>
          </dl>
          <DeliveryChart points={f.points} />
          <p className="muted small">Attempts, Tests excluded; latency from sending to the answer, estimated within about 12 %.</p>
        </>
      ) : null}
    </section>
  );
}

function formatAge(seconds: number): string {
  if (seconds < 60) return `${Math.round(seconds)} s`;
  if (seconds < 3600) return `${Math.round(seconds / 60)} min`;
  if (seconds < 86_400) return `${(seconds / 3600).toFixed(1)} h`;
  return `${(seconds / 86_400).toFixed(1)} days`;
}

function EndpointActions({ endpoint, onChanged }: { endpoint: Endpoint; onChanged: () => void }) {
  const navigate = useNavigate();
  const [update, doUpdate] = useMutation(UpdateEndpointDoc);
  const [rotate, doRotate] = useMutation(RotateSecretDoc);
  const [del, doDelete] = useMutation(DeleteEndpointDoc);
  const [secret, setSecret] = useState<string | null>(null);
  const [confirm, setConfirm] = useState<'rotate' | 'delete' | null>(null);
  return (
    <section className="card">
      <div className="toolbar">
        <button
          type="button"
          disabled={update.fetching}
          onClick={async () => {
            const r = await doUpdate({ id: endpoint.id, input: { enabled: !endpoint.enabled } });
            if (r.data) onChanged();
          }}
        >
          {endpoint.enabled ? 'Disable' : 'Enable'}
        </button>
        <button type="button" onClick={() => setConfirm('rotate')}>
          Rotate secret
        </button>
        <button type="button" className="danger" onClick={() => setConfirm('delete')}>
          Delete
        </button>
      </div>
      <FormError error={update.error} />
      {secret ? (
        <SecretOnce label="New signing secret" secret={secret} onDone={() => setSecret(null)}>
          <p className="small">
            For 24 hours every delivery carries two signatures, the new one first, so you can switch your receiver without losing any.
          </p>
        </SecretOnce>
      ) : null}
      <Dialog
        title={confirm === 'delete' ? 'Delete this endpoint?' : 'Rotate the signing secret?'}
        open={confirm !== null}
        onClose={() => setConfirm(null)}
      >
        {confirm === 'delete' ? (
          <div className="stack">
            <p>No further deliveries are made to it, and its delivery log goes with it.</p>
            <FormError error={del.error} />
            <button
              type="button"
              className="danger"
              disabled={del.fetching}
              onClick={async () => {
                const r = await doDelete({ id: endpoint.id });
                if (r.data) navigate('/settings/webhooks');
              }}
            >
              Delete endpoint
            </button>
          </div>
        ) : (
          <div className="stack">
            <p>A new secret is issued and shown once. The current one keeps signing alongside it for 24 hours.</p>
            <FormError error={rotate.error} />
            <button
              type="button"
              className="primary"
              disabled={rotate.fetching}
              onClick={async () => {
                const r = await doRotate({ id: endpoint.id });
                if (r.data) {
                  setConfirm(null);
                  setSecret(r.data.rotateWebhookEndpointSecret.secret);
                  onChanged();
                }
              }}
            >
              Rotate secret
            </button>
          </div>
        )}
      </Dialog>
    </section>
  );
}

function TestPanel({ endpoint, onSent }: { endpoint: Endpoint; onSent: () => void }) {
  const [event, setEvent] = useState(endpoint.events[0] ?? '');
  const [{ data, error, fetching }, send] = useMutation(TestEndpointDoc);
  const result = data?.testWebhookEndpoint;
  return (
    <section className="card" aria-labelledby="test-title">
      <h2 id="test-title">Send a test</h2>
      <p className="muted small">
        A sample payload of the event, signed like any delivery. It is recorded in the log below, marked as a test.
      </p>
      <form
        className="inline-form"
        onSubmit={async (e) => {
          e.preventDefault();
          const r = await send({ id: endpoint.id, event });
          if (r.data) onSent();
        }}
      >
        <label className="field">
          <span>Event</span>
          <select value={event} onChange={(e) => setEvent(e.target.value)}>
            {endpoint.events.map((ev) => (
              <option key={ev} value={ev}>
                {ev}
              </option>
            ))}
          </select>
        </label>
        <button type="submit" className="primary" disabled={fetching}>
          {fetching ? 'Sending…' : 'Send test'}
        </button>
      </form>
      <FormError error={error} />
      {result ? (
        <div className={`test-result ${result.success ? 'ok' : 'bad'}`} role="status" data-testid="test-result">
          <strong>{result.success ? 'Delivered' : 'Failed'}</strong> · <code>{result.event}</code>
          {result.statusCode !== null ? ` · HTTP ${result.statusCode}` : ''}
          {result.durationMs !== null ? ` · ${result.durationMs} ms` : ''}
          {result.error ? <p className="small">{result.error}</p> : null}
          {!result.success ? (
            <p className="small">Check that the URL is reachable over HTTPS and that your receiver answers 2xx within 15 seconds.</p>
          ) : null}
        </div>
      ) : null}
    </section>
  );
}

function EditPanel({ endpoint, onSaved }: { endpoint: Endpoint; onSaved: () => void }) {
  const [url, setUrl] = useState(endpoint.url);
  const [description, setDescription] = useState(endpoint.description ?? '');
  const [events, setEvents] = useState(endpoint.events);
  const [signatureScheme, setSignatureScheme] = useState(endpoint.signatureScheme);
  const [rate, setRate] = useState(endpoint.rateLimitPerSecond === null ? '' : String(endpoint.rateLimitPerSecond));
  const [rateError, setRateError] = useState<string | null>(null);
  const [filtersText, setFiltersText] = useState(endpoint.filters ? JSON.stringify(endpoint.filters, null, 2) : '');
  const [filtersError, setFiltersError] = useState<string | null>(null);
  const [{ fetching, error, data }, save] = useMutation(UpdateEndpointDoc);
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    const rateLimitPerSecond = rate.trim() === '' ? null : Number(rate);
    // Text that is not a number would reach the server as null and remove the limit: refuse it here.
    if (rateLimitPerSecond !== null && !Number.isFinite(rateLimitPerSecond)) {
      setRateError('Enter a number of deliveries a second, or leave the field empty for no limit.');
      return;
    }
    setRateError(null);
    // Text that is not JSON is refused here; the server checks what it means and names each problem.
    let filters: unknown = null;
    try {
      filters = filtersText.trim() === '' ? null : JSON.parse(filtersText);
    } catch {
      setFiltersError('The filters are not valid JSON.');
      return;
    }
    setFiltersError(null);
    const r = await save({
      id: endpoint.id,
      input: {
        url: url.trim(),
        description: description.trim() || null,
        events,
        signatureScheme,
        // Empty is no limit; the server checks the bounds and says which field is wrong.
        rateLimitPerSecond,
        filters,
      },
    });
    if (r.data) onSaved();
  };
  return (
    <details className="card">
      <summary>
        <h2 className="inline">Edit URL, description, events, filters, signature headers and rate limit</h2>
      </summary>
      <form onSubmit={submit} className="stack">
        <label className="field">
          <span>Endpoint URL (HTTPS)</span>
          <input type="url" required value={url} onChange={(e) => setUrl(e.target.value)} />
        </label>
        <label className="field">
          <span>Description</span>
          <input maxLength={500} value={description} onChange={(e) => setDescription(e.target.value)} />
        </label>
        <EventPicker value={events} onChange={setEvents} />
        <FilterEditor events={events} value={filtersText} onChange={setFiltersText} />
        {filtersError ? (
          <p className="form-error" role="alert">
            {filtersError}
          </p>
        ) : null}
        <SignatureSchemePicker value={signatureScheme} onChange={setSignatureScheme} />
        <label className="field">
          <span>Rate limit (deliveries a second, 0.01 to 1000; empty for none)</span>
          <input
            inputMode="decimal"
            name="rateLimitPerSecond"
            value={rate}
            placeholder="No limit"
            onChange={(e) => setRate(e.target.value)}
            aria-invalid={rateError ? true : undefined}
          />
        </label>
        {rateError ? (
          <p className="form-error" role="alert">
            {rateError}
          </p>
        ) : null}
        <FormError error={error} />
        <button type="submit" className="primary" disabled={fetching || events.length === 0}>
          Save changes
        </button>
        <span role="status" className="small">
          {data && !fetching ? 'Saved.' : ''}
        </span>
      </form>
    </details>
  );
}

const PAGE_SIZE = 20;

function DeliveryLog({ endpointId, version, canResend }: { endpointId: string; version: number; canResend: boolean }) {
  const pages = useCursorStack(`${endpointId}:${version}`);
  const [{ data, error, fetching }, refetch] = useQuery({
    query: DeliveriesDoc,
    variables: { endpointId, first: PAGE_SIZE, after: pages.after },
  });
  const [resend, doResend] = useMutation(ResendDoc);
  const [replay, doReplay] = useMutation(ReplayDoc);
  const [note, setNote] = useState<string | null>(null);
  const reload = () => refetch({ requestPolicy: 'network-only' });
  // A test just sent is in the log: fetch it.
  useEffect(() => {
    if (version > 0) refetch({ requestPolicy: 'network-only' });
  }, [version, refetch]);
  const conn = data?.webhookDeliveries;
  return (
    <section className="card" aria-labelledby="log-title">
      <div className="card-head">
        <h2 id="log-title">Delivery log</h2>
        <span className="toolbar">
          <button type="button" className="ghost" onClick={reload} disabled={fetching}>
            Refresh
          </button>
          {canResend ? (
            <button
              type="button"
              disabled={replay.fetching}
              onClick={async () => {
                const r = await doReplay({ endpointId, since: new Date(Date.now() - 7 * 86_400_000).toISOString() });
                if (r.data) {
                  setNote(`${r.data.replayWebhookDeliveries} failed deliveries of the last 7 days queued again.`);
                  reload();
                }
              }}
            >
              Resend failed (7 days)
            </button>
          ) : null}
        </span>
      </div>
      <p role="status" className="small" aria-live="polite">
        {note}
      </p>
      <FormError error={resend.error ?? replay.error} />
      {error && !conn ? <ErrorState error={error} retry={reload} /> : null}
      {!conn && fetching ? <Loading label="Loading deliveries" /> : null}
      {conn && conn.totalCount === 0 ? (
        <Empty title="No deliveries yet">
          <p>Send a test above, or wait for the next event you subscribed to.</p>
        </Empty>
      ) : null}
      {conn && conn.totalCount > 0 ? (
        <>
          <ul className="deliveries" data-testid="delivery-log">
            {conn.nodes.map((d) => (
              <li key={d.id}>
                <details>
                  <summary>
                    <StatusPill status={d.status} /> <code>{d.eventType}</code>
                    {d.isTest ? <span className="pill pill-test">test</span> : null}
                    <span className="muted small">
                      {' '}
                      · {d.attempts} attempt{d.attempts === 1 ? '' : 's'}
                      {d.lastStatusCode !== null ? ` · HTTP ${d.lastStatusCode}` : ''} · {formatRelative(d.createdAt)}
                      {d.status === 'pending' && d.nextAttemptAt ? ` · next ${formatRelative(d.nextAttemptAt)}` : ''}
                    </span>
                  </summary>
                  <div className="delivery-body">
                    <p className="small mono">X-Webhook-Id: {d.id}</p>
                    {d.lastError ? <p className="small">Last error: {d.lastError}</p> : null}
                    <table className="table compact">
                      <thead>
                        <tr>
                          <th scope="col">#</th>
                          <th scope="col">Started</th>
                          <th scope="col">Result</th>
                          <th scope="col">Time</th>
                        </tr>
                      </thead>
                      <tbody>
                        {d.attemptLog.map((a) => (
                          <tr key={a.attempt}>
                            <td>{a.attempt}</td>
                            <td>{formatDateTime(a.startedAt)}</td>
                            <td>{a.statusCode !== null ? `HTTP ${a.statusCode}` : (a.error ?? '—')}</td>
                            <td>{a.durationMs} ms</td>
                          </tr>
                        ))}
                      </tbody>
                    </table>
                    <details>
                      <summary className="small">Payload</summary>
                      <pre className="code">{JSON.stringify(d.envelope, null, 2)}</pre>
                    </details>
                    {canResend && d.status !== 'pending' ? (
                      <button
                        type="button"
                        disabled={resend.fetching}
                        onClick={async () => {
                          const r = await doResend({ id: d.id });
                          if (r.data) {
                            setNote('Queued for another attempt in a moment; Refresh shows its result.');
                            reload();
                          }
                        }}
                      >
                        Resend
                      </button>
                    ) : null}
                  </div>
                </details>
              </li>
            ))}
          </ul>
          <Pager pages={pages} connection={conn} pageSize={PAGE_SIZE} noun="deliveries" />
        </>
      ) : null}
    </section>
  );
}
