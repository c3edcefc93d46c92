import { Link, NavLink, Outlet } from 'react-router';
import { useMutation } from 'urql';
import { graphql } from '../gql/index.ts';
import { useAuth } from '../lib/auth.tsx';
import { formatDateTime, humanize } from '../lib/format.ts';
import { providerLabel } from '../lib/providers.ts';
import { useViewer } from '../lib/viewer.tsx';

const NAV = [
  { to: '/customers', label: 'Customers' },
  { to: '/alerts', label: 'Alerts' },
];
const SETTINGS = [
  { to: '/settings/api-keys', label: 'API keys' },
  { to: '/settings/webhooks', label: 'Webhooks' },
  { to: '/settings/integrations', label: 'Integrations' },
  { to: '/settings/scoring', label: 'Scoring' },
  { to: '/settings/data', label: 'Data' },
  { to: '/settings/audit-log', label: 'Audit log' },
];

const SignOutDoc = graphql(`
  mutation SignOut {
    signOut
  }
`);

export function Layout() {
  const { signOut } = useAuth();
  const [{ fetching: signingOut }, signOutOnServer] = useMutation(SignOutDoc);
  // The server refuses the token from then on; the browser drops it whatever the answer, so an unreachable
  // server still leaves no one signed in here.
  const endSession = async () => {
    await signOutOnServer({});
    signOut();
  };
  const { tenant, user } = useViewer();
  return (
    <div className="shell">
      <a className="skip" href="#main">
        Skip to content
      </a>
      <header className="topbar">
        <span className="brand">Customer Health</span>
        <span className="tenant" title={`Workspace ${tenant.id}`}>
          {tenant.name} <span className="plan">{humanize(tenant.plan)} plan</span>
        </span>
        <span className="user">
          {user ? (
            <>
              <span className="user-email">{user.email}</span> <span className="muted">({user.role})</span>
            </>
          ) : null}
          <button type="button" className="ghost" disabled={signingOut} onClick={() => void endSession()}>
            Sign out
          </button>
        </span>
      </header>
      <nav className="sidebar" aria-label="Main">
        <ul>
          {NAV.map((n) => (
            <li key={n.to}>
              <NavLink to={n.to}>{n.label}</NavLink>
            </li>
          ))}
        </ul>
        <p className="nav-heading">Settings</p>
        <ul>
          {SETTINGS.map((n) => (
            <li key={n.to}>
              <NavLink to={n.to}>{n.label}</NavLink>
            </li>
          ))}
        </ul>
      </nav>
      <main id="main" className="content" tabIndex={-1}>
        {tenant.silentIntegrations.length > 0 ? (
          <p className="banner-warning" role="status" data-testid="silent-integrations">
            {tenant.silentIntegrations
              .map(
                (i) =>
                  `${providerLabel(i.provider)} has been silent, far longer than it usually is, since ${formatDateTime(i.silentSince)}`,
              )
              .join('; ')}
            . The dimensions it feeds are marked stale on customers&apos; health.{' '}
            <Link to="/settings/integrations">Open the integration settings</Link>
          </p>
        ) : null}
        {tenant.deletion ? (
          <p className="banner-danger" role="alert">
            This workspace will be deleted on {formatDateTime(tenant.deletion.dueAt)}; webhooks are held until then.{' '}
            <Link to="/settings/data">Cancel the deletion</Link>
          </p>
        ) : null}
        <Outlet />
      </main>
    </div>
  );
}
