import type { FastifyInstance } from 'fastify';
import type { RestDeps } from '../plugin.ts';
import { LoginDocument } from '../generated/operations.ts';
import * as s from '../schemas.ts';

export async function authRoutes(app: FastifyInstance, { run, context }: RestDeps) {
  app.post<{ Body: { email: string; password: string } }>(
    '/auth/login',
    {
      schema: {
        tags: ['Authentication'],
        summary: 'Sign in (browser session path); answers a JWT to send as Authorization: Bearer',
        security: [],
        body: {
          type: 'object',
          properties: { email: { type: 'string', maxLength: 320 }, password: { type: 'string', maxLength: 1024 } },
          required: ['email', 'password'],
          additionalProperties: false,
        },
        response: {
          200: { type: 'object', properties: { token: { type: 'string' }, expires_at: { type: 'string', format: 'date-time' } } },
          ...s.problemResponses(400, 401, 429),
        },
      },
    },
    async (req) => {
      const data = await run(LoginDocument, req.body, context(req));
      return { token: data.login.token, expires_at: data.login.expiresAt };
    },
  );
}
