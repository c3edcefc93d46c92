import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { Navigate, Outlet, createBrowserRouter, useLocation } from 'react-router';
import { RouterProvider } from 'react-router/dom';
import { Layout } from './components/Layout.tsx';
import { AuthProvider, useAuth } from './lib/auth.tsx';
import { ViewerProvider } from './lib/viewer.tsx';
import { Alerts } from './pages/Alerts.tsx';
import { Customers } from './pages/Customers.tsx';
import { Login } from './pages/Login.tsx';
import { NotFound } from './pages/NotFound.tsx';
import { ApiKeys } from './pages/settings/ApiKeys.tsx';
import { AuditLog } from './pages/settings/AuditLog.tsx';
import { DataSettings } from './pages/settings/Data.tsx';
import { Integrations } from './pages/settings/Integrations.tsx';
import { Scoring } from './pages/settings/Scoring.tsx';
import { WebhookEndpointPage } from './pages/settings/WebhookEndpoint.tsx';
import { Webhooks } from './pages/settings/Webhooks.tsx';
import './styles.css';

/** Every screen but sign-in needs a session; the viewer (tenant, role) is loaded once for all of them. */
function RequireSession() {
  const { session } = useAuth();
  const location = useLocation();
  if (!session) return <Navigate to="/login" replace state={{ from: location.pathname + location.search }} />;
  return (
    <ViewerProvider>
      <Outlet />
    </ViewerProvider>
  );
}

const router = createBrowserRouter(
  [
    { path: '/login', element: <Login /> },
    {
      element: <RequireSession />,
      children: [
        {
          element: <Layout />,
          children: [
            { index: true, element: <Navigate to="/customers" replace /> },
            { path: 'customers', element: <Customers /> },
            // The charts library is the bulk of the bundle; only the customer page loads it.
            { path: 'customers/:id', lazy: () => import('./pages/CustomerPage.tsx').then((m) => ({ Component: m.CustomerPage })) },
            { path: 'alerts', element: <Alerts /> },
            { path: 'settings', element: <Navigate to="/settings/api-keys" replace /> },
            { path: 'settings/api-keys', element: <ApiKeys /> },
            { path: 'settings/webhooks', element: <Webhooks /> },
            { path: 'settings/webhooks/:id', element: <WebhookEndpointPage /> },
            { path: 'settings/integrations', element: <Integrations /> },
            { path: 'settings/scoring', element: <Scoring /> },
            { path: 'settings/data', element: <DataSettings /> },
            { path: 'settings/audit-log', element: <AuditLog /> },
            { path: '*', element: <NotFound /> },
          ],
        },
      ],
    },
  ],
  { basename: '/app' },
);

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <AuthProvider>
      <RouterProvider router={router} />
    </AuthProvider>
  </StrictMode>,
);
