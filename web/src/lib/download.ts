import type { Problem } from './errors.ts';

/**
 * Downloads a REST export with the session: the service streams it, the browser keeps it as a file.
 * Resolves when the file is handed to the browser; rejects with the service's problem otherwise.
 */
export async function downloadExport(path: string, token: string): Promise<void> {
  const res = await fetch(path, { headers: { authorization: `Bearer ${token}` } });
  if (!res.ok) {
    const body = (await res.json().catch(() => ({}))) as { code?: string; detail?: string; errors?: Problem['fieldErrors'] };
    throw Object.assign(new Error(body.detail ?? `The export failed (${res.status}).`), { code: body.code ?? 'error' });
  }
  const name = /filename="([^"]+)"/.exec(res.headers.get('content-disposition') ?? '')?.[1] ?? 'export';
  const url = URL.createObjectURL(await res.blob());
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}
