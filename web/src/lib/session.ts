// The session token lives in sessionStorage: it survives a reload but not the tab, and is never a cookie,
// so the API needs no CSRF defence.
const KEY = 'chs.session';

export interface StoredSession {
  token: string;
  expiresAt: string;
}

export function readSession(): StoredSession | null {
  try {
    const raw = sessionStorage.getItem(KEY);
    if (!raw) return null;
    const s = JSON.parse(raw) as StoredSession;
    return Date.parse(s.expiresAt) > Date.now() ? s : null;
  } catch {
    return null;
  }
}

export function writeSession(s: StoredSession | null): void {
  if (s) sessionStorage.setItem(KEY, JSON.stringify(s));
  else sessionStorage.removeItem(KEY);
}
