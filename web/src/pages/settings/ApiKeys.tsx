import { useState, type FormEvent } from 'react';
import { useMutation, useQuery } from 'urql';
import { Dialog } from '../../components/Dialog.tsx';
import { SecretOnce } from '../../components/SecretOnce.tsx';
import { Empty, ErrorState, FormError, Loading } from '../../components/States.tsx';
import { StatusPill } from '../../components/Badges.tsx';
import { graphql } from '../../gql/index.ts';
import { formatDateTime, formatRelative, humanize } from '../../lib/format.ts';
import { useViewer } from '../../lib/viewer.tsx';

const ApiKeysDoc = graphql(`
  query ApiKeys {
    apiKeys {
      id
      name
      prefix
      status
      createdAt
      lastUsedAt
      expiresAt
      revokedAt
    }
  }
`);

const CreateApiKeyDoc = graphql(`
  mutation CreateApiKey($name: String!, $expiresAt: DateTime) {
    createApiKey(name: $name, expiresAt: $expiresAt) {
      secret
      apiKey {
        id
        name
        prefix
      }
    }
  }
`);

const RevokeApiKeyDoc = graphql(`
  mutation RevokeApiKey($id: UUID!) {
    revokeApiKey(id: $id) {
      id
      status
      revokedAt
    }
  }
`);

const RotateApiKeyDoc = graphql(`
  mutation RotateApiKey($id: UUID!, $gracePeriodHours: Int) {
    rotateApiKey(id: $id, gracePeriodHours: $gracePeriodHours) {
      secret
      apiKey {
        id
        name
        prefix
      }
    }
  }
`);

const EXPIRY: [string, number | null][] = [
  ['Never', null],
  ['30 days', 30],
  ['90 days', 90],
  ['1 year', 365],
];

export function ApiKeys() {
  const { tenant, canManage } = useViewer();
  return (
    <>
      <div className="page-head">
        <h1>API keys</h1>
      </div>
      <section className={`plan-note ${tenant.apiAccess ? '' : 'plan-note-warn'}`}>
        <p>
          Your workspace is on the <strong>{humanize(tenant.plan)}</strong> plan.{' '}
          {tenant.apiAccess
            ? 'API keys work with the REST API (/api/v1) and GraphQL; requests of all keys together share the plan’s rate limit.'
            : 'API access needs the Growth or Scale plan: keys can be created now but every request with them is refused (403) until the workspace upgrades.'}
        </p>
        <p className="muted small">
          Send a key as <code>Authorization: Bearer sk_…</code> or <code>X-API-Key: sk_…</code>. The reference is at{' '}
          <a href="/docs">/docs</a>.
        </p>
      </section>
      {canManage ? (
        <KeyManager />
      ) : (
        <Empty title="Only owners and admins manage API keys">
          <p>Ask an admin of your workspace for a key, or for the admin role.</p>
        </Empty>
      )}
    </>
  );
}

function KeyManager() {
  const [{ data, error, fetching }, refetch] = useQuery({ query: ApiKeysDoc });
  const [creating, setCreating] = useState(false);
  const [issued, setIssued] = useState<{ name: string; secret: string; note?: string } | null>(null);
  const [confirm, setConfirm] = useState<{ kind: 'revoke' | 'rotate'; id: string; name: string } | null>(null);
  const reload = () => refetch({ requestPolicy: 'network-only' });

  return (
    <>
      <div className="toolbar">
        <button type="button" className="primary" onClick={() => setCreating(true)}>
          Create API key
        </button>
      </div>
      {issued ? (
        <SecretOnce label={`Secret of “${issued.name}”`} secret={issued.secret} onDone={() => setIssued(null)}>
          {issued.note ? <p className="small">{issued.note}</p> : null}
        </SecretOnce>
      ) : null}
      {error && !data ? <ErrorState error={error} retry={reload} /> : null}
      {!data && fetching ? <Loading label="Loading API keys" /> : null}
      {data && data.apiKeys.length === 0 ? (
        <Empty title="No API keys yet">
          <p>Create one for each system that calls the API, so you can revoke one without breaking the others.</p>
        </Empty>
      ) : null}
      {data && data.apiKeys.length > 0 ? (
        <div className="table-wrap">
          <table className="table">
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Key</th>
                <th scope="col">Status</th>
                <th scope="col">Last used</th>
                <th scope="col" className="hide-narrow">
                  Created
                </th>
                <th scope="col">
                  <span className="sr-only">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {data.apiKeys.map((k) => (
                <tr key={k.id}>
                  <th scope="row">{k.name}</th>
                  <td className="mono">{k.prefix}…</td>
                  <td>
                    <StatusPill status={k.status} />
                    {k.status === 'expiring' && k.expiresAt ? (
                      <span className="muted small"> until {formatDateTime(k.expiresAt)}</span>
                    ) : null}
                  </td>
                  <td title={k.lastUsedAt ? formatDateTime(k.lastUsedAt) : undefined}>{formatRelative(k.lastUsedAt)}</td>
                  <td className="hide-narrow">{formatDateTime(k.createdAt)}</td>
                  <td className="actions">
                    {k.status === 'active' ? (
                      <>
                        <button type="button" onClick={() => setConfirm({ kind: 'rotate', id: k.id, name: k.name })}>
                          Rotate
                        </button>
                        <button type="button" className="danger" onClick={() => setConfirm({ kind: 'revoke', id: k.id, name: k.name })}>
                          Revoke
                        </button>
                      </>
                    ) : k.status === 'expiring' ? (
                      <button type="button" className="danger" onClick={() => setConfirm({ kind: 'revoke', id: k.id, name: k.name })}>
                        Revoke now
                      </button>
                    ) : null}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
      <Dialog title="Create an API key" open={creating} onClose={() => setCreating(false)}>
        <CreateKeyForm
          onCreated={(name, secret) => {
            setCreating(false);
            setIssued({ name, secret });
            reload();
          }}
        />
      </Dialog>
      <Dialog
        title={confirm?.kind === 'rotate' ? `Rotate “${confirm?.name}”` : `Revoke “${confirm?.name}”`}
        open={confirm !== null}
        onClose={() => setConfirm(null)}
      >
        {confirm ? (
          <ConfirmKeyAction
            {...confirm}
            onDone={(secret) => {
              setConfirm(null);
              if (secret)
                setIssued({ name: confirm.name, secret, note: 'The old key keeps working for the grace period you chose, then stops.' });
              reload();
            }}
          />
        ) : null}
      </Dialog>
    </>
  );
}

function CreateKeyForm({ onCreated }: { onCreated: (name: string, secret: string) => void }) {
  const [name, setName] = useState('');
  const [days, setDays] = useState<string>('');
  const [{ fetching, error }, create] = useMutation(CreateApiKeyDoc);
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    const expiresAt = days ? new Date(Date.now() + Number(days) * 86_400_000).toISOString() : null;
    const r = await create({ name: name.trim(), expiresAt });
    if (r.data) onCreated(r.data.createApiKey.apiKey.name, r.data.createApiKey.secret);
  };
  return (
    <form onSubmit={submit} className="stack">
      <label className="field">
        <span>Name</span>
        <input
          required
          maxLength={100}
          value={name}
          onChange={(e) => setName(e.target.value)}
          placeholder="e.g. Data warehouse sync"
          autoFocus
        />
      </label>
      <label className="field">
        <span>Expires</span>
        <select value={days} onChange={(e) => setDays(e.target.value)}>
          {EXPIRY.map(([label, d]) => (
            <option key={label} value={d ?? ''}>
              {label}
            </option>
          ))}
        </select>
      </label>
      <FormError error={error} />
      <button type="submit" className="primary" disabled={fetching}>
        {fetching ? 'Creating…' : 'Create key'}
      </button>
    </form>
  );
}

function ConfirmKeyAction({
  kind,
  id,
  onDone,
}: {
  kind: 'revoke' | 'rotate';
  id: string;
  name: string;
  onDone: (secret?: string) => void;
}) {
  const [grace, setGrace] = useState('24');
  const [revoke, doRevoke] = useMutation(RevokeApiKeyDoc);
  const [rotate, doRotate] = useMutation(RotateApiKeyDoc);
  if (kind === 'revoke') {
    return (
      <div className="stack">
        <p>Requests with this key are refused from now on. This cannot be undone.</p>
        <FormError error={revoke.error} />
        <button
          type="button"
          className="danger"
          disabled={revoke.fetching}
          onClick={async () => {
            const r = await doRevoke({ id });
            if (r.data) onDone();
          }}
        >
          Revoke key
        </button>
      </div>
    );
  }
  return (
    <div className="stack">
      <p>A new key is issued. Keep the old one working while you deploy the new one:</p>
      <label className="field">
        <span>Old key keeps working for</span>
        <select value={grace} onChange={(e) => setGrace(e.target.value)}>
          <option value="0">No time: stop it now</option>
          <option value="1">1 hour</option>
          <option value="24">24 hours</option>
          <option value="168">7 days</option>
        </select>
      </label>
      <FormError error={rotate.error} />
      <button
        type="button"
        className="primary"
        disabled={rotate.fetching}
        onClick={async () => {
          const r = await doRotate({ id, gracePeriodHours: Number(grace) });
          if (r.data) onDone(r.data.rotateApiKey.secret);
        }}
      >
        Rotate key
      </button>
    </div>
  );
}
