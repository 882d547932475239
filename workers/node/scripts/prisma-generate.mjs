// npm's postinstall (so `npm ci`, as `make worker-node` runs it): Prisma's client for
// node-prisma+pg, generated at build time. Prisma needs a model per table, known before it runs:
// the models are made from the built-in suites' tables (src/accessbench/suites/*.toml, `like`
// copying a table's columns) and the conformance script's, each a table with a primary key
// (Prisma needs one); so a new built-in suite needs no code change, only a build.
//
// Relations: a column with `references = "table.column"` (another model's one-column key) gets a
// relation both ways, named as `prisma db pull` names them: on the child model a field named
// after the parent model (`users users? @relation(fields: [user_id], references: [id])`), on the
// parent a list named after the child (`posts posts[]`); each relation has its own name
// (child_column), and a field name already taken gets the column's name after it. They are what
// Prisma's include, its relation filters and its relation loading strategies use (load steps);
// the schema declares no foreign key of its own (nothing is migrated: the worker runs
// `prisma generate` only). The generator enables the `relationJoins` preview feature (still a
// preview in Prisma 7), the only way its client has `relationLoadStrategy: "join"`; without it
// every include is loaded by a query per relation level, which `relationLoadStrategy: "query"`
// keeps asking for.
//
// Column types → Prisma fields, chosen so that each value reads back as node-pg reads it:
// integer/smallint → Int, bigint → BigInt, double/real → Float, boolean → Boolean, bytes →
// Bytes; char(n)/varchar(n)/text → String (@db.Char/@db.VarChar), and timestamp, date and
// numeric → String too: Prisma's DateTime is a JavaScript Date (milliseconds only) and its
// Decimal drops trailing zeros, while its pg adapter hands their text on to a String field.
//
// `prisma generate` (the "prisma-client-js" generator, Rust-free: queryCompiler + driver
// adapters, Prisma 7) needs no engine, but the CLI checks for its schema engine before running
// generate and downloads it when absent (binaries.prisma.sh, unreachable here and never needed
// to generate): PRISMA_SCHEMA_ENGINE_BINARY names a stand-in that refuses to run, so nothing is
// downloaded; CHECKPOINT_DISABLE turns off the CLI's update check. Output:
// node_modules/.abw-prisma/ (schema.prisma, tables.json, client/), remade by every npm ci.

import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { parse } from 'smol-toml';

const here = path.dirname(fileURLToPath(import.meta.url));
const worker = path.resolve(here, '..');
const root = path.resolve(worker, '../..');
const out = path.join(worker, 'node_modules', '.abw-prisma');

const files = [
  ...fs.readdirSync(path.join(root, 'src/accessbench/suites')).filter((f) => f.endsWith('.toml')).sort()
    .map((f) => path.join(root, 'src/accessbench/suites', f)),
  path.join(root, 'src/accessbench/conformance/script.toml'),
];

// every table with its columns ({name, type}) and key, `like` resolved within its suite
const tables = new Map();
for (const file of files) {
  if (!fs.existsSync(file)) continue;
  const suite = parse(fs.readFileSync(file, 'utf8'));
  const own = new Map();
  for (const t of suite.tables || []) {
    const base = t.like ? own.get(t.like) : null;
    const columns = (t.columns || (base ? base.columns : []))
      .map((c) => (c.references ? { name: c.name, type: c.type, references: c.references } : { name: c.name, type: c.type }));
    const key = t.primary_key || (base ? base.key : []);
    own.set(t.name, { columns, key });
    const seen = tables.get(t.name);
    if (seen && JSON.stringify(seen) !== JSON.stringify({ columns, key })) {
      process.stderr.write(`prisma-generate: table ${t.name} of ${path.basename(file)} differs from an earlier one: ` +
        'the first is kept (steps on the other answer unsupported)\n');
      continue;
    }
    if (!seen) tables.set(t.name, { columns, key });
  }
}

function field(c, isKey) {
  const t = c.type.toLowerCase();
  let m, type, attr = '';
  if (/^(integer|int|int4)$/.test(t)) type = 'Int';
  else if (/^(smallint|int2)$/.test(t)) [type, attr] = ['Int', ' @db.SmallInt'];
  else if (/^(bigint|int8)$/.test(t)) type = 'BigInt';
  else if (/^(double|double precision|float8|float)$/.test(t)) type = 'Float';
  else if (/^(real|float4)$/.test(t)) [type, attr] = ['Float', ' @db.Real'];
  else if (/^bool(ean)?$/.test(t)) type = 'Boolean';
  else if (/^(bytes|bytea)$/.test(t)) type = 'Bytes';
  else if ((m = /^char(?:acter)?\((\d+)\)$/.exec(t))) [type, attr] = ['String', ` @db.Char(${m[1]})`];
  else if ((m = /^varchar\((\d+)\)$/.exec(t))) [type, attr] = ['String', ` @db.VarChar(${m[1]})`];
  else type = 'String'; // text, and timestamp, date, numeric read as their text
  return `  ${c.name} ${type}${isKey ? '' : '?'}${attr}`;
}

// the models (a table with a primary key: Prisma needs a unique key per model), then their relations
const modelled = new Map([...tables].filter(([, t]) => t.key && t.key.length > 0));
const taken = new Map([...modelled].map(([name, t]) => [name, new Set(t.columns.map((c) => c.name))]));
const free = (model, name, column) => {
  const used = taken.get(model);
  const chosen = used.has(name) ? `${name}_${column}` : name;
  used.add(chosen);
  return chosen;
};
const relations = new Map([...modelled.keys()].map((name) => [name, []])); // model → its relation field lines
const mapped = {};
for (const [name, { columns, key }] of modelled) {
  mapped[name] = { columns: columns.map((c) => c.name), types: columns.map((c) => c.type), key, parents: {}, children: [] };
}
for (const [child, { columns }] of modelled) {
  for (const c of columns) {
    if (!c.references) continue;
    const [parent, referenced] = c.references.split('.');
    const target = modelled.get(parent);
    if (!target || target.key.length !== 1 || target.key[0] !== referenced) continue;
    const relation = `${child}_${c.name}`;
    const up = free(child, parent, c.name);
    const down = free(parent, child, c.name);
    relations.get(child).push(`  ${up} ${parent}? @relation("${relation}", fields: [${c.name}], references: [${referenced}])`);
    relations.get(parent).push(`  ${down} ${child}[] @relation("${relation}")`);
    mapped[child].parents[c.name] = { table: parent, column: referenced, field: up };
    mapped[parent].children.push({ table: child, column: c.name, field: down });
  }
}
const models = [];
for (const [name, { columns, key }] of modelled) {
  const lines = columns.map((c) => field(c, key.includes(c.name)));
  if (key.length === 1) lines[columns.findIndex((c) => c.name === key[0])] += ' @id';
  else lines.push(`  @@id([${key.join(', ')}])`);
  lines.push(...relations.get(name));
  models.push(`model ${name} {\n${lines.join('\n')}\n}`);
}

fs.rmSync(out, { recursive: true, force: true });
fs.mkdirSync(out, { recursive: true });
const schema = path.join(out, 'schema.prisma');
fs.writeFileSync(schema, `// generated by workers/node/scripts/prisma-generate.mjs: do not edit
generator client {
  provider        = "prisma-client-js"
  output          = "./client"
  previewFeatures = ["relationJoins"]
}

datasource db {
  provider = "postgresql"
}

${models.join('\n\n')}
`);
fs.writeFileSync(path.join(out, 'tables.json'), JSON.stringify(mapped, null, 1));
const standIn = path.join(out, 'no-schema-engine');
fs.writeFileSync(standIn, '#!/bin/sh\necho "accessbench: no Prisma schema engine here (only prisma generate is run)" >&2\nexit 1\n');
fs.chmodSync(standIn, 0o755);

execFileSync(process.execPath, [path.join(worker, 'node_modules/prisma/build/index.js'), 'generate', '--schema', schema], {
  cwd: out,
  stdio: ['ignore', process.stderr, process.stderr],
  env: { ...process.env, PRISMA_SCHEMA_ENGINE_BINARY: standIn, CHECKPOINT_DISABLE: '1', PRISMA_HIDE_UPDATE_MESSAGE: '1' },
});
