import type { CodegenConfig } from '@graphql-codegen/cli';

// Types every REST route's named operation from the committed SDL, so a schema change that breaks
// the facade fails the typecheck rather than a request.
const config: CodegenConfig = {
  schema: 'schema.graphql',
  documents: ['src/rest/operations/*.graphql'],
  generates: {
    'src/rest/generated/operations.ts': {
      plugins: ['typescript-operations', 'typed-document-node'],
      config: {
        scalars: { DateTime: 'string', UUID: 'string', JSON: 'unknown' },
        enumsAsTypes: true,
        avoidOptionals: { field: true, inputValue: false, object: true },
        useTypeImports: true,
        skipTypename: true,
        dedupeFragments: true,
      },
    },
  },
  hooks: {},
};

export default config;
