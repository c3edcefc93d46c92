import { z } from 'zod';
import { forbidden } from '../errors.ts';
import { builder } from './builder.ts';
import { actorOf, requireCapability } from './guards.ts';
import { parseInput } from './validate.ts';

const Session = builder.objectRef<{ token: string; expiresAt: Date }>('Session').implement({
  description: 'A browser session: send the token as `Authorization: Bearer <token>`.',
  fields: (t) => ({
    token: t.exposeString('token'),
    expiresAt: t.expose('expiresAt', { type: 'DateTime' }),
  }),
});

const loginInput = z.object({
  email: z.string().trim().toLowerCase().email().max(320),
  password: z.string().min(1).max(1024),
});

builder.mutationField('login', (t) =>
  t.field({
    type: Session,
    description: 'Signs in with the built-in user store; works on every plan.',
    args: { email: t.arg.string(), password: t.arg.string() },
    resolve: async (_root, args, ctx) => {
      const { email, password } = parseInput(loginInput, args);
      await ctx.loginGuard.attempt(ctx.clientAddress, email);
      return ctx.services.accounts.login(email, password, { clientAddress: ctx.clientAddress, requestId: ctx.requestId });
    },
  }),
);

builder.mutationField('signOut', (t) =>
  t.boolean({
    description:
      'Signs the session making the request out on the server: its token is refused from then on, in every process of the service (docs/operations.md). Sessions only; an API key is revoked instead.',
    resolve: async (_root, _args, ctx) => {
      const p = requireCapability(ctx, 'read');
      if (p.kind !== 'session') throw forbidden('Only a signed-in session signs out; an API key is revoked instead.');
      await ctx.services.accounts.signOut({ ...actorOf(ctx, p), id: p.userId }, { id: p.sessionId, expiresAt: p.sessionExpiresAt });
      return true;
    },
  }),
);
