import { createContext, useCallback, useContext, useMemo, useRef, useState, type ReactNode } from 'react';
import { Client, Provider, cacheExchange, fetchExchange, mapExchange } from 'urql';
import { SESSION_ENDED, toProblem } from './errors.ts';
import { readSession, writeSession, type StoredSession } from './session.ts';

interface Auth {
  session: StoredSession | null;
  /** Why the user was signed out, shown on the sign-in screen. */
  notice: string | null;
  signIn(s: StoredSession): void;
  signOut(notice?: string): void;
}

const AuthContext = createContext<Auth | null>(null);

export function useAuth(): Auth {
  const a = useContext(AuthContext);
  if (!a) throw new Error('useAuth outside AuthProvider');
  return a;
}

/** Holds the session and an urql client that sends it; a rejected session signs the user out. */
export function AuthProvider({ children }: { children: ReactNode }) {
  const [session, setSession] = useState<StoredSession | null>(() => readSession());
  const [notice, setNotice] = useState<string | null>(null);
  const tokenRef = useRef(session?.token ?? null);

  const signIn = useCallback((s: StoredSession) => {
    writeSession(s);
    tokenRef.current = s.token;
    setNotice(null);
    setSession(s);
  }, []);
  const signOut = useCallback((why?: string) => {
    writeSession(null);
    tokenRef.current = null;
    setNotice(why ?? null);
    setSession(null);
  }, []);

  // A new client per session, so nothing one user loaded is ever served from cache to the next.
  const client = useMemo(
    () =>
      new Client({
        url: '/graphql',
        requestPolicy: 'cache-and-network',
        exchanges: [
          cacheExchange,
          mapExchange({
            onError(error) {
              if (tokenRef.current && SESSION_ENDED.has(toProblem(error).code)) {
                signOut('Your session has ended. Sign in again to continue.');
              }
            },
          }),
          fetchExchange,
        ],
        fetchOptions: () => (tokenRef.current ? { headers: { authorization: `Bearer ${tokenRef.current}` } } : {}),
      }),
    [session?.token, signOut],
  );

  const value = useMemo(() => ({ session, notice, signIn, signOut }), [session, notice, signIn, signOut]);
  return (
    <AuthContext.Provider value={value}>
      <Provider value={client}>{children}</Provider>
    </AuthContext.Provider>
  );
}
