// The layers of src/ and the one rule at each boundary (docs/architecture.md): a layer imports only the
// layers below it. `npm run lint:deps` checks it and CI fails on a violation.

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'Modules form no cycle.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'contract-is-a-leaf',
      severity: 'error',
      comment: 'The wire shapes and enums (src/contract) depend on nothing of the service but the generated Prisma enums.',
      from: { path: '^src/contract/' },
      to: { path: '^src/', pathNot: '^src/(contract|generated)/' },
    },
    {
      name: 'infrastructure-below-domain',
      severity: 'error',
      comment: 'Database, crypto, queue and auth helpers know no domain, transport or pipeline module.',
      from: { path: '^src/(db|crypto|queue|auth|runtime)/' },
      to: { path: '^src/(services|schema|rest|http|ingest|outbox|scoring|lifecycle|seed|cli)/' },
    },
    {
      name: 'outbox-layers',
      severity: 'error',
      comment: 'Inside src/outbox: endpoints (address policy) < events (registry, outbox, relay) < sender (delivery).',
      from: { path: '^src/outbox/(endpoints|events)/' },
      to: { path: '^src/outbox/sender/' },
    },
    {
      name: 'outbox-endpoints-is-a-leaf',
      severity: 'error',
      from: { path: '^src/outbox/endpoints/' },
      to: { path: '^src/outbox/events/' },
    },
    {
      name: 'outbox-below-domain',
      severity: 'error',
      comment: 'The outbound pipeline is called by the domain, never the other way round.',
      from: { path: '^src/outbox/' },
      to: { path: '^src/(services|schema|rest|http|ingest|scoring|lifecycle|seed|cli)/' },
    },
    {
      name: 'scoring-below-services',
      severity: 'error',
      comment: 'Scoring is formulas and the scoring passes; services and transports call it.',
      from: { path: '^src/scoring/' },
      to: { path: '^src/(services|schema|rest|http|ingest|lifecycle|seed|cli)/' },
    },
    {
      name: 'lifecycle-below-services',
      severity: 'error',
      comment:
        'Retention and workspace removal are passes the worker runs over every table; they may roll signals up through scoring, and services read their column map, never the other way round.',
      from: { path: '^src/lifecycle/' },
      to: { path: '^src/(services|schema|rest|http|ingest|outbox|seed|cli)/' },
    },
    {
      name: 'services-below-transports',
      severity: 'error',
      comment: 'A service owns its tables and transactions; the GraphQL schema, REST, HTTP and the inbound pipeline call it.',
      from: { path: '^src/services/' },
      to: { path: '^src/(schema|rest|http|ingest|seed|cli)/' },
    },
    {
      name: 'schema-not-transport',
      severity: 'error',
      comment: 'The GraphQL schema is the domain API; it knows neither the REST facade nor the HTTP plumbing.',
      from: { path: '^src/schema/' },
      to: { path: '^src/(rest|http|ingest|seed|cli)/' },
    },
    {
      name: 'rest-through-graphql',
      severity: 'error',
      comment: 'A REST route runs one GraphQL operation: it reaches no service, table or scoring module directly.',
      from: { path: '^src/rest/' },
      to: { path: '^src/(services|db|scoring|lifecycle|ingest|generated/prisma)/' },
    },
    {
      name: 'ingest-not-api',
      severity: 'error',
      comment: 'The inbound pipeline calls services; it does not go through the GraphQL schema or REST.',
      from: { path: '^src/ingest/' },
      to: { path: '^src/(schema|rest)/' },
    },
    {
      name: 'roots-are-not-imported',
      severity: 'error',
      comment: 'Only the composition roots (main, composition, the CLI) put the process together.',
      from: { path: '^src/', pathNot: ['^src/(main|composition|app|worker)\\.ts$', '^src/cli/'] },
      to: { path: '^src/(main|composition|app|worker)\\.ts$' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^src/generated/' },
    tsConfig: { fileName: 'tsconfig.json' },
    tsPreCompilationDeps: true,
    enhancedResolveOptions: { extensions: ['.ts', '.tsx', '.js'] },
  },
};
