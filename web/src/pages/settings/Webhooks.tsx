import { useState, type FormEvent } from 'react';
import { Link } from 'react-router';
import { useMutation, useQuery } from 'urql';
import { Dialog } from '../../components/Dialog.tsx';
import { EventPicker } from '../../components/EventPicker.tsx';
import { SecretOnce } from '../../components/SecretOnce.tsx';
import { SignatureSchemePicker } from '../../components/SignatureSchemePicker.tsx';
import { Empty, ErrorState, FormError, Loading } from '../../components/States.tsx';
import { graphql } from '../../gql/index.ts';
import { CircuitBadge } from '../../components/Badges.tsx';
import { formatRelative } from '../../lib/format.ts';
import { useViewer } from '../../lib/viewer.tsx';

export const EndpointFields = graphql(`
  fragment EndpointFields on WebhookEndpoint {
    id
    url
    description
    events
    enabled
    disabledReason
    signatureScheme
    publicKey
    lastSuccessAt
    createdAt
    circuit {
      state
      openedAt
      nextProbeAt
      failureRate
      recentAttempts
    }
  }
`);

const EndpointsDoc = graphql(`
  query WebhookEndpoints {
    webhookEndpoints {
      ...EndpointFields
    }
  }
`);

const CreateEndpointDoc = graphql(`
  mutation CreateWebhookEndpoint($input: WebhookEndpointInput!) {
    createWebhookEndpoint(input: $input) {
      secret
      endpoint {
        id
        url
      }
    }
  }
`);

export function Webhooks() {
  const { canManage } = useViewer();
  const [{ data, error, fetching }, refetch] = useQuery({ query: EndpointsDoc });
  const [creating, setCreating] = useState(false);
  const [issued, setIssued] = useState<{ id: string; url: string; secret: string } | null>(null);
  const reload = () => refetch({ requestPolicy: 'network-only' });

  return (
    <>
      <div className="page-head">
        <h1>Webhooks</h1>
      </div>
      <p className="muted">
        Your endpoints receive signed HTTPS POSTs when health, churn predictions and alerts change. Verify the{' '}
        <code>X-Webhook-Signature</code> header with the endpoint’s secret; a delivery that fails is retried with backoff, always with the
        same <code>X-Webhook-Id</code>, and each endpoint’s log shows every attempt and when the next one is due.
      </p>
      {canManage ? (
        <div className="toolbar">
          <button type="button" className="primary" onClick={() => setCreating(true)}>
            Add endpoint
          </button>
        </div>
      ) : null}
      {issued ? (
        <SecretOnce label={`Signing secret for ${issued.url}`} secret={issued.secret} onDone={() => setIssued(null)}>
          <p className="small">
            Next: <Link to={`/settings/webhooks/${issued.id}`}>open the endpoint</Link> and send a Test to check your receiver verifies the
            signature.
          </p>
        </SecretOnce>
      ) : null}
      {error && !data ? <ErrorState error={error} retry={reload} /> : null}
      {!data && fetching ? <Loading label="Loading endpoints" /> : null}
      {data && data.webhookEndpoints.length === 0 ? (
        <Empty title="No endpoints yet">
          <p>{canManage ? 'Add the HTTPS URL of your server and pick the events it should receive.' : 'An owner or admin can add one.'}</p>
        </Empty>
      ) : null}
      {data && data.webhookEndpoints.length > 0 ? (
        <ul className="endpoint-list">
          {data.webhookEndpoints.map((e) => (
            <li key={e.id} className="card">
              <div className="card-head">
                <Link to={`/settings/webhooks/${e.id}`} className="mono">
                  {e.url}
                </Link>
                <span className="head-pills">
                  {e.enabled && e.circuit.state !== 'closed' ? <CircuitBadge circuit={e.circuit} /> : null}
                  <span className={`pill ${e.enabled ? 'pill-active' : 'pill-disabled'}`}>{e.enabled ? 'Enabled' : 'Disabled'}</span>
                </span>
              </div>
              {e.description ? <p>{e.description}</p> : null}
              <p className="muted small">
                {e.events.length} event{e.events.length === 1 ? '' : 's'} · last success {formatRelative(e.lastSuccessAt)}
                {!e.enabled && e.disabledReason ? ` · ${e.disabledReason}` : ''}
              </p>
            </li>
          ))}
        </ul>
      ) : null}
      <Dialog title="Add a webhook endpoint" open={creating} onClose={() => setCreating(false)}>
        <CreateEndpointForm
          onCreated={(created) => {
            setCreating(false);
            setIssued(created);
            reload();
          }}
        />
      </Dialog>
    </>
  );
}

function CreateEndpointForm({ onCreated }: { onCreated: (e: { id: string; url: string; secret: string }) => void }) {
  const [url, setUrl] = useState('https://');
  const [description, setDescription] = useState('');
  const [events, setEvents] = useState<string[]>([]);
  const [signatureScheme, setSignatureScheme] = useState('v0');
  const [{ fetching, error }, create] = useMutation(CreateEndpointDoc);
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    const r = await create({ input: { url: url.trim(), description: description.trim() || null, events, signatureScheme } });
    if (r.data) onCreated({ ...r.data.createWebhookEndpoint.endpoint, secret: r.data.createWebhookEndpoint.secret });
  };
  return (
    <form onSubmit={submit} className="stack">
      <label className="field">
        <span>Endpoint URL (HTTPS)</span>
        <input type="url" required value={url} onChange={(e) => setUrl(e.target.value)} autoFocus />
      </label>
      <label className="field">
        <span>Description (optional)</span>
        <input maxLength={500} value={description} onChange={(e) => setDescription(e.target.value)} />
      </label>
      <EventPicker value={events} onChange={setEvents} />
      <SignatureSchemePicker value={signatureScheme} onChange={setSignatureScheme} />
      <FormError error={error} />
      <button type="submit" className="primary" disabled={fetching || events.length === 0}>
        {fetching ? 'Adding…' : events.length === 0 ? 'Pick at least one event' : 'Add endpoint'}
      </button>
    </form>
  );
}
