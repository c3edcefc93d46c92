import type { CodegenConfig } from '@graphql-codegen/cli';

const scalars = { DateTime: 'string', Date: 'string', UUID: 'string', JSON: 'unknown' };

// Both consumers of the schema are typed from the committed SDL, so a schema change that breaks the
// REST facade or the dashboard fails the typecheck rather than a request.
const config: CodegenConfig = {
  schema: 'schema.graphql',
  generates: {
    // One named operation per REST route.
    'src/rest/generated/operations.ts': {
      documents: ['src/rest/operations/*.graphql'],
      plugins: ['typescript-operations', 'typed-document-node'],
      config: {
        scalars,
        enumsAsTypes: true,
        avoidOptionals: { field: true, inputValue: false, object: true },
        useTypeImports: true,
        skipTypename: true,
        dedupeFragments: true,
      },
    },
    // The dashboard writes its documents inline with graphql(); the preset types each one.
    'web/src/gql/': {
      documents: ['web/src/**/*.{ts,tsx}', '!web/src/gql/**'],
      preset: 'client',
      presetConfig: { fragmentMasking: false },
      // Enums as objects: the dashboard lists their values (filters, labels) from here, never from a copy.
      config: { scalars, enumType: 'const', useTypeImports: true, skipTypename: true },
    },
  },
};

export default config;
