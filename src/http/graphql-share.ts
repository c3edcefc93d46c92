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
import type { Db } from '../db/prisma.ts';
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
  /** A heavy operation's Prisma, to run it with: its statements go through its tenant's share of the pool. */
  prisma?: Db;
}

const LIGHT: Metered = { heavy: false, release: () => {} };

/** Prisma whose every statement runs through the tenant's share of the pool (`CpuShare.statement`). */
function sharedPrisma(prisma: Db, share: CpuShare, tenantId: string): Db {
  return prisma.$extends({ query: { $allOperations: ({ args, query }) => share.statement(tenantId, () => query(args)) } }) as unknown as Db;
}

/**
 * Meters a GraphQL operation by its static cost before it runs. A heavy one takes the part of its tenant's
 * places for heavy work that its cost is of the largest cost allowed (two such operations at once, or one
 * beside an export), so a tenant's many costly operations run a few at a time rather than all at once on
 * the event loop; then it waits, as an export's next page does, while its tenant is past its share of the
 * process and another tenant is served (runtime/cpu-share.ts). Its answer is then written as a step of
 * that share (`written`), so what serialising it costs is charged to its tenant.
 */
export function createOperationMeter(share: CpuShare) {
  const heavy = async (tenantId: string, cost: number, prisma: Db): Promise<Metered> => {
    const release = await share.hold(tenantId, cost / GRAPHQL_LIMITS.maxCost);
    try {
      await share.run(tenantId, () => undefined);
    } catch (e) {
      release();
      throw e;
    }
    return { heavy: true, release, prisma: sharedPrisma(prisma, share, tenantId) };
  };
  // A light operation goes on in the same turn: most are light, and they pay nothing for the metering.
  const meter = (tenantId: string | undefined, cost: number, prisma: Db): Metered | Promise<Metered> =>
    !tenantId || cost < HEAVY_COST ? LIGHT : heavy(tenantId, cost, prisma);
  return {
    meter,
    /** Writes a heavy operation's answer as a step of its tenant's share; a light one's at once. */
    written<T>(tenantId: string | undefined, metered: Metered, write: () => T): T | Promise<T> {
      return metered.heavy && tenantId ? share.run(tenantId, write) : write();
    },
    /** The same metering for the operations Yoga executes (those the fast path leaves to it). */
    plugin(): Plugin {
      return {
        async onExecute({ args, extendContext }) {
          const operation = getOperationAST(args.document, args.operationName);
          if (!operation || operation.operation === 'subscription') return;
          // Our context, which Yoga's types know only as its own initial one.
          const context = args.contextValue as Partial<Context>;
          const extend = extendContext as (fields: Partial<Context>) => void;
          const tenantId = context.principal?.tenantId;
          const metered = await meter(tenantId, costOf(args.schema, args.document, operation, args.variableValues), context.prisma!);
          if (!metered.heavy) return;
          if (metered.prisma) extend({ prisma: metered.prisma });
          // Released when the execution is done, or when the response closes should it never be.
          (args.contextValue as { reply?: FastifyReply }).reply?.raw.once('close', metered.release);
          return { onExecuteDone: () => metered.release() };
        },
      };
    },
  };
}

export type OperationMeter = ReturnType<typeof createOperationMeter>;
