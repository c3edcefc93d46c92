import { stringifyDocument, type TypedDocumentNode } from '@urql/core';
import { createClient } from 'graphql-sse';
import { useEffect, useRef } from 'react';
import { useAuth } from './auth.tsx';

/** Waits before the n-th reconnection: 1 s, 2 s, 4 s … up to 30 s, each with up to a second of jitter. */
const backoff = (retries: number) =>
  new Promise<void>((resolve) => setTimeout(resolve, Math.min(30_000, 1000 * 2 ** retries) + Math.random() * 1000));

/**
 * Keeps a subscription open over server-sent events (/graphql/stream) while the component is mounted, calling
 * `onData` with each result's data, and `onReconnected` after a broken stream is opened again (changes made
 * meanwhile were not sent: the caller reads the current state again). Reconnects with backoff, for as long as
 * the session lasts.
 */
export function useSubscription<Data, Variables extends Record<string, unknown>>(
  document: TypedDocumentNode<Data, Variables>,
  variables: Variables,
  onData: (data: Data) => void,
  onReconnected?: () => void,
) {
  const { session } = useAuth();
  const token = session?.token;
  // The latest callbacks, without reopening the stream whenever the caller renders.
  const handlers = useRef({ onData, onReconnected });
  handlers.current = { onData, onReconnected };
  const key = JSON.stringify(variables);
  useEffect(() => {
    if (!token) return;
    const client = createClient({
      url: '/graphql/stream',
      headers: { authorization: `Bearer ${token}` },
      retryAttempts: Number.POSITIVE_INFINITY,
      retry: backoff,
      on: { connected: (reconnected) => (reconnected ? handlers.current.onReconnected?.() : undefined) },
    });
    const dispose = client.subscribe<Data>(
      { query: stringifyDocument(document), variables: JSON.parse(key) as Variables },
      {
        next: (result) => {
          if (result.data) handlers.current.onData(result.data);
        },
        // An ended session is the regular queries' to report (they sign the user out); a stream just stops.
        error: () => {},
        complete: () => {},
      },
    );
    return () => {
      dispose();
      client.dispose();
    };
  }, [token, document, key]);
}
