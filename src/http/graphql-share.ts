import {
  type DocumentNode,
  type FragmentDefinitionNode,
  getOperationAST,
  type GraphQLSchema,
  Kind,
  type OperationDefinitionNode,
} from 'graphql';
import type { FastifyReply } from 'fastify';
import type { Plugin } from 'graphql-yoga';
import type { CpuShare } from '../runtime/cpu-share.ts';
import type { Context } from '../schema/context.ts';
import { operationCost } from './graphql-cost.ts';
import { GRAPHQL_LIMITS } from './graphql-limits.ts';

/**
 * An operation whose static cost (graphql-cost.ts) is at least this is heavy work, as an export is: ten
 * aliased searches of 50 customers each cost about 15,000, one page of 50 customers with a handful of
 * fields about 1,600, and the dashboard's documents stay below it. A light operation is not metered at all.
 */
export const HEAVY_COST = 2_500;

// The cost of operations whose page sizes are all written in them, computed once per parsed operation.
const fixedCosts = new WeakMap<OperationDefinitionNode, number>();

/** The operation's cost with this request's variables. */
export function costOf(
  schema: GraphQLSchema,
  document: DocumentNode,
  operation: OperationDefinitionNode,
  variables: Readonly<Record<string, unknown>> | null | undefined,
): number {
  const known = fixedCosts.get(operation);
  if (known !== undefined) return known;
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const d of document.definitions) if (d.kind === Kind.FRAGMENT_DEFINITION) fragments.set(d.name.value, d);
  const written = operationCost(schema, operation, (name) => fragments.get(name));
  if (!written.variable) {
    fixedCosts.set(operation, written.cost);
    return written.cost;
  }
  return operationCost(schema, operation, (name) => fragments.get(name), variables ?? {}).cost;
}

/** What a metered operation holds until its answer is written; `light` when it holds nothing. */
export interface Metered {
  heavy: boolean;
  release(): void;
}

const LIGHT: Metered = { heavy: false, release: () => {} };

/**
 * Meters a GraphQL operation by its static cost before it runs. A heavy one takes the part of its tenant's
 * places for heavy work that its cost is of the largest cost allowed (two such operations at once, or one
 * beside an export), so a tenant's many costly operations run a few at a time rather than all at once on
 * the event loop; then it waits, as an export's next page does, while its tenant is past its share of the
 * process and another tenant is served (runtime/cpu-share.ts). Its answer is then written as a step of
 * that share (`written`), so what serialising it costs is charged to its tenant.
 */
export function createOperationMeter(share: CpuShare) {
  const heavy = async (tenantId: string, cost: number): Promise<Metered> => {
    const release = await share.hold(tenantId, cost / GRAPHQL_LIMITS.maxCost);
    try {
      await share.run(tenantId, () => undefined);
    } catch (e) {
      release();
      throw e;
    }
    return { heavy: true, release };
  };
  // A light operation goes on in the same turn: most are light, and they pay nothing for the metering.
  const meter = (tenantId: string | undefined, cost: number): Metered | Promise<Metered> =>
    !tenantId || cost < HEAVY_COST ? LIGHT : heavy(tenantId, cost);
  return {
    meter,
    /** Writes a heavy operation's answer as a step of its tenant's share; a light one's at once. */
    written<T>(tenantId: string | undefined, metered: Metered, write: () => T): T | Promise<T> {
      return metered.heavy && tenantId ? share.run(tenantId, write) : write();
    },
    /** The same metering for the operations Yoga executes (those the fast path leaves to it). */
    plugin(): Plugin {
      return {
        async onExecute({ args }) {
          const operation = getOperationAST(args.document, args.operationName);
          if (!operation || operation.operation === 'subscription') return;
          const tenantId = (args.contextValue as Partial<Context>).principal?.tenantId;
          const metered = await meter(tenantId, costOf(args.schema, args.document, operation, args.variableValues));
          if (!metered.heavy) return;
          // Released when the execution is done, or when the response closes should it never be.
          (args.contextValue as { reply?: FastifyReply }).reply?.raw.once('close', metered.release);
          return { onExecuteDone: () => metered.release() };
        },
      };
    },
  };
}

export type OperationMeter = ReturnType<typeof createOperationMeter>;
