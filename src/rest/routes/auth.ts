import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { loginInput } from '../../contract/requests.ts';
import { serialize } from '../../contract/serialize.ts';
import { type ContractTypeProvider, schemaOf, time } from '../../contract/wire.ts';
import { problemResponses } from '../../http/openapi.ts';
import { LoginDocument, SignOutDocument } from '../generated/operations.ts';
import type { RestDeps } from '../deps.ts';

const session = z.object({ token: z.string(), expires_at: time });

export async function authRoutes(fastify: FastifyInstance, { run, context }: RestDeps) {
  const app = fastify.withTypeProvider<ContractTypeProvider>();
  app.post(
    '/auth/login',
    {
      schema: {
        tags: ['Authentication'],
        operationId: 'login',
        summary: 'Sign in',
        description:
          'The browser session path: exchanges an email and password for a session JWT to send as `Authorization: Bearer <token>` until `expires_at`. Repeated failures from one address or for one account answer 429.',
        security: [],
        body: schemaOf(loginInput, { examples: [{ email: 'admin@acme.example', password: 'correct horse battery staple' }] }),
        response: { 200: schemaOf(session), ...problemResponses(400, 401, 429) },
      },
    },
    async (req) => serialize(session, (await run(LoginDocument, req.body, context(req))).login),
  );
  app.post(
    '/auth/logout',
    {
      schema: {
        tags: ['Authentication'],
        operationId: 'logout',
        summary: 'Sign out',
        description:
          'Signs the session sent as `Authorization: Bearer` out on the server: from then on its token is refused (`401 invalid_credentials`) by every process of the service, within `API_KEY_CACHE_MS` (2 s by default). Recorded in the audit log. Sessions only: an API key is refused with `403`.',
        response: { 204: { type: 'null' }, ...problemResponses(401, 403, 429) },
      },
    },
    async (req, reply) => {
      await run(SignOutDocument, {}, context(req));
      return reply.code(204).send();
    },
  );
}
