// Compares openapi.json with the last release's description (openapi.release.json) and lists the changes
// that break existing clients, per docs/api-versioning.md. CI fails on any that openapi-compat.json does
// not list as intended. Reads OpenAPI 3.0 (`nullable`) and 3.1 (type unions with "null") alike.
import { readFileSync } from 'node:fs';

type Json = Record<string, any>;
const METHODS = ['get', 'put', 'post', 'delete', 'patch'];

function resolver(doc: Json) {
  return (node: Json | undefined): Json | undefined => {
    let n = node;
    for (let i = 0; i < 20 && typeof n?.$ref === 'string'; i++) {
      n = n.$ref
        .slice(2)
        .split('/')
        .reduce((acc: Json | undefined, part: string) => acc?.[part.replace(/~1/g, '/').replace(/~0/g, '~')], doc);
    }
    return n;
  };
}

/** The JSON types a schema admits, null included, or undefined when it does not say. */
function typesOf(s: Json): Set<string> | undefined {
  if (s.type === undefined) return undefined;
  const types = new Set<string>([].concat(s.type));
  if (s.nullable === true) types.add('null');
  if (types.has('integer')) types.add('number');
  return types;
}

export function breakingChanges(before: Json, after: Json): string[] {
  const out: string[] = [];
  const rb = resolver(before);
  const ra = resolver(after);

  // direction 'request': the client sends it, the server must keep accepting what it accepted.
  // direction 'response': the server sends it, clients must keep receiving what they relied on.
  const compare = (b0: Json | undefined, a0: Json | undefined, where: string, direction: 'request' | 'response', depth = 0) => {
    const b = rb(b0);
    const a = ra(a0);
    if (!b || !a || depth > 12) return;
    const tb = typesOf(b);
    const ta = typesOf(a);
    if (tb && ta) {
      const [from, to] = direction === 'request' ? [tb, ta] : [ta, tb];
      // A request type must still admit every type it admitted; a response may not start sending new ones.
      for (const t of from)
        if (!to.has(t) && !(t === 'integer' && to.has('number')))
          out.push(`${where}: type ${[...tb].join('|')} became ${[...ta].join('|')}`);
    }
    if (Array.isArray(b.enum) && Array.isArray(a.enum) && direction === 'request') {
      for (const v of b.enum) if (!a.enum.includes(v)) out.push(`${where}: no longer accepts ${JSON.stringify(v)}`);
    }
    const reqB = new Set<string>(b.required ?? []);
    const reqA = new Set<string>(a.required ?? []);
    for (const [name, sub] of Object.entries<Json>(b.properties ?? {})) {
      const next = a.properties?.[name];
      if (!next) {
        if (direction === 'response' || a.additionalProperties === false) out.push(`${where}.${name}: removed`);
        continue;
      }
      if (direction === 'response' && reqB.has(name) && !reqA.has(name)) out.push(`${where}.${name}: no longer always present`);
      compare(sub, next, `${where}.${name}`, direction, depth + 1);
    }
    if (direction === 'request') for (const name of reqA) if (!reqB.has(name)) out.push(`${where}.${name}: newly required`);
    if (b.items && a.items) compare(b.items, a.items, `${where}[]`, direction, depth + 1);
  };

  for (const [path, itemB] of Object.entries<Json>(before.paths ?? {})) {
    const itemA = after.paths?.[path];
    for (const method of METHODS) {
      const opB = itemB[method];
      if (!opB) continue;
      const name = `${method.toUpperCase()} ${path}`;
      const opA = itemA?.[method];
      if (!opA) {
        out.push(`${name}: removed`);
        continue;
      }
      if (opB.operationId !== opA.operationId) out.push(`${name}: operationId ${opB.operationId} became ${opA.operationId}`);
      const params = (op: Json, r: typeof rb) =>
        new Map<string, Json>((op.parameters ?? []).map((p: Json) => r(p)).map((p: Json) => [`${p.in}:${p.name}`, p]));
      const pb = params(opB, rb);
      const pa = params(opA, ra);
      for (const [key, p] of pa) {
        const old = pb.get(key);
        if (!old && p.required) out.push(`${name}: new required parameter ${key}`);
        if (old && p.required && !old.required) out.push(`${name}: parameter ${key} newly required`);
        if (old) compare(old.schema, p.schema, `${name} parameter ${key}`, 'request');
      }
      for (const key of pb.keys()) if (!pa.has(key)) out.push(`${name}: parameter ${key} removed`);
      const bodyB = rb(opB.requestBody);
      const bodyA = ra(opA.requestBody);
      if (bodyA?.required && !bodyB?.required) out.push(`${name}: request body newly required`);
      for (const [media, m] of Object.entries<Json>(bodyB?.content ?? {})) {
        const next = bodyA?.content?.[media];
        if (!next) out.push(`${name}: request body ${media} no longer accepted`);
        else compare(m.schema, next.schema, `${name} request`, 'request');
      }
      for (const [status, r] of Object.entries<Json>(opB.responses ?? {})) {
        if (!status.startsWith('2')) continue;
        const next = ra(opA.responses?.[status]);
        if (!next) {
          out.push(`${name}: no longer answers ${status}`);
          continue;
        }
        for (const [media, m] of Object.entries<Json>(rb(r)?.content ?? {})) {
          const nm = next.content?.[media];
          if (!nm) out.push(`${name} ${status}: ${media} no longer sent`);
          else compare(m.schema, nm.schema, `${name} ${status}`, 'response');
        }
      }
    }
  }
  return [...new Set(out)];
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const read = (f: string) => JSON.parse(readFileSync(new URL(`../${f}`, import.meta.url), 'utf8')) as Json;
  const intended = new Set<string>(read('openapi-compat.json').intended ?? []);
  const changes = breakingChanges(read('openapi.release.json'), read('openapi.json'));
  const unintended = changes.filter((c) => !intended.has(c));
  for (const c of changes) console.log(`${intended.has(c) ? 'intended' : 'BREAKING'}: ${c}`);
  console.log(`openapi.json against openapi.release.json: ${changes.length} breaking changes, ${unintended.length} not marked intended`);
  if (unintended.length) {
    console.error('List an intended one in openapi-compat.json (see docs/api-versioning.md), or keep the API compatible.');
    process.exit(1);
  }
}
