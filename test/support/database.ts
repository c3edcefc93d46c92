import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { inject } from 'vitest';

let url: Promise<string> | undefined;

/**
 * A database cloned from the migrated template the global setup made, named like every clone of the run
 * (`<template>_<8 hex>`), so the run's teardown drops it; `drop` drops it sooner.
 */
export async function cloneTemplate(): Promise<{ url: string; drop(): Promise<void> }> {
  const template = new URL(inject('databaseUrl'));
  const name = `${template.pathname.slice(1)}_${randomUUID().slice(0, 8)}`;
  const adminUrl = Object.assign(new URL(template), { pathname: '/postgres' }).toString();
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    // Cloning needs the template idle; files create their clones one after another.
    for (let i = 0; ; i++) {
      try {
        await admin.query(`CREATE DATABASE ${name} TEMPLATE ${template.pathname.slice(1)}`);
        break;
      } catch (e) {
        if (i > 50 || !/being accessed/.test(String(e))) throw e;
        await new Promise((r) => setTimeout(r, 100 + Math.random() * 200));
      }
    }
  } finally {
    await admin.end();
  }
  return {
    url: Object.assign(new URL(template), { pathname: `/${name}` }).toString(),
    async drop() {
      const c = new pg.Client({ connectionString: adminUrl });
      await c.connect();
      try {
        await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await c.end();
      }
    },
  };
}

/**
 * A database of this test file's own, cloned from the migrated template the global setup made.
 * Files that run background workers (relay, sweepers) then never act on another file's rows.
 */
export function fileDatabaseUrl(): Promise<string> {
  url ??= cloneTemplate().then((c) => c.url);
  return url;
}

/**
 * A login role in chs_app, the application's role the migrations grant to (docs/operations.md): the
 * service's own rights, without owning a table. Roles belong to the whole server, so the name is unique
 * and the role is dropped again by `drop`.
 */
export async function appDatabaseRole(): Promise<{ name: string; drop(): Promise<void> }> {
  const admin = Object.assign(new URL(inject('databaseUrl')), { pathname: '/postgres' }).toString();
  const name = `chs_app_test_${randomUUID().slice(0, 8)}`;
  const c = new pg.Client({ connectionString: admin });
  await c.connect();
  await c.query(`CREATE ROLE ${name} LOGIN IN ROLE chs_app`);
  await c.end();
  return {
    name,
    async drop() {
      const d = new pg.Client({ connectionString: admin });
      await d.connect();
      await d.query(`DROP ROLE IF EXISTS ${name}`);
      await d.end();
    },
  };
}
