import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import { markDeprecated } from './deprecation.ts';
import { type DocumentOptions, finishDocument } from './openapi.ts';

/**
 * Swagger UI sends every scheme the user authorised, and two different credentials are refused as
 * conflicting (400). This keeps one: the Bearer header wins, X-API-Key goes only when it is alone.
 * Swagger UI gets it as source text, so it may use nothing from outside its own body.
 */
export function oneCredential<R extends { headers?: Record<string, string> }>(request: R): R {
  const h = request.headers ?? {};
  const names = Object.keys(h);
  const hasBearer = names.some((n) => n.toLowerCase() === 'authorization');
  for (const n of names) if (hasBearer && n.toLowerCase() === 'x-api-key') delete h[n];
  return request;
}

/**
 * The reference's own policy: everything from this origin, nothing from elsewhere. Swagger UI sets style
 * attributes from script (the highlighted response bodies among them), so inline styles are allowed
 * here; scripts stay same-origin only.
 */
const DOCS_CSP =
  "default-src 'self'; base-uri 'self'; connect-src 'self'; font-src 'self' data:; form-action 'self'; frame-ancestors 'none'; " +
  "img-src 'self' data:; object-src 'none'; script-src 'self'; script-src-attr 'none'; style-src 'self' 'unsafe-inline'";

/** The OpenAPI description (from the route schemas) at /openapi.json, and Swagger UI at /docs, served offline. */
export async function registerDocs(app: FastifyInstance, opts: { version: string } & DocumentOptions) {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Customer Health Service API',
        version: opts.version,
        description:
          'Health scores across five dimensions, churn predictions and alerts for your customers.\n\n' +
          'Authenticate with a tenant API key (`sk_...`, Growth and Scale plans) as `Authorization: Bearer <key>` ' +
          'or `X-API-Key: <key>`. Errors are RFC 9457 problem details with a stable `code`. ' +
          'Lists use cursor pagination: pass `next_cursor` back as `cursor`. ' +
          'Within `/api/v1` changes are additive only; see docs/api-versioning.md for what may change and how a retired operation is announced ' +
          '(`Deprecation` and `Sunset` headers).',
        license: { name: 'MIT', identifier: 'MIT' },
      },
      servers: [{ url: '/' }],
      components: {
        securitySchemes: {
          bearerAuth: { type: 'http', scheme: 'bearer', description: 'An API key (sk_...) or a session JWT.' },
          apiKeyAuth: { type: 'apiKey', in: 'header', name: 'X-API-Key', description: 'An API key (sk_...).' },
        },
      },
      security: [{ bearerAuth: [] }, { apiKeyAuth: [] }],
      tags: [
        { name: 'Customers', description: 'Customers, their health and churn prediction' },
        { name: 'Alerts', description: 'Alerts raised by the scoring engine' },
        { name: 'Events', description: 'Product usage events' },
        { name: 'Webhook endpoints', description: 'Signed outbound webhooks: endpoints, Test, deliveries' },
        { name: 'Inbound webhooks', description: 'Provider webhooks, verified by signature' },
        { name: 'Authentication', description: 'Browser sessions' },
        { name: 'Audit log', description: 'Who changed what in the workspace, and from where' },
        { name: 'Workspace', description: 'Retention, exports and the workspace’s deletion (docs/data-lifecycle.md)' },
      ],
    },
    refResolver: { buildLocalReference: (json, _base, _fragment, i) => String(json.$id ?? `def-${i}`) },
    transform: markDeprecated,
    // A copy is rewritten: the schemas the routes validate and serialise with stay as they are.
    transformObject: (document) =>
      'openapiObject' in document ? finishDocument(structuredClone(document.openapiObject), opts) : document.swaggerObject,
  });
  await app.register(swaggerUi, {
    routePrefix: '/docs',
    uiConfig: {
      persistAuthorization: true,
      displayRequestDuration: true,
      tryItOutEnabled: true,
      requestInterceptor: oneCredential,
    },
    staticCSP: DOCS_CSP,
  });
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
}
