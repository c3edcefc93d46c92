import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { DomainError } from '../errors.ts';
import { sendProblem } from './problem.ts';

// The bundle loads nothing from elsewhere, so the policy can allow only this origin. React sets inline
// styles through the CSSOM, which style-src does not govern.
const CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

/** Where `vite build` puts the dashboard: dist/web under the project root, from src/ or dist/src/. */
export function defaultDashboardDir(from = import.meta.dirname): string {
  let dir = from;
  while (!existsSync(join(dir, 'package.json'))) {
    const up = dirname(dir);
    if (up === dir) return resolve('dist', 'web');
    dir = up;
  }
  return join(dir, 'dist', 'web');
}

function protect(reply: FastifyReply) {
  reply.header('content-security-policy', CSP);
  reply.header('x-content-type-options', 'nosniff');
  reply.header('referrer-policy', 'no-referrer');
  reply.header('x-frame-options', 'DENY');
}

/**
 * Serves the dashboard under /app: hashed assets cached for a year, every other path the app's
 * index.html so client-side routes survive a reload. Files are looked up per request, so a rebuild
 * needs no restart. Without a build it answers 503 saying how to build.
 */
export async function registerDashboard(app: FastifyInstance, opts: { dir: string }) {
  const built = existsSync(join(opts.dir, 'index.html'));
  app.get('/app', { schema: { hide: true } }, (_req, reply) => reply.redirect('/app/', 302));
  if (!built) {
    app.log.warn({ dir: opts.dir }, 'dashboard bundle not found; run `npm run build:web`');
    app.get('/app/*', { schema: { hide: true } }, async () => {
      throw new DomainError(
        'service_unavailable',
        'The dashboard has not been built. Run `npm run build:web` (npm start does it for you).',
      );
    });
    return;
  }
  await app.register(
    async (scope) => {
      scope.addHook('onRequest', async (_req, reply) => protect(reply));
      await scope.register(fastifyStatic, {
        root: opts.dir,
        prefix: '/',
        index: ['index.html'],
        dotfiles: 'ignore',
        schemaHide: true,
        // Assets carry a content hash in their name; index.html must be revalidated to pick up a new build.
        setHeaders: (res, path) => {
          res.header('cache-control', /[\\/]assets[\\/]/.test(path) ? 'public, max-age=31536000, immutable' : 'no-cache');
        },
      });
      scope.setNotFoundHandler((req, reply) => {
        // A missing asset is a 404, not the app: a stale tab must not parse HTML as JavaScript.
        const path = req.url.split('?')[0];
        if (req.method !== 'GET' && req.method !== 'HEAD') return sendProblem(reply, 'not_found', `No route ${req.method} ${path}.`);
        if (path.startsWith('/app/assets/') || /\.[a-z0-9]+$/i.test(path)) return sendProblem(reply, 'not_found', `No file ${path}.`);
        return reply.header('cache-control', 'no-cache').type('text/html; charset=utf-8').sendFile('index.html');
      });
    },
    { prefix: '/app' },
  );
}
