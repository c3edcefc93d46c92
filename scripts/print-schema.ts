// Prints the Pothos schema as SDL into the committed schema.graphql; CI fails when the two differ.
import { writeFileSync } from 'node:fs';
import { lexicographicSortSchema, printSchema } from 'graphql';
import { schema } from '../src/schema/index.ts';

const out = new URL('../schema.graphql', import.meta.url);
writeFileSync(out, `${printSchema(lexicographicSortSchema(schema))}\n`);
