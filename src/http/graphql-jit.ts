import { useGraphQlJit } from '@envelop/graphql-jit';
import { Kind, type DocumentNode } from 'graphql';

/**
 * Runs of a document before it is compiled. Compiling (generating and evaluating a function) costs far
 * more than one run with graphql-js, and repays only over many runs: a document is compiled once it has
 * proved hot (the dashboard's and clients' fixed documents), while documents seen a few times, or a client
 * sending a new document with every request, never make the server compile anything.
 */
export const COMPILE_AFTER_RUNS = 10;

/**
 * graphql-jit for hot documents only; the rest run with graphql-js. Runs are counted per parsed document,
 * which Yoga's parser cache keeps (and bounds) per document text; the plugin keeps each compiled function
 * beside its document, so both go when the parser cache lets the document go.
 */
export function hotDocumentJit(opts: { compileAfterRuns?: number; onCompile?: () => void } = {}) {
  const threshold = opts.compileAfterRuns ?? COMPILE_AFTER_RUNS;
  const runs = new WeakMap<DocumentNode, number>();
  return useGraphQlJit(
    { disablingCapturingStackErrors: true },
    {
      enableIf: ({ document }) => {
        // The plugin keeps one compiled operation per document: one with several operations would run
        // the first one compiled whatever operationName asks for, so such documents are never compiled.
        if (document.definitions.filter((d) => d.kind === Kind.OPERATION_DEFINITION).length !== 1) return false;
        const n = runs.get(document) ?? 0;
        if (n >= threshold) return true;
        runs.set(document, n + 1);
        if (n + 1 < threshold) return false;
        opts.onCompile?.();
        return true;
      },
    },
  );
}
