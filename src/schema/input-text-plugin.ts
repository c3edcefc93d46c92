import SchemaBuilder, { BasePlugin, type PothosOutputFieldConfig, type SchemaTypes } from '@pothos/core';
import type { GraphQLFieldResolver } from 'graphql';
import { type FieldError, validationFailed } from '../errors.ts';
import { textProblem } from '../text.ts';

/** Longer than any string argument the API has a use for; the fields bound themselves more tightly. */
export const MAX_INPUT_STRING = 10_000;

/**
 * Every string a field receives, at any depth of its arguments, as a literal or through variables,
 * over /graphql or the REST facade: no U+0000 or unpaired surrogate (PostgreSQL cannot store them)
 * and no more than MAX_INPUT_STRING characters. graphql-js will not let the built-in String scalar be
 * replaced, so the check sits in front of every resolver that takes arguments instead.
 */
export function inputTextErrors(args: Record<string, unknown>): FieldError[] {
  const errors: FieldError[] = [];
  // Arguments are already coerced: their depth is the schema's and JSON values are bounded by their scalar.
  const stack: [string, unknown][] = Object.entries(args);
  while (stack.length && errors.length < 20) {
    const [path, v] = stack.pop()!;
    if (typeof v === 'string') {
      const problem = v.length > MAX_INPUT_STRING ? `must be at most ${MAX_INPUT_STRING} characters` : textProblem(v);
      if (problem) errors.push({ path, message: problem });
    } else if (Array.isArray(v)) {
      v.forEach((x, i) => stack.push([`${path}.${i}`, x]));
    } else if (v !== null && typeof v === 'object' && !(v instanceof Date)) {
      for (const [k, x] of Object.entries(v)) {
        const problem = textProblem(k);
        if (problem) errors.push({ path: `${path}.${k.replace(/[^\w.-]/g, '?')}`, message: `key ${problem}` });
        else stack.push([`${path}.${k}`, x]);
      }
    }
  }
  return errors.reverse();
}

export class InputTextPlugin<Types extends SchemaTypes> extends BasePlugin<Types> {
  override wrapResolve(
    resolver: GraphQLFieldResolver<unknown, Types['Context'], object>,
    fieldConfig: PothosOutputFieldConfig<Types>,
  ): GraphQLFieldResolver<unknown, Types['Context'], object> {
    if (Object.keys(fieldConfig.args).length === 0) return resolver;
    return (parent, args, context, info) => {
      const errors = inputTextErrors(args as Record<string, unknown>);
      if (errors.length) throw validationFailed(errors);
      return resolver(parent, args, context, info);
    };
  }
}

declare global {
  export namespace PothosSchemaTypes {
    export interface Plugins<Types extends SchemaTypes> {
      inputText: InputTextPlugin<Types>;
    }
  }
}

const pluginName = 'inputText';
SchemaBuilder.registerPlugin(pluginName, InputTextPlugin);
export default pluginName;
