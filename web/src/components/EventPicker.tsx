import { useQuery } from 'urql';
import { graphql } from '../gql/index.ts';
import { ErrorState, Loading } from './States.tsx';

const EventTypesDoc = graphql(`
  query WebhookEventTypes {
    webhookEventTypes {
      name
      description
    }
  }
`);

/** Checkboxes for the events the service can send today, read from the API rather than hard-coded. */
export function EventPicker({ value, onChange }: { value: string[]; onChange: (events: string[]) => void }) {
  const [{ data, error, fetching }, refetch] = useQuery({ query: EventTypesDoc });
  if (error && !data) return <ErrorState error={error} retry={() => refetch({ requestPolicy: 'network-only' })} />;
  if (!data) return fetching ? <Loading label="Loading events" /> : null;
  const all = data.webhookEventTypes.map((e) => e.name);
  const toggle = (name: string) => onChange(value.includes(name) ? value.filter((v) => v !== name) : [...value, name]);
  return (
    <fieldset className="event-picker">
      <legend>Events to send</legend>
      <label className="check select-all">
        <input
          type="checkbox"
          checked={value.length === all.length}
          ref={(el) => {
            if (el) el.indeterminate = value.length > 0 && value.length < all.length;
          }}
          onChange={() => onChange(value.length === all.length ? [] : all)}
        />
        <span>All events</span>
      </label>
      {data.webhookEventTypes.map((e) => (
        <label key={e.name} className="check">
          <input type="checkbox" name="events" value={e.name} checked={value.includes(e.name)} onChange={() => toggle(e.name)} />
          <span>
            <code>{e.name}</code> <span className="muted small">{e.description}</span>
          </span>
        </label>
      ))}
    </fieldset>
  );
}
