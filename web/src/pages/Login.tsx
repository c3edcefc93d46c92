import { useState, type FormEvent } from 'react';
import { Navigate, useLocation } from 'react-router';
import { useMutation } from 'urql';
import { FormError } from '../components/States.tsx';
import { graphql } from '../gql/index.ts';
import { useAuth } from '../lib/auth.tsx';

const LoginDoc = graphql(`
  mutation Login($email: String!, $password: String!) {
    login(email: $email, password: $password) {
      token
      expiresAt
    }
  }
`);

export function Login() {
  const { session, notice, signIn } = useAuth();
  const location = useLocation();
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [{ fetching, error }, login] = useMutation(LoginDoc);
  const from = (location.state as { from?: string } | null)?.from ?? '/customers';
  if (session) return <Navigate to={from} replace />;

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    const r = await login({ email: email.trim(), password });
    if (r.data) signIn(r.data.login);
  };
  return (
    <main className="login">
      <form className="card login-card" onSubmit={submit} aria-labelledby="login-title">
        <h1 id="login-title">Sign in to Customer Health</h1>
        {notice ? (
          <p className="notice" role="status">
            {notice}
          </p>
        ) : null}
        <label className="field">
          <span>Email</span>
          <input type="email" autoComplete="username" required value={email} onChange={(e) => setEmail(e.target.value)} autoFocus />
        </label>
        <label className="field">
          <span>Password</span>
          <input type="password" autoComplete="current-password" required value={password} onChange={(e) => setPassword(e.target.value)} />
        </label>
        <FormError error={error} />
        <button type="submit" className="primary" disabled={fetching}>
          {fetching ? 'Signing in…' : 'Sign in'}
        </button>
        <p className="muted small">
          Running locally? <code>npm start</code> printed the demo workspace’s sign-in. Machines use API keys instead: see{' '}
          <a href="/docs">the API reference</a>.
        </p>
      </form>
    </main>
  );
}
