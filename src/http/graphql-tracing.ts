import { getOperationAST, type OperationDefinitionNode } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { Context } from '../schema/context.ts';
import { inSpan, isTracing } from '../runtime/trace-context.ts';

/**
 * Runs one GraphQL operation in a span named as OpenTelemetry names them (`query CustomerList`), with
 * the operation's name and type and the tenant that asked; the database statements it makes are its
 * children. Yoga's executor and graphql-jit do not go through graphql-js's `execute`, which the GraphQL
 * instrumentation wraps, so the operation's span is ours.
 */
export function inOperationSpan<T>(
  operation: OperationDefinitionNode | null | undefined,
  tenantId: string | undefined,
  fn: () => Promise<T>,
): Promise<T> {
  const type = operation?.operation ?? 'query';
  const name = operation?.name?.value;
  return inSpan(
    name ? `${type} ${name}` : type,
    {
      attributes: {
        'graphql.operation.type': type,
        ...(name ? { 'graphql.operation.name': name } : {}),
        ...(tenantId ? { 'tenant.id': tenantId } : {}),
      },
    },
    fn,
  );
}

/**
 * Yoga's side: wraps whatever executes the operation (graphql-js, or graphql-jit for a hot document), so it
 * goes last among the plugins. None while tracing is off.
 */
export function operationTracing(): Plugin[] {
  if (!isTracing()) return [];
  return [
    {
      onExecute({ args, executeFn, setExecuteFn }) {
        const operation = getOperationAST(args.document, args.operationName);
        const tenantId = (args.contextValue as Partial<Context>).principal?.tenantId;
        setExecuteFn((a) => inOperationSpan(operation, tenantId, async () => executeFn(a)) as never);
      },
    },
  ];
}
