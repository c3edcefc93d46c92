import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import { type DocumentNode, execute, getOperationAST, type ExecutionResult, type GraphQLError, type GraphQLSchema } from 'graphql';
import { compileQuery, isCompiledQuery } from 'graphql-jit';
import { DomainError, isErrorCode, validationFailed } from '../errors.ts';
import type { Context } from '../schema/context.ts';
import { countOperation } from '../runtime/metrics.ts';

export type Run = <TData, TVars extends Record<string, unknown>>(
  document: TypedDocumentNode<TData, TVars>,
  variables: TVars,
  ctx: Context,
  fieldNames?: Record<string, string>,
) => Promise<TData>;

// REST bodies are the operations' `input`: a GraphQL path `input.externalId` is the body's `external_id`.
function restPath(path: string, fieldNames: Record<string, string>): string {
  const [first, ...rest] = path.replace(/^input\./, '').split('.');
  return [fieldNames[first!] ?? first, ...rest].join('.');
}

function rename(error: DomainError, fieldNames: Record<string, string>): DomainError {
  if (!error.fieldErrors) return error;
  const errors = error.fieldErrors.map((e) => ({ ...e, path: restPath(e.path, fieldNames) }));
  // Field errors only ever come from validationFailed, which also words the detail.
  return validationFailed(errors);
}

/**
 * A variable that did not fit the operation, raised before execution. graphql-js words it as
 * `Variable "$events" got invalid value … at "events[0].properties"; <reason>`: the error names the
 * field where the value sat, and a scalar's own field errors (`json.a`) are placed under it.
 */
function variableError(error: GraphQLError): DomainError | undefined {
  const name = /^Variable "\$(\w+)"/.exec(error.message)?.[1];
  if (!name) return undefined;
  const at = /.* at "([\w.[\]]+)"; /s.exec(error.message)?.[1];
  const base = (at ?? name).replace(/\[(\d+)\]/g, '.$1');
  const original = error.originalError;
  if (original instanceof DomainError && original.fieldErrors) {
    const inner = (p: string) => p.split('.').slice(1).join('.');
    return validationFailed(
      original.fieldErrors.map((e) => ({ path: [base, inner(e.path)].filter(Boolean).join('.'), message: e.message })),
    );
  }
  const reason = error.message.split('; ').slice(1).join('; ');
  return validationFailed([{ path: base, message: reason || 'is not a valid value' }]);
}

function toDomainError(error: GraphQLError): Error {
  const original = error.originalError;
  // An error with no path was raised before execution: the variables did not fit the operation.
  if (!error.path) return variableError(error) ?? new DomainError('validation_failed', error.message);
  if (original instanceof DomainError) return original;
  const code = error.extensions?.code;
  if (isErrorCode(code)) return new DomainError(code, error.message);
  // Anything else is a defect of ours, not the caller's: let the error handler log it and answer 500.
  return original ?? error;
}

/**
 * Runs one named, codegen-typed operation in-process against the same schema and context as
 * /graphql; the first error's code decides the REST status. Documents are validated at build time
 * by codegen, so only execution happens per request.
 */
export function createExecutor(schema: GraphQLSchema): Run {
  // Each operation is compiled once into a function that runs it (graphql-jit), so a request skips
  // graphql-js's walk of the document; one that does not compile runs on graphql-js.
  type Compiled = (root: unknown, ctx: Context, variables: Record<string, unknown>) => Promise<ExecutionResult> | ExecutionResult;
  const compiled = new WeakMap<DocumentNode, Compiled>();
  const runnerOf = (document: DocumentNode): Compiled => {
    let run = compiled.get(document);
    if (!run) {
      const query = compileQuery(schema, document, undefined, { disablingCapturingStackErrors: true });
      run = isCompiledQuery(query)
        ? (root, ctx, variables) => query.query(root, ctx, variables)
        : (_root, ctx, variables) => execute({ schema, document, variableValues: variables, contextValue: ctx });
      compiled.set(document, run);
    }
    return run;
  };
  return async (document, variables, ctx, fieldNames = {}) => {
    const started = performance.now();
    let result = await runnerOf(document)(undefined, ctx, variables);
    // Variables that do not fit stop both engines before any resolver runs; graphql-js words the error
    // with the path of the value (see variableError), so it answers that case.
    if (result.errors?.length && !result.errors[0]!.path) {
      result = await execute({ schema, document, variableValues: variables, contextValue: ctx });
    }
    const operation = getOperationAST(document);
    countOperation(operation?.name?.value, operation?.operation, Boolean(result.errors?.length), (performance.now() - started) / 1000);
    const first = result.errors?.[0];
    if (first) {
      const e = toDomainError(first);
      throw e instanceof DomainError ? rename(e, fieldNames) : e;
    }
    return result.data as Awaited<ReturnType<Run>> as never;
  };
}
