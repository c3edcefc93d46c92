import AjvCompiler from '@fastify/ajv-compiler';
import type { FastifyInstance, FastifyServerOptions } from 'fastify';
import { parseDateTime } from '../datetime.ts';
import { validationFailed } from '../errors.ts';

type Route = { httpPart?: string };
type Compile = (route: Route) => unknown;

/**
 * Request validation. Query strings, path parameters and headers arrive as text, so their values are
 * coerced to the schema's types (`limit=10` is the number 10). Bodies are JSON and already typed: a
 * body is taken as sent, so `{"churned": "false"}`, `0` or `null` is refused rather than read as a
 * boolean, and `{"name": 123}` is not quietly turned into "123".
 */
export function validationOptions(): Pick<FastifyServerOptions, 'ajv' | 'schemaController'> {
  const pool = AjvCompiler();
  return {
    ajv: {
      customOptions: { removeAdditional: false, coerceTypes: 'array', useDefaults: true, allErrors: true },
      // The stock date-time format takes years 0000 and beyond 9999; hold it to the range the API accepts.
      onCreate: (ajv) => {
        ajv.addFormat('date-time', {
          type: 'string',
          validate: (s: string) => /(?:Z|[+-]\d{2}:?\d{2})$/i.test(s) && parseDateTime(s) !== undefined,
        });
      },
    },
    schemaController: {
      compilersFactory: {
        buildValidator: ((externalSchemas: Record<string, unknown>, options: NonNullable<FastifyServerOptions['ajv']>) => {
          const coercing = pool(externalSchemas as never, options) as unknown as Compile;
          const typed = pool(
            externalSchemas as never,
            {
              ...options,
              customOptions: { ...options.customOptions, coerceTypes: false },
            } as never,
          ) as unknown as Compile;
          return (route: Route) => (route.httpPart === 'body' ? typed : coercing)(route);
        }) as never,
      },
    },
  };
}

/**
 * A NUL byte in the URL (%00) is refused before any route sees it: no path or query value of this API
 * can hold one, and PostgreSQL text cannot store it.
 */
export function registerUrlCheck(app: FastifyInstance) {
  app.addHook('onRequest', (req, _reply, done) => {
    if (req.url.includes('%00')) return done(validationFailed([{ path: 'url', message: 'must not contain the NUL character (%00)' }]));
    done();
  });
}
