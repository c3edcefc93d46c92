import swagger from '@fastify/swagger';
import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { DomainError } from '../../src/errors.ts';
import { markDeprecated, registerDeprecation } from '../../src/http/deprecation.ts';
import { finishDocument } from '../../src/http/openapi.ts';
import { registerProblemHandlers } from '../../src/http/problem.ts';

const since = new Date('2027-01-01T00:00:00Z');
const sunset = new Date('2027-07-01T00:00:00Z');

async function app() {
  const a = Fastify();
  registerProblemHandlers(a);
  registerDeprecation(a);
  await a.register(swagger, {
    openapi: { openapi: '3.0.3', info: { title: 't', version: '1' } },
    transform: markDeprecated,
    transformObject: (d) => ('openapiObject' in d ? finishDocument(d.openapiObject, { notRateLimited: () => true }) : d.swaggerObject),
  });
  a.get(
    '/old/:id',
    { config: { deprecation: { since, sunset, link: '/docs#/Things/getNewThing' } }, schema: { operationId: 'getOldThing' } },
    async (req) => {
      if ((req.params as { id: string }).id === 'missing') throw new DomainError('not_found', 'No such thing.');
      return { ok: true };
    },
  );
  a.get('/new', { schema: { operationId: 'getNewThing' } }, async () => ({ ok: true }));
  await a.ready();
  return a;
}

describe('a deprecated route', () => {
  it('announces its deprecation and sunset on every answer, errors included', async () => {
    const a = await app();
    for (const url of ['/old/1', '/old/missing']) {
      const res = await a.inject({ method: 'GET', url });
      expect(res.headers).toMatchObject({
        deprecation: '@1798761600',
        sunset: 'Thu, 01 Jul 2027 00:00:00 GMT',
        link: '</docs#/Things/getNewThing>; rel="deprecation"',
      });
    }
    const current = await a.inject({ method: 'GET', url: '/new' });
    expect(current.headers.deprecation).toBeUndefined();
    await a.close();
  });

  it('is marked deprecated in the description, with the headers it sends', async () => {
    const a = await app();
    const doc = a.swagger() as Record<string, any>;
    const op = doc.paths['/old/{id}'].get;
    expect(op.deprecated).toBe(true);
    expect(Object.keys(op.responses['200'].headers)).toEqual(expect.arrayContaining(['Deprecation', 'Sunset', 'Link']));
    expect(doc.paths['/new'].get.deprecated).toBeUndefined();
    await a.close();
  });
});
