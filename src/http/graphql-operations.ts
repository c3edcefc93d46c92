import { GraphQLError, type ValidationRule } from 'graphql';
import type { Plugin } from 'graphql-yoga';

/**
 * Lets through documents whose operations are all subscriptions, or all anything else: subscriptions stream
 * for hours and have an endpoint and a budget of their own, the rest must not take that way round the
 * budget of requests. A document of the other kind fails validation with `message`.
 */
export function operationsOnly(kind: 'subscriptions' | 'others', message: string): Plugin {
  const rule: ValidationRule = (context) => ({
    OperationDefinition(node) {
      if ((node.operation === 'subscription') !== (kind === 'subscriptions'))
        context.reportError(new GraphQLError(message, { nodes: node }));
    },
  });
  return {
    onValidate({ addValidationRule }) {
      addValidationRule(rule);
    },
  };
}
