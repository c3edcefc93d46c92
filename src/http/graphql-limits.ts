import { EnvelopArmorPlugin } from '@escape.tech/graphql-armor';
import { GraphQLError } from 'graphql';
import type { Plugin } from 'graphql-yoga';

/**
 * Bounds on what one GraphQL document may ask for, checked before anything runs. The dashboard's
 * largest document (a customer's page) stays well inside them; the tests say by how much.
 */
export const GRAPHQL_LIMITS = {
  maxDepth: 8,
  maxAliases: 10,
  maxTokens: 2000,
  maxDirectives: 20,
  maxCost: 5000,
} as const;

// Yoga's own codes for a document it could not parse or validate, and none at all for the limits
// (they fail at parse time): all are bad input, so they get the API's validation code.
const DOCUMENT_CODES = new Set([undefined, 'GRAPHQL_PARSE_FAILED', 'GRAPHQL_VALIDATION_FAILED']);

function withCode(e: Error): GraphQLError {
  const g = e instanceof GraphQLError ? e : undefined;
  if (g && !DOCUMENT_CODES.has(g.extensions?.code as string | undefined)) return g;
  return new GraphQLError(e.message, {
    nodes: g?.nodes,
    source: g?.source,
    positions: g?.positions,
    extensions: { ...g?.extensions, code: 'validation_failed', status: 400 },
  });
}

/** Every rejected document (parse, validation or limit errors: a result with no data at all) carries the API's validation code. */
const codeDocumentErrors: Plugin = {
  onResultProcess({ result, setResult }) {
    // Only documents refused before execution: those results have errors and no data at all.
    if (Array.isArray(result) || !('errors' in result) || !result.errors?.length || 'data' in result) return;
    setResult({ ...result, errors: result.errors.map(withCode) });
  },
};

export function graphqlLimits(): Plugin[] {
  return [
    EnvelopArmorPlugin({
      maxDepth: { n: GRAPHQL_LIMITS.maxDepth },
      maxAliases: { n: GRAPHQL_LIMITS.maxAliases },
      maxTokens: { n: GRAPHQL_LIMITS.maxTokens },
      maxDirectives: { n: GRAPHQL_LIMITS.maxDirectives },
      costLimit: { maxCost: GRAPHQL_LIMITS.maxCost },
      // "Did you mean …?" would spell out the schema to someone probing it.
      blockFieldSuggestion: { enabled: true },
    }) as Plugin,
    codeDocumentErrors,
  ];
}
