import { type FieldNode, type FragmentDefinitionNode, Kind, type SelectionSetNode } from 'graphql';
import { isDeepStrictEqual } from 'node:util';
import { z } from 'zod';
import { DomainError, notFound, validationFailed } from '../errors.ts';
import type { Customer as CustomerRow } from '../generated/prisma/client.ts';
import { builder } from './builder.ts';
import { HEALTH_INCLUDE } from './health.ts';
import { type ProviderName, PROVIDERS } from '../contract/enums.ts';
import { HealthStatus, Provider, RiskLevel } from './enums.ts';
import { actorOf, requireCapability } from './guards.ts';
import { isPageColumn, type PageRequest } from '../services/customer-reads.ts';
import { CUSTOMER_FIELDS, type FieldKind } from '../contract/customer-fields.ts';
import { camelCase } from '../contract/serialize.ts';
import {
  connectionOf,
  decodeCursor,
  DEFAULT_PAGE_SIZE,
  keysetPage,
  MAX_PAGE_SIZE,
  NEWEST_FIRST,
  pageSize,
  type Sort,
  selectionOf,
  toPage,
} from './pagination.ts';
import { oneLine, parseInput } from './validate.ts';

/** The GraphQL type of each kind of customer field (src/contract/customer-fields.ts). */
const TYPE_OF_KIND = {
  uuid: 'UUID',
  text: 'String',
  score: 'Int',
  probability: 'Float',
  health_status: HealthStatus,
  risk_level: RiskLevel,
  time: 'DateTime',
} as const satisfies Record<FieldKind, unknown>;

export const Customer = builder.prismaObject('Customer', {
  fields: (t) => ({
    // Each of the customer's own fields, as its column on the model (named in camelCase).
    ...Object.fromEntries(
      Object.entries(CUSTOMER_FIELDS).map(([name, f]: [string, { kind: FieldKind; nullable: boolean; description?: string }]) => [
        camelCase(name),
        t.expose(camelCase(name) as 'name', {
          type: TYPE_OF_KIND[f.kind] as 'String',
          nullable: f.nullable as false,
          description: f.description,
        }),
      ]),
    ),
    identities: t.relation('identities', { query: { orderBy: { createdAt: 'asc' } } }),
  }),
});

builder.prismaObject('CustomerIdentity', {
  description: "A customer's account at a provider, used to attribute that provider's events.",
  fields: (t) => ({
    provider: t.field({ type: Provider, resolve: (i) => i.provider as ProviderName }),
    externalId: t.exposeString('externalId'),
  }),
});

const CustomerConnection = connectionOf('Customer', Customer);

/** Whether one customer's planned query is its columns, or its columns and health, which plain SQL reads. */
export function plainRead(query: { include?: object; select?: object }): { health: boolean } | undefined {
  if (query.select) return undefined;
  if (!query.include || Object.keys(query.include).length === 0) return { health: false };
  return isDeepStrictEqual(query.include, HEALTH_INCLUDE) ? { health: true } : undefined;
}

/**
 * Whether a selection is fixed by its document: nothing below it takes arguments or directives, so no
 * variable can change what it reads. Collects the fragments it spreads into `used`.
 */
function fixedSelection(
  set: SelectionSetNode | undefined,
  fragments: Record<string, FragmentDefinitionNode>,
  used: FragmentDefinitionNode[],
): boolean {
  for (const s of set?.selections ?? []) {
    if (s.directives?.length) return false;
    if (s.kind === Kind.FIELD) {
      if (s.arguments?.length || !fixedSelection(s.selectionSet, fragments, used)) return false;
    } else if (s.kind === Kind.INLINE_FRAGMENT) {
      if (!fixedSelection(s.selectionSet, fragments, used)) return false;
    } else {
      const f = fragments[s.name.value];
      if (!f || f.directives?.length) return false;
      if (!used.includes(f)) {
        used.push(f);
        if (!fixedSelection(f.selectionSet, fragments, used)) return false;
      }
    }
  }
  return true;
}

// Whether a page is plain columns depends on its document only when the selection is fixed, so that answer
// is kept per field of a parsed document (and sort field) instead of planning the selection on every request.
const plainPages = new WeakMap<FieldNode, { fragments: FragmentDefinitionNode[]; bySort: Map<string, boolean> }>();

/** Whether the page's nodes ask for table columns only (no relation, no field that loads more). */
function columnsOnly(plan: Parameters<typeof selectionOf>[0], sort: Sort): boolean {
  const { info } = plan;
  const node = info.fieldNodes.length === 1 ? info.fieldNodes[0] : undefined;
  let known = node && plainPages.get(node);
  // The same field node with other fragment definitions (another document) is planned afresh.
  if (known && !known.fragments.every((f) => info.fragments[f.name.value] === f)) known = undefined;
  if (!known && node) {
    const used: FragmentDefinitionNode[] = [];
    if (fixedSelection(node.selectionSet, info.fragments, used)) plainPages.set(node, (known = { fragments: used, bySort: new Map() }));
  }
  const answer = known?.bySort.get(sort.field);
  if (answer !== undefined) return answer;
  const select = selectionOf(plan, sort);
  const plain = !!select && Object.entries(select).every(([key, value]) => value === true && isPageColumn(key));
  known?.bySort.set(sort.field, plain);
  return plain;
}
const MAX_SEARCH = 200;

const SORTS = {
  createdAt: { kind: 'date' },
  name: { kind: 'string' },
  healthScore: { kind: 'integer', nullable: true, range: [0, 100] },
  churnProbability: { kind: 'number', nullable: true, range: [0, 1] },
} as const satisfies Record<string, Omit<Sort, 'field' | 'direction'>>;

const CustomerSortField = builder.enumType('CustomerSortField', { values: Object.keys(SORTS) as (keyof typeof SORTS)[] });
const SortDirection = builder.enumType('SortDirection', { values: ['asc', 'desc'] as const });
const CustomerOrder = builder.inputType('CustomerOrder', {
  description: 'Customers without a score (or prediction) come last in either direction.',
  fields: (t) => ({ field: t.field({ type: CustomerSortField }), direction: t.field({ type: SortDirection, defaultValue: 'desc' }) }),
});

builder.queryFields((t) => ({
  customers: t.field({
    type: CustomerConnection,
    description: 'Customers of the tenant; newest first unless orderBy says otherwise (nulls last either way).',
    args: {
      first: t.arg.int({ required: false, description: `Page size, 1 to ${MAX_PAGE_SIZE} (default ${DEFAULT_PAGE_SIZE}).` }),
      after: t.arg.string({ required: false, description: 'The endCursor of the previous page.' }),
      riskLevel: t.arg({ type: RiskLevel, required: false }),
      healthStatus: t.arg({ type: HealthStatus, required: false }),
      search: t.arg.string({
        required: false,
        description: `Part of the name, domain, email or external id (any case); at most ${MAX_SEARCH} characters.`,
      }),
      orderBy: t.arg({ type: CustomerOrder, required: false, description: 'Default: newest first.' }),
    },
    resolve: async (_root, args, ctx, info) => {
      const p = requireCapability(ctx, 'read');
      if (args.search && args.search.length > MAX_SEARCH) {
        throw validationFailed([{ path: 'search', message: `must be at most ${MAX_SEARCH} characters` }]);
      }
      const search = args.search?.trim();
      const sort: Sort = args.orderBy
        ? { field: args.orderBy.field, direction: args.orderBy.direction ?? 'desc', ...SORTS[args.orderBy.field] }
        : NEWEST_FIRST;
      const plan = { context: ctx, info };
      // A page of plain columns (the REST list, most dashboards) is one plain SQL statement; relations and
      // searches take Prisma's planned query.
      if (!search && columnsOnly(plan, sort)) {
        const filters = { tenantId: p.tenantId, riskLevel: args.riskLevel, healthStatus: args.healthStatus };
        const take = pageSize(args.first);
        const rows = await ctx.services.customerReads.page({
          ...filters,
          sort: sort as PageRequest['sort'],
          after: args.after ? decodeCursor(args.after, sort) : null,
          take: take + 1,
        });
        return toPage(rows as unknown as CustomerRow[], take, () => ctx.services.customerReads.count(filters), sort);
      }
      // Prisma's filter, built only on this path.
      const where = {
        tenantId: p.tenantId,
        ...(args.riskLevel ? { churnRiskLevel: args.riskLevel } : {}),
        ...(args.healthStatus ? { healthStatus: args.healthStatus } : {}),
        ...(search
          ? {
              OR: (['name', 'domain', 'email', 'externalId'] as const).map((f) => ({
                [f]: { contains: search, mode: 'insensitive' as const },
              })),
            }
          : {}),
      };
      return keysetPage<CustomerRow>(ctx.prisma.customer, where, args, plan, sort);
    },
  }),
  customer: t.prismaField({
    type: 'Customer',
    args: { id: t.arg({ type: 'UUID' }) },
    resolve: async (query, _root, args, ctx) => {
      const p = requireCapability(ctx, 'read');
      // The customer's columns, with its health when asked, are one plain SQL
      // statement; any other relation takes Prisma's planned query.
      const plain = plainRead(query);
      const c = plain
        ? ((await ctx.services.customerReads.one(p.tenantId, args.id, plain)) as unknown as CustomerRow | null)
        : await ctx.prisma.customer.findFirst({ ...query, where: { id: args.id, tenantId: p.tenantId } });
      if (!c) throw notFound(`Customer ${args.id}`);
      return c;
    },
  }),
}));

const domain = z
  .string()
  .trim()
  .toLowerCase()
  .max(253)
  .regex(/^(?=.{1,253}$)([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/, 'must be a domain name such as example.com');

const identity = z.object({
  provider: z.enum(PROVIDERS),
  externalId: oneLine().trim().min(1).max(200),
});

const customerFields = {
  name: oneLine().trim().min(1).max(200),
  externalId: oneLine().trim().min(1).max(200).nullish(),
  email: z.string().trim().toLowerCase().email().max(320).nullish(),
  domain: domain.nullish(),
};
const createInput = z.object({ ...customerFields, identities: z.array(identity).max(50).nullish() });
const updateInput = z
  .object({ ...customerFields, name: customerFields.name.optional() })
  .refine((v) => Object.keys(v).length > 0, { message: 'set at least one field' });

const IdentityInput = builder.inputType('CustomerIdentityInput', {
  fields: (t) => ({ provider: t.field({ type: Provider }), externalId: t.string() }),
});

const CreateCustomerInput = builder.inputType('CreateCustomerInput', {
  fields: (t) => ({
    name: t.string(),
    externalId: t.string({ required: false }),
    email: t.string({ required: false }),
    domain: t.string({ required: false }),
    identities: t.field({ type: [IdentityInput], required: false }),
  }),
});

const ErasedCustomer = builder.objectRef<{ id: string; externalId: string | null }>('ErasedCustomer').implement({
  description: 'What remains of an erased customer: its ids, to match it in your own systems.',
  fields: (t) => ({
    id: t.expose('id', { type: 'UUID' }),
    externalId: t.exposeString('externalId', { nullable: true }),
  }),
});

const UpdateCustomerInput = builder.inputType('UpdateCustomerInput', {
  fields: (t) => ({
    name: t.string({ required: false }),
    externalId: t.string({ required: false }),
    email: t.string({ required: false }),
    domain: t.string({ required: false }),
  }),
});

builder.mutationFields((t) => ({
  createCustomer: t.prismaField({
    type: 'Customer',
    args: { input: t.arg({ type: CreateCustomerInput }) },
    resolve: async (query, _root, args, ctx) => {
      const p = requireCapability(ctx, 'write');
      const input = parseInput(createInput, args.input);
      const id = await ctx.services.customers.create(p.tenantId, input);
      const created = await ctx.prisma.customer.findUnique({ ...query, where: { id } });
      // Erased, or its workspace removed, between its commit and this read: the request lost that race.
      if (!created) throw new DomainError('conflict', `Customer ${id} was erased as soon as it was created.`);
      return created;
    },
  }),
  updateCustomer: t.prismaField({
    type: 'Customer',
    args: { id: t.arg({ type: 'UUID' }), input: t.arg({ type: UpdateCustomerInput }) },
    resolve: async (query, _root, args, ctx) => {
      const p = requireCapability(ctx, 'write');
      const input = parseInput(updateInput, Object.fromEntries(Object.entries(args.input).filter(([, v]) => v !== undefined)));
      await ctx.services.customers.update(p.tenantId, args.id, input);
      return ctx.prisma.customer.findUniqueOrThrow({ ...query, where: { id: args.id } });
    },
  }),
  deleteCustomer: t.field({
    type: ErasedCustomer,
    description:
      'Erases a customer for good: its identities, signals, history, predictions, alerts, outcomes, and the raw inbound events that name it; invoices and subscriptions stay, unlinked. Cannot be undone.',
    args: { id: t.arg({ type: 'UUID' }) },
    resolve: (_root, args, ctx) => ctx.services.customers.erase(actorOf(ctx, requireCapability(ctx, 'manage')), args.id),
  }),
}));
