import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';

/** The OpenAPI description (from the route schemas) at /openapi.json, and Swagger UI at /docs, served offline. */
export async function registerDocs(app: FastifyInstance, opts: { version: string }) {
  await app.register(swagger, {
    openapi: {
      openapi: '3.0.3',
      info: {
        title: 'Customer Health Service API',
        version: opts.version,
        description:
          'Health scores across five dimensions, churn predictions and alerts for your customers.\n\n' +
          'Authenticate with a tenant API key (`sk_...`, Growth and Scale plans) as `Authorization: Bearer <key>` ' +
          'or `X-API-Key: <key>`. Errors are RFC 9457 problem details with a stable `code`. ' +
          'Lists use cursor pagination: pass `next_cursor` back as `cursor`.',
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
      ],
    },
    refResolver: { buildLocalReference: (json, _base, _fragment, i) => String(json.$id ?? `def-${i}`) },
  });
  await app.register(swaggerUi, {
    routePrefix: '/docs',
    uiConfig: { persistAuthorization: true, displayRequestDuration: true, tryItOutEnabled: true },
    staticCSP: true,
  });
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
}
