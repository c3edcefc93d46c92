import { useGraphQlJit } from '@envelop/graphql-jit';
import {
  getOperationAST,
  getVariableValues,
  type DocumentNode,
  type ExecutionResult,
  GraphQLError,
  type GraphQLSchema,
  Kind,
  type OperationDefinitionNode,
  type Source,
} from 'graphql';
import { isAsyncIterable, type Plugin } from 'graphql-yoga';

/**
 * Runs of a document before it is compiled. Compiling (generating and evaluating a function) costs far
 * more than one run with graphql-js, and repays only over many runs: a document is compiled once it has
 * proved hot (the dashboard's and clients' fixed documents), while documents seen a few times, or a client
 * sending a new document with every request, never make the server compile anything.
 */
export const COMPILE_AFTER_RUNS = 10;

/**
 * The errors the interpreted executor answers for variables that do not fit the operation (a value of the
 * wrong type, a required one missing), or undefined when they fit. Such a request never runs: its answer
 * is these errors with their locations and no `data`, status 400 (GraphQL over HTTP). A compiled operation
 * coerces its variables on its own and answers otherwise (200, other messages), so variables are checked
 * here, with graphql-js, before a compiled operation runs: a document answers the same at every hotness.
 */
export function refusedVariables(
  schema: GraphQLSchema,
  operation: OperationDefinitionNode,
  variables: Record<string, unknown> | null | undefined,
): readonly GraphQLError[] | undefined {
  const { errors } = getVariableValues(schema, operation.variableDefinitions ?? [], variables ?? {}, { maxErrors: 50 });
  if (!errors) return undefined;
  // As the interpreted executor marks them (@graphql-tools/executor `execute`): the same errors, a 400.
  for (const e of errors) {
    Object.defineProperty(e, 'extensions', { value: { ...e.extensions, http: { ...(e.extensions?.http as object), status: 400 } } });
  }
  return errors;
}

type OnDone = NonNullable<Exclude<ReturnType<NonNullable<Plugin['onExecute']>>, Promise<unknown> | void>['onExecuteDone']>;

/** Where each line of a document's text begins, by the line breaks graphql-js counts lines with. */
function lineStarts(body: string): number[] {
  const starts = [0];
  for (const m of body.matchAll(/\r\n|[\n\r]/g)) starts.push(m.index + m[0].length);
  return starts;
}

/**
 * A compiled operation's result as the interpreted executor gives it: its errors are graphql-jit's own,
 * which carry their locations only as numbers, and Yoga, serialising an error again from its source and
 * positions, would drop them; and `errors` comes before `data`. So its answer does not show which
 * executor ran it.
 */
export function asInterpreted(result: ExecutionResult, document: DocumentNode): ExecutionResult {
  if (!result.errors?.length) return result;
  const source: Source | undefined = document.loc?.source;
  let starts: number[] | undefined;
  const errors = result.errors.map((e) => {
    if (!source || e.nodes || e.positions || !e.locations?.length) return e;
    starts ??= lineStarts(source.body);
    const positions = e.locations.map((l) => (starts![l.line - 1] ?? 0) + l.column - 1);
    return new GraphQLError(e.message, {
      source,
      positions,
      path: e.path,
      originalError: e.originalError,
      extensions: e.extensions,
    });
  });
  const { errors: _, data, ...rest } = result;
  return 'data' in result ? { errors, data, ...rest } : { errors, ...rest };
}

/**
 * graphql-jit for hot documents only; the rest run with graphql-js. Runs are counted per parsed document,
 * which Yoga's parser cache keeps (and bounds) per document text; the plugin keeps each compiled function
 * beside its document, so both go when the parser cache lets the document go.
 */
export function hotDocumentJit(opts: { compileAfterRuns?: number; onCompile?: () => void } = {}): Plugin {
  const threshold = opts.compileAfterRuns ?? COMPILE_AFTER_RUNS;
  const runs = new WeakMap<DocumentNode, number>();
  const isHot = (document: DocumentNode) => {
    // The plugin keeps one compiled operation per document: one with several operations would run
    // the first one compiled whatever operationName asks for, so such documents are never compiled.
    if (document.definitions.filter((d) => d.kind === Kind.OPERATION_DEFINITION).length !== 1) return false;
    const n = runs.get(document) ?? 0;
    if (n >= threshold) return true;
    runs.set(document, n + 1);
    if (n + 1 < threshold) return false;
    opts.onCompile?.();
    return true;
  };
  const jit = useGraphQlJit({ disablingCapturingStackErrors: true });
  return {
    onExecute(payload) {
      const { args } = payload;
      if (!isHot(args.document)) return;
      const operation = getOperationAST(args.document, args.operationName);
      if (!operation) return;
      const refused = refusedVariables(args.schema, operation, args.variableValues);
      if (refused) return payload.setResultAndStopExecution({ errors: refused });
      const done = jit.onExecute?.(payload) as Promise<void> | void;
      const onExecuteDone: OnDone = ({ result, setResult }) => {
        if (!isAsyncIterable(result)) setResult(asInterpreted(result, args.document));
      };
      return done ? done.then(() => ({ onExecuteDone })) : { onExecuteDone };
    },
  };
}
