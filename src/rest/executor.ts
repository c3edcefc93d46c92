import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import { execute, type GraphQLError, type GraphQLSchema } from 'graphql';
import { DomainError, isErrorCode, validationFailed } from '../errors.ts';
import type { Context } from '../schema/context.ts';

export type Run = <TData, TVars extends Record<string, unknown>>(
  document: TypedDocumentNode<TData, TVars>,
  variables: TVars,
  ctx: Context,
  fieldNames?: Record<string, string>,
) => Promise<TData>;

function rename(error: DomainError, fieldNames: Record<string, string>): DomainError {
  if (!error.fieldErrors) return error;
  const errors = error.fieldErrors.map((e) => ({ ...e, path: fieldNames[e.path] ?? e.path }));
  // Field errors only ever come from validationFailed, which also words the detail.
  return validationFailed(errors);
}

function toDomainError(error: GraphQLError): Error {
  const original = error.originalError;
  if (original instanceof DomainError) return original;
  const code = error.extensions?.code;
  if (isErrorCode(code)) return new DomainError(code, error.message);
  // An error with no path was raised before execution: the variables did not fit the operation.
  if (!error.path) return new DomainError('validation_failed', error.message);
  // Anything else is a defect of ours, not the caller's: let the error handler log it and answer 500.
  return original ?? error;
}

/**
 * Runs one named, codegen-typed operation in-process against the same schema and context as
 * /graphql; the first error's code decides the REST status. Documents are validated at build time
 * by codegen, so only execution happens per request.
 */
export function createExecutor(schema: GraphQLSchema): Run {
  return async (document, variables, ctx, fieldNames = {}) => {
    const result = await execute({ schema, document, variableValues: variables, contextValue: ctx });
    const first = result.errors?.[0];
    if (first) {
      const e = toDomainError(first);
      throw e instanceof DomainError ? rename(e, fieldNames) : e;
    }
    return result.data as Awaited<ReturnType<Run>> as never;
  };
}
