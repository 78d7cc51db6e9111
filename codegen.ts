/**
 * The dashboard's GraphQL types, generated from the committed schema (schema/schema.graphql, printed
 * from the Pothos schema by `npm run schema:print`) and the operations in web/src (graphql(`...`)
 * calls): `npm run codegen` writes web/src/gql/, which is committed; `npm run codegen:check` (a step of
 * `npm test`) fails when it is out of date.
 */
import type { CodegenConfig } from '@graphql-codegen/cli';

const config: CodegenConfig = {
  schema: 'schema/schema.graphql',
  documents: ['web/src/**/*.{ts,tsx}', '!web/src/gql/**'],
  ignoreNoDocuments: false,
  generates: {
    'web/src/gql/': {
      preset: 'client',
      presetConfig: { fragmentMasking: false, gqlTagName: 'graphql' },
      config: {
        // Documents are strings (TypedDocumentString): the dashboard POSTs them as they are.
        documentMode: 'string',
        useTypeImports: true,
        importExtension: '.js',
        strictScalars: true,
        scalars: { DateTime: 'string', SafeInt: 'number' },
        enumType: 'string-literal',
      },
    },
  },
};

export default config;
