/**
 * The one rule for request bodies: JSON is `application/json` or any `application/*+json`, with any
 * parameters, in any case, and in UTF-8 (JSON's only interchange encoding, RFC 8259 §8.1). Returns why
 * a Content-Type is refused, naming what was received, or null when the body may be read as JSON.
 */
export function jsonContentTypeRefusal(header: string | string[] | undefined): string | null {
  const value = Array.isArray(header) ? header[0] : header;
  if (value === undefined || value.trim() === '') {
    return 'No Content-Type was sent: send the body as application/json.';
  }
  const [mediaType = '', ...params] = value.split(';');
  const media = mediaType.trim().toLowerCase();
  if (!/^application\/(?:[a-z0-9!#$&^_.-]+\+)?json$/.test(media)) {
    return `Content-Type ${quote(value)} is not JSON: send the body as application/json (or an application/*+json type).`;
  }
  for (const param of params) {
    const eq = param.indexOf('=');
    if (eq === -1 || param.slice(0, eq).trim().toLowerCase() !== 'charset') continue;
    const charset = param
      .slice(eq + 1)
      .trim()
      .replace(/^"(.*)"$/, '$1')
      .toLowerCase();
    if (charset !== 'utf-8' && charset !== 'utf8') {
      return `charset=${quote(charset)} is not supported: send JSON encoded as UTF-8 (charset=utf-8, or no charset).`;
    }
  }
  return null;
}

// Header text is echoed back in the problem detail: keep it short and printable.
const quote = (s: string) => JSON.stringify(s.length > 100 ? `${s.slice(0, 100)}…` : s);
