import { useState, type FormEvent } from 'react';
import { useMutation, useQuery } from 'urql';
import { Dialog } from '../../components/Dialog.tsx';
import { TypeToConfirm } from '../../components/TypeToConfirm.tsx';
import { SelectFilter } from '../../components/SelectFilter.tsx';
import { Empty, ErrorState, FormError, Loading } from '../../components/States.tsx';
import { graphql } from '../../gql/index.ts';
import type { RetentionKey } from '../../gql/graphql.ts';

// The REST export's datasets and formats (GET /api/v1/exports/{dataset}), with what the screen calls them.
type DataExportDataset = 'customers' | 'health_history' | 'alerts' | 'signals' | 'churn_outcomes';
type DataExportFormat = 'ndjson' | 'csv';
import { useAuth } from '../../lib/auth.tsx';
import { downloadExport } from '../../lib/download.ts';
import { formatDateTime } from '../../lib/format.ts';
import { useViewer } from '../../lib/viewer.tsx';

const RetentionDoc = graphql(`
  query Retention {
    retention {
      key
      days
      defaultDays
      minDays
      maxDays
      isDefault
      description
    }
  }
`);

const SetRetentionDoc = graphql(`
  mutation SaveRetention($input: RetentionInput!) {
    setRetention(input: $input) {
      key
      days
      isDefault
    }
  }
`);

const WorkspaceDoc = graphql(`
  query WorkspaceDeletion {
    workspace {
      id
      name
      deletion {
        requestedAt
        dueAt
        requestedBy
      }
    }
  }
`);

const DeleteWorkspaceDoc = graphql(`
  mutation DeleteWorkspace($confirmName: String!) {
    deleteWorkspace(confirmName: $confirmName) {
      id
      deletion {
        requestedAt
        dueAt
        requestedBy
      }
    }
  }
`);

const CancelDeletionDoc = graphql(`
  mutation CancelWorkspaceDeletion {
    cancelWorkspaceDeletion {
      id
      deletion {
        dueAt
      }
    }
  }
`);

const DATASETS: (readonly [DataExportDataset, string])[] = [
  ['customers', 'Customers with health and churn'],
  ['health_history', 'Daily health history'],
  ['alerts', 'Alerts'],
  ['signals', 'Signals'],
  ['churn_outcomes', 'Churn labels'],
];
const FORMATS: (readonly [DataExportFormat, string])[] = [
  ['ndjson', 'NDJSON (one JSON object a line)'],
  ['csv', 'CSV'],
];

export function DataSettings() {
  const { canManage, user } = useViewer();
  return (
    <>
      <div className="page-head">
        <h1>Data</h1>
      </div>
      {canManage ? (
        <>
          <Exports />
          <RetentionSettings />
        </>
      ) : (
        <Empty title="Only owners and admins export data and set how long it is kept" />
      )}
      {user?.role === 'owner' ? <WorkspaceDeletion /> : null}
    </>
  );
}

function Exports() {
  const { session } = useAuth();
  const [dataset, setDataset] = useState<DataExportDataset>('customers');
  const [format, setFormat] = useState<DataExportFormat>('csv');
  const [from, setFrom] = useState('');
  const [to, setTo] = useState('');
  const [status, setStatus] = useState<string | null>(null);
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    const q = new URLSearchParams({ format });
    if (from && dataset !== 'customers') q.set('since', new Date(`${from}T00:00:00Z`).toISOString());
    if (to && dataset !== 'customers') q.set('until', new Date(Date.parse(`${to}T00:00:00Z`) + 86_400_000).toISOString());
    setStatus('Preparing the export…');
    try {
      await downloadExport(`/api/v1/exports/${dataset}?${q}`, session!.token);
      setStatus('The export was downloaded.');
    } catch (err) {
      setStatus((err as Error).message);
    }
  };
  return (
    <section className="card">
      <h2>Export</h2>
      <p className="muted small">
        The file is written as it is read, whatever the workspace’s size. Every export is recorded in the audit log. A single customer’s
        data (for an access request) is exported from the customer’s page.
      </p>
      <form className="filters" onSubmit={submit} aria-label="Export data">
        <SelectFilter label="Data" any="Choose" value={dataset} options={DATASETS} onChange={(v) => v && setDataset(v)} />
        <SelectFilter label="Format" any="Choose" value={format} options={FORMATS} onChange={(v) => v && setFormat(v)} />
        {dataset !== 'customers' ? (
          <>
            <label className="field">
              <span>From</span>
              <input type="date" value={from} onChange={(e) => setFrom(e.target.value)} />
            </label>
            <label className="field">
              <span>To</span>
              <input type="date" value={to} onChange={(e) => setTo(e.target.value)} />
            </label>
          </>
        ) : null}
        <div className="field">
          <span>&nbsp;</span>
          <button type="submit" className="primary">
            Download
          </button>
        </div>
      </form>
      <p role="status" className="small">
        {status}
      </p>
    </section>
  );
}

function RetentionSettings() {
  const [{ data, error, fetching }, refetch] = useQuery({ query: RetentionDoc });
  const [saved, save] = useMutation(SetRetentionDoc);
  const [edits, setEdits] = useState<Partial<Record<RetentionKey, string>>>({});
  const [done, setDone] = useState<string | null>(null);
  if (error && !data) return <ErrorState error={error} retry={() => refetch({ requestPolicy: 'network-only' })} />;
  if (!data) return fetching ? <Loading label="Loading retention" /> : null;
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    const input = Object.fromEntries(Object.entries(edits).map(([k, v]) => [k, v === '' ? null : Number(v)]));
    const r = await save({ input });
    if (r.data) {
      setEdits({});
      setDone('Saved. Data past a shortened window goes at the next retention pass.');
      refetch({ requestPolicy: 'network-only' });
    }
  };
  return (
    <section className="card">
      <h2>Retention</h2>
      <p className="muted small">How long each kind of data is kept, in days. Clear a field to go back to the default.</p>
      <form className="stack" onSubmit={submit} aria-label="Retention">
        {data.retention.map((r) => (
          <label key={r.key} className="field">
            <span>
              {r.description}{' '}
              <span className="muted small">
                (default {r.defaultDays}, {r.minDays}–{r.maxDays})
              </span>
            </span>
            <input
              type="number"
              name={r.key}
              min={r.minDays}
              max={r.maxDays}
              value={edits[r.key] ?? (r.isDefault ? '' : String(r.days))}
              placeholder={String(r.defaultDays)}
              onChange={(e) => setEdits({ ...edits, [r.key]: e.target.value })}
            />
          </label>
        ))}
        <FormError error={saved.error} />
        <div className="toolbar">
          <button type="submit" className="primary" disabled={saved.fetching || Object.keys(edits).length === 0}>
            Save retention
          </button>
          <span role="status" className="small">
            {done}
          </span>
        </div>
      </form>
    </section>
  );
}

function WorkspaceDeletion() {
  const [{ data, error }, refetch] = useQuery({ query: WorkspaceDoc });
  const [deleted, deleteWorkspace] = useMutation(DeleteWorkspaceDoc);
  const [cancelled, cancel] = useMutation(CancelDeletionDoc);
  const [open, setOpen] = useState(false);
  if (error && !data) return <ErrorState error={error} retry={() => refetch({ requestPolicy: 'network-only' })} />;
  if (!data) return null;
  const w = data.workspace;
  const confirm = async (typed: string) => {
    const r = await deleteWorkspace({ confirmName: typed });
    if (r.data) setOpen(false);
  };
  return (
    <section className="card danger-zone">
      <h2>Delete the workspace</h2>
      {w.deletion ? (
        <>
          <p role="status">
            The workspace is scheduled for deletion on <strong>{formatDateTime(w.deletion.dueAt)}</strong>
            {w.deletion.requestedBy ? ` (asked by ${w.deletion.requestedBy})` : ''}. Webhooks are held until then; after it, every customer,
            score, event, key and user of the workspace is removed.
          </p>
          <FormError error={cancelled.error} />
          <button type="button" className="primary" disabled={cancelled.fetching} onClick={() => cancel({})}>
            Cancel the deletion
          </button>
        </>
      ) : (
        <>
          <p className="muted small">
            Owners only. Webhooks to your endpoints stop at once; the workspace and all its data are removed after a waiting period during
            which any owner can cancel.
          </p>
          <button type="button" className="danger" onClick={() => setOpen(true)}>
            Delete workspace…
          </button>
        </>
      )}
      <Dialog title={`Delete “${w.name}”`} open={open} onClose={() => setOpen(false)}>
        <TypeToConfirm
          expected={w.name}
          label="Type the workspace’s name to confirm"
          action="Schedule the deletion"
          busy={deleted.fetching}
          error={deleted.error}
          onConfirm={confirm}
          onCancel={() => setOpen(false)}
        >
          <p>
            Every customer, score, signal, alert, key, user and the audit log of <strong>{w.name}</strong> will be removed when the waiting
            period ends. Until then you can cancel here.
          </p>
        </TypeToConfirm>
      </Dialog>
    </section>
  );
}
