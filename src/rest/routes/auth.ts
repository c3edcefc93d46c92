import type { FastifyInstance } from 'fastify';
import type { RestDeps } from '../plugin.ts';
import { LoginDocument } from '../generated/operations.ts';
import { problemResponses } from '../../http/openapi.ts';

export async function authRoutes(app: FastifyInstance, { run, context }: RestDeps) {
  app.post<{ Body: { email: string; password: string } }>(
    '/auth/login',
    {
      schema: {
        tags: ['Authentication'],
        operationId: 'login',
        summary: 'Sign in',
        description:
          'The browser session path: exchanges an email and password for a session JWT to send as `Authorization: Bearer <token>` until `expires_at`. Repeated failures from one address or for one account answer 429.',
        security: [],
        body: {
          type: 'object',
          properties: { email: { type: 'string', maxLength: 320 }, password: { type: 'string', maxLength: 1024 } },
          required: ['email', 'password'],
          additionalProperties: false,
          examples: [{ email: 'admin@acme.example', password: 'correct horse battery staple' }],
        },
        response: {
          200: {
            type: 'object',
            properties: { token: { type: 'string' }, expires_at: { type: 'string', format: 'date-time' } },
            required: ['token', 'expires_at'],
          },
          ...problemResponses(400, 401, 429),
        },
      },
    },
    async (req) => {
      const data = await run(LoginDocument, req.body, context(req));
      return { token: data.login.token, expires_at: data.login.expiresAt };
    },
  );
}
