import { EnvelopArmorPlugin } from '@escape.tech/graphql-armor';
import { getOperationAST, GraphQLError } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { checkVariableCost, costLimitRule } from './graphql-cost.ts';

/**
 * Bounds on what one GraphQL document may ask for, checked before anything runs. The dashboard's
 * largest document (a customer's page) stays well inside them; the tests say by how much.
 */
export const GRAPHQL_LIMITS = {
  maxDepth: 8,
  maxAliases: 10,
  maxTokens: 2000,
  maxDirectives: 20,
  /** Enough for a page of 25 customers with 30 days of history each (graphql-cost.ts has the weights). */
  maxCost: 20_000,
  /** Characters of the document text: the token limit does not count comments, spaces or a string's length, and every document that parses is kept in the parse caches. */
  maxDocumentChars: 32_768,
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

/** A result refused before execution (errors and no data at all), with every error carrying the API's validation code. */
export function codeRejectedDocument<R extends { errors?: readonly Error[] }>(result: R): R {
  if (!result.errors?.length || 'data' in result) return result;
  return { ...result, errors: result.errors.map(withCode) };
}

/** Every rejected document (parse, validation or limit errors: a result with no data at all) carries the API's validation code. */
const codeDocumentErrors: Plugin = {
  onResultProcess({ result, setResult }) {
    if (Array.isArray(result) || !('errors' in result)) return;
    const coded = codeRejectedDocument(result as { errors?: readonly Error[] });
    if (coded !== result) setResult(coded as typeof result);
  },
};

/** A document longer than the limit is refused before it is parsed, so it is never kept in a cache. */
const boundDocumentLength: Plugin = {
  onParams({ params }) {
    if (typeof params.query === 'string' && params.query.length > GRAPHQL_LIMITS.maxDocumentChars) {
      throw new GraphQLError(`The document is longer than ${GRAPHQL_LIMITS.maxDocumentChars} characters.`, {
        extensions: { code: 'validation_failed', status: 400, http: { status: 400 } },
      });
    }
  },
};

/**
 * The cost limit: checked when a document is validated, with the page sizes it writes, and again when it
 * runs, with the page sizes its variables give (graphql-cost.ts).
 */
const costLimit: Plugin = {
  onValidate({ addValidationRule }) {
    addValidationRule(costLimitRule(GRAPHQL_LIMITS.maxCost));
  },
  onExecute({ args, setResultAndStopExecution }) {
    const operation = getOperationAST(args.document, args.operationName);
    const error = checkVariableCost(args.schema, args.document, operation, args.variableValues, GRAPHQL_LIMITS.maxCost);
    if (error) setResultAndStopExecution({ errors: [error] });
  },
};

export function graphqlLimits(): Plugin[] {
  return [
    boundDocumentLength,
    costLimit,
    EnvelopArmorPlugin({
      maxDepth: { n: GRAPHQL_LIMITS.maxDepth },
      maxAliases: { n: GRAPHQL_LIMITS.maxAliases },
      maxTokens: { n: GRAPHQL_LIMITS.maxTokens },
      maxDirectives: { n: GRAPHQL_LIMITS.maxDirectives },
      // Our own cost rule instead (costLimit above): this one counts a page size given as a variable, or left out, as one row.
      costLimit: { enabled: false },
      // "Did you mean …?" would spell out the schema to someone probing it.
      blockFieldSuggestion: { enabled: true },
    }) as Plugin,
    codeDocumentErrors,
  ];
}
