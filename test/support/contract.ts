// The contract check: every answer a test receives through `app.inject` is compared with the app's own
// OpenAPI description (status declared, declared headers well formed and present when required, body of
// a declared media type matching its schema). Mismatches are collected here and the file fails in
// contract-setup.ts's afterAll, so no test file's traffic escapes the check. Paths the description
// does not name (GraphQL, probes, the dashboard, made-up URLs) are not checked.
import { Ajv2020 } from 'ajv/dist/2020.js';
import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';

type Json = Record<string, any>;
type Validate = ((data: unknown) => boolean) & { errors?: { instancePath: string; message?: string }[] | null };

export interface Mismatch {
  request: string;
  status: number;
  problem: string;
}

const state = { mismatches: [] as Mismatch[], checked: 0, answered: [] as string[] };

/**
 * The mismatches, the number of answers checked and which operation answered with which status
 * (`operationId status`, one entry per answer) since the last call; all start again from empty.
 */
export function takeContractResults() {
  const out = { mismatches: state.mismatches, checked: state.checked, answered: state.answered };
  state.mismatches = [];
  state.checked = 0;
  state.answered = [];
  return out;
}

interface Operation {
  path: string;
  regex: RegExp;
  literal: number;
  item: Json;
}

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

export function compile(doc: Json) {
  const AjvClass = String(doc.openapi).startsWith('3.1') ? Ajv2020 : Ajv;
  const ajv = new AjvClass({ strict: false, allErrors: true, logger: false, validateSchema: false });
  addFormats.default(ajv);
  ajv.addSchema(doc, 'openapi');
  const validators = new Map<string, Validate>();
  const validator = (pointer: string) => {
    let v = validators.get(pointer);
    if (!v) {
      v = ajv.compile({ $ref: `openapi#${pointer}` }) as Validate;
      validators.set(pointer, v);
    }
    return v;
  };
  const paths: Operation[] = Object.entries<Json>(doc.paths ?? {}).map(([path, item]) => ({
    path,
    item,
    regex: new RegExp(
      `^${path
        .split(/\{[^}]+\}/)
        .map(escape)
        .join('[^/]+')}$`,
    ),
    literal: path.replace(/\{[^}]+\}/g, '').length,
  }));
  // The most literal template wins: /webhooks/in/meta_ads/{tenant_id} before /webhooks/in/{provider}/{tenant_id}.
  paths.sort((a, b) => b.literal - a.literal);
  return { paths, validator };
}

const pointerPart = (s: string) => s.replace(/~/g, '~0').replace(/\//g, '~1');

/** Follows a local $ref, returning the target and its JSON pointer. */
function deref(doc: Json, node: Json, pointer: string): { node: Json; pointer: string } {
  let n = node;
  let p = pointer;
  while (typeof n?.$ref === 'string' && n.$ref.startsWith('#/')) {
    p = n.$ref.slice(1);
    n = p
      .split('/')
      .slice(1)
      .reduce<Json>((acc, part) => acc?.[part.replace(/~1/g, '/').replace(/~0/g, '~')], doc);
  }
  return { node: n, pointer: p };
}

function headerValueOk(schema: Json | undefined, value: string): boolean {
  if (!schema) return true;
  const types = ([] as string[]).concat(schema.type ?? []);
  if (types.includes('integer')) return /^\d+$/.test(value);
  return true;
}

export function checkAnswer(doc: Json, compiled: ReturnType<typeof compile>, method: string, url: string, res: LightMyRequestResponse) {
  const path = url.split('?')[0]!;
  const op = compiled.paths.find((o) => o.regex.test(path) && o.item[method.toLowerCase()]);
  if (!op) return;
  state.checked++;
  state.answered.push(`${op.item[method.toLowerCase()].operationId ?? `${method.toUpperCase()} ${op.path}`} ${res.statusCode}`);
  const request = `${method.toUpperCase()} ${path}`;
  const fail = (problem: string) => state.mismatches.push({ request, status: res.statusCode, problem });
  const opPointer = `/paths/${pointerPart(op.path)}/${method.toLowerCase()}`;
  const responses = op.item[method.toLowerCase()].responses ?? {};
  const status = String(res.statusCode);
  const key = status in responses ? status : `${status[0]}XX` in responses ? `${status[0]}XX` : 'default' in responses ? 'default' : null;
  if (!key) return fail(`status ${status} is not declared (declared: ${Object.keys(responses).join(', ')})`);
  const { node: response, pointer } = deref(doc, responses[key], `${opPointer}/responses/${key}`);

  for (const [name, h] of Object.entries<Json>(response.headers ?? {})) {
    const { node: declared } = deref(doc, h, '');
    const value = res.headers[name.toLowerCase()];
    if (value === undefined) {
      if (declared.required) fail(`required header ${name} is missing`);
      continue;
    }
    const text = Array.isArray(value) ? value.join(', ') : String(value);
    if (!headerValueOk(declared.schema, text)) fail(`header ${name}: ${JSON.stringify(text)} does not match its schema`);
  }

  const body = res.payload;
  const content: Json | undefined = response.content;
  if (!body.length) {
    // A text body its schema lets be empty (an export of no rows) may be.
    const mediaType = String(res.headers['content-type'] ?? '')
      .split(';')[0]!
      .trim();
    const declaredText = content?.[mediaType]?.schema;
    const emptyAllowed = declaredText?.type === 'string' && !declaredText.minLength;
    if (content && Object.keys(content).length && res.statusCode !== 204 && method.toUpperCase() !== 'HEAD' && !emptyAllowed) {
      fail('the body is empty but the description declares content');
    }
    return;
  }
  if (!content) return fail('the body is not empty but the description declares no content');
  const mediaType = String(res.headers['content-type'] ?? '')
    .split(';')[0]!
    .trim()
    .toLowerCase();
  if (!(mediaType in content)) return fail(`content type ${mediaType} is not declared (declared: ${Object.keys(content).join(', ')})`);
  if (!content[mediaType].schema) return;
  let data: unknown = body;
  if (/[/+]json$/.test(mediaType)) {
    try {
      data = JSON.parse(body);
    } catch {
      return fail('the body is not JSON');
    }
  }
  const validate = compiled.validator(`${pointer}/content/${pointerPart(mediaType)}/schema`);
  if (!validate(data)) {
    const errors = (validate.errors ?? []).slice(0, 5).map((e) => `${e.instancePath || '/'} ${e.message}`);
    fail(`body does not match the schema: ${errors.join('; ')}`);
  }
}

/**
 * Wraps the app's inject so each answer is checked against the app's description. Call it after
 * `ready()`; the description is read once, when first needed.
 */
export function checkContract(app: FastifyInstance) {
  const inject = app.inject.bind(app) as (opts: InjectOptions | string) => Promise<LightMyRequestResponse>;
  let compiled: { doc: Json; c: ReturnType<typeof compile> } | undefined;
  const described = () => {
    if (!compiled) {
      const doc = structuredClone(app.swagger()) as Json;
      compiled = { doc, c: compile(doc) };
    }
    return compiled;
  };
  const wrapped = async (opts: InjectOptions | string) => {
    const res = await inject(opts);
    const o: InjectOptions = typeof opts === 'string' ? { url: opts } : opts;
    const url = typeof o.url === 'string' ? o.url : String(o.path ?? '/');
    const { doc, c } = described();
    checkAnswer(doc, c, String(o.method ?? 'GET'), url, res);
    return res;
  };
  Object.assign(app, {
    inject: (opts?: InjectOptions | string, cb?: unknown) =>
      // Only the promise form is checked; the chained and callback forms pass through unchanged.
      opts === undefined || cb !== undefined ? (inject as any)(opts, cb) : wrapped(opts),
  });
}
