import { z } from 'zod';
import { builder } from './builder.ts';
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
