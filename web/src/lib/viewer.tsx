import { createContext, useContext, type ReactNode } from 'react';
import { useQuery } from 'urql';
import { ErrorState, Loading } from '../components/States.tsx';
import { graphql } from '../gql/index.ts';
import type { ViewerQuery } from '../gql/graphql.ts';

const ViewerDoc = graphql(`
  query Viewer {
    viewer {
      kind
      tenant {
        id
        name
        plan
        apiAccess
        deletion {
          dueAt
        }
        silentIntegrations {
          provider
          silentSince
        }
      }
      user {
        id
        email
        role
      }
    }
  }
`);

export interface ViewerInfo {
  tenant: ViewerQuery['viewer']['tenant'];
  user: NonNullable<ViewerQuery['viewer']['user']> | null;
  /** Customers, alerts: members and up. */
  canWrite: boolean;
  /** Webhooks, integrations, API keys, scoring settings: owners and admins. */
  canManage: boolean;
}

const ViewerContext = createContext<ViewerInfo | null>(null);

export function useViewer(): ViewerInfo {
  const v = useContext(ViewerContext);
  if (!v) throw new Error('useViewer outside ViewerProvider');
  return v;
}

export function ViewerProvider({ children }: { children: ReactNode }) {
  const [{ data, error, fetching }, refetch] = useQuery({ query: ViewerDoc });
  if (error && !data) return <ErrorState error={error} retry={() => refetch({ requestPolicy: 'network-only' })} />;
  if (fetching && !data) return <Loading label="Loading your workspace" />;
  if (!data) return null;
  const role = data.viewer.user?.role;
  const value: ViewerInfo = {
    tenant: data.viewer.tenant,
    user: data.viewer.user ?? null,
    canWrite: role !== undefined && role !== 'viewer',
    canManage: role === 'owner' || role === 'admin',
  };
  return <ViewerContext.Provider value={value}>{children}</ViewerContext.Provider>;
}
