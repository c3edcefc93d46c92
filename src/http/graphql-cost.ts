import {
  type DocumentNode,
  type FieldNode,
  type FragmentDefinitionNode,
  getNamedType,
  GraphQLError,
  type GraphQLNamedType,
  type GraphQLSchema,
  isInterfaceType,
  isObjectType,
  Kind,
  type OperationDefinitionNode,
  type SelectionSetNode,
  type ValidationRule,
} from 'graphql';
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE } from '../schema/pagination.ts';

/**
 * What one operation may ask the service to produce, estimated before it runs: a leaf costs 1 (free-form
 * JSON 20), an object 2 plus 1.5 times what it selects, and a field that takes `first` costs that times the rows it can answer.
 * Those rows are counted as the request will have them — a number written in the document, a variable's
 * value, or the default page size when `first` is left out — so a page size passed as a variable, or
 * omitted, costs what it returns (bounded by the largest page).
 */
const LEAF = 1;
// Free-form JSON (an event's properties, an audit change, a delivery's payload) holds up to kilobytes where
// another leaf holds a number or a name.
const FREE_FORM_LEAF = 20;
const OBJECT = 2;
const DEPTH_FACTOR = 1.5;
// A fragment that spreads itself, or one not defined, is invalid anyway; it counts as expensive rather than walked.
const CYCLE = 1000;

export interface OperationCost {
  cost: number;
  /** Some page size came from a variable: the cost known before the variables is a lower bound. */
  variable: boolean;
}

type Fragments = (name: string) => FragmentDefinitionNode | undefined;

const pageRows = (n: number) => Math.min(MAX_PAGE_SIZE, Math.max(1, n));

/**
 * The operation's cost. Without `variables` (when the document is validated) a page size given as a
 * variable counts as one row and the result says so; with them it counts as the value the request sends.
 */
export function operationCost(
  schema: GraphQLSchema,
  operation: OperationDefinitionNode,
  fragments: Fragments,
  variables?: Readonly<Record<string, unknown>> | null,
): OperationCost {
  let variable = false;
  const defaults = new Map(operation.variableDefinitions?.map((d) => [d.variable.name.value, d.defaultValue]));

  const rowsOf = (field: FieldNode): number => {
    const value = field.arguments?.find((a) => a.name.value === 'first')?.value;
    if (!value || value.kind === Kind.NULL) return DEFAULT_PAGE_SIZE;
    if (value.kind === Kind.INT) return pageRows(Number.parseInt(value.value, 10));
    if (value.kind !== Kind.VARIABLE) return 1; // not an Int: execution refuses it
    const name = value.name.value;
    if (!variables) {
      variable = true;
      return 1;
    }
    const given = Object.hasOwn(variables, name) ? variables[name] : undefined;
    if (typeof given === 'number' && Number.isInteger(given)) return pageRows(given);
    if (given !== undefined && given !== null) return 1; // not an Int: execution refuses it
    const fallback = given === undefined ? defaults.get(name) : undefined;
    return fallback?.kind === Kind.INT ? pageRows(Number.parseInt(fallback.value, 10)) : DEFAULT_PAGE_SIZE;
  };

  // Each fragment is walked once per operation: spreading one many times over, or fragments spreading each
  // other many times over, costs its total without walking it again.
  const fragmentCosts = new Map<string, number>();
  const fragmentCost = (name: string): number => {
    const known = fragmentCosts.get(name);
    if (known !== undefined) return known;
    const fragment = fragments(name);
    if (!fragment) return CYCLE;
    fragmentCosts.set(name, CYCLE); // until walked: a spread of itself inside it counts as a cycle
    const cost = selections(fragment.selectionSet, schema.getType(fragment.typeCondition.name.value) ?? undefined);
    fragmentCosts.set(name, cost);
    return cost;
  };

  const selections = (set: SelectionSetNode, parent: GraphQLNamedType | undefined): number => {
    let sum = 0;
    for (const s of set.selections) {
      if (s.kind === Kind.FIELD) sum += DEPTH_FACTOR * fieldCost(s, parent);
      else if (s.kind === Kind.INLINE_FRAGMENT) {
        const type = s.typeCondition ? schema.getType(s.typeCondition.name.value) : parent;
        sum += DEPTH_FACTOR * selections(s.selectionSet, type ?? undefined);
      } else sum += DEPTH_FACTOR * fragmentCost(s.name.value);
    }
    return sum;
  };

  const fieldCost = (field: FieldNode, parent: GraphQLNamedType | undefined): number => {
    // Introspection is answered from the schema, not the database.
    if (field.name.value === '__schema') return 0;
    const def = parent && (isObjectType(parent) || isInterfaceType(parent)) ? parent.getFields()[field.name.value] : undefined;
    if (!field.selectionSet) return def && getNamedType(def.type).name === 'JSON' ? FREE_FORM_LEAF : LEAF;
    const cost = OBJECT + selections(field.selectionSet, def ? getNamedType(def.type) : undefined);
    return def?.args.some((a) => a.name === 'first') ? cost * rowsOf(field) : cost;
  };

  const root = schema.getRootType(operation.operation) ?? undefined;
  return { cost: selections(operation.selectionSet, root) / DEPTH_FACTOR, variable };
}

// A refusal like any other of a document that fails validation: `spec` lets a client that accepts only
// application/json have it with status 200, as the GraphQL over HTTP specification has it for those.
const costMessage = (cost: number, maxCost: number) => `Query cost limit of ${maxCost} exceeded, found ${Math.round(cost)}.`;
const costExceeded = (cost: number, maxCost: number) =>
  new GraphQLError(costMessage(cost, maxCost), {
    extensions: { code: 'validation_failed', status: 400, http: { status: 400, spec: true } },
  });

/**
 * The cost check as a validation rule: a document over the limit with what it writes is refused before
 * it runs or is remembered as valid. Its operations whose page sizes are variables are checked again with
 * each request's values (`checkVariableCost`).
 */
export function costLimitRule(maxCost: number): ValidationRule {
  return (context) => ({
    OperationDefinition(node) {
      const { cost, variable } = operationCost(context.getSchema(), node, (name) => context.getFragment(name) ?? undefined);
      withVariables.set(node, variable);
      if (cost > maxCost) context.reportError(new GraphQLError(costMessage(cost, maxCost), { nodes: [node] }));
    },
  });
}

// Whether an operation's cost depends on its variables, as found when it was validated.
const withVariables = new WeakMap<OperationDefinitionNode, boolean>();

/**
 * The error for a request whose variables make a validated operation cost more than the limit, or
 * undefined. An operation whose page sizes are all written in it costs nothing to check again.
 */
export function checkVariableCost(
  schema: GraphQLSchema,
  document: DocumentNode,
  operation: OperationDefinitionNode | null | undefined,
  variables: Readonly<Record<string, unknown>> | null | undefined,
  maxCost: number,
): GraphQLError | undefined {
  if (!operation || withVariables.get(operation) === false) return undefined;
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const d of document.definitions) if (d.kind === Kind.FRAGMENT_DEFINITION) fragments.set(d.name.value, d);
  const { cost } = operationCost(schema, operation, (name) => fragments.get(name), variables ?? {});
  return cost > maxCost ? costExceeded(cost, maxCost) : undefined;
}
