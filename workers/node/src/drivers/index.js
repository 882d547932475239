// The registry: every method base this worker knows → its driver module. A driver module's
// default export is a subclass of `Driver` (../driver.js); the host uses what that class
// declares and nothing else.

import { Unsupported } from '../driver.js';

export const DRIVERS = {
  'node-pg': './pg.js',
  'node-postgres-js': './postgresjs.js',
  'node-better-sqlite3': './sqlite.js',
  'node-mysql2': './mysql2.js',
  // layers (an ORM, a query builder) over the drivers above: `module#Export` where a module holds
  // a family of them
  'node-knex+pg': './knex.js#KnexPg',
  'node-knex+mysql2': './knex.js#KnexMysql2',
  'node-knex+better-sqlite3': './knex.js#KnexBetterSqlite3',
  'node-drizzle+pg': './drizzle.js',
  'node-prisma+pg': './prisma.js',
};

// The driver of a method name (a base from DRIVERS, optionally followed by
// `/key=value[,key=value]` settings, each given to the driver's `configure`). A method that
// cannot be used (unknown base or setting, driver module not installed) throws `Unsupported`
// with the reason: the worker answers it to every message (and `bye` still ends the process).
export async function loadDriver(method) {
  const slash = method.indexOf('/');
  const base = slash < 0 ? method : method.slice(0, slash);
  if (!(base in DRIVERS)) {
    throw new Unsupported(`unknown method '${base}' (abworker-node knows ${Object.keys(DRIVERS).join(', ')})`);
  }
  let mod;
  try {
    mod = await import(DRIVERS[base].split('#')[0]);
  } catch (e) {
    process.stderr.write(`${e && e.stack ? e.stack : e}\n`);
    throw new Unsupported(`${base}: driver module not importable (npm ci --prefix workers/node): ${e.message}`);
  }
  const driver = new mod[DRIVERS[base].split('#')[1] || 'default'](method);
  if (slash >= 0) {
    for (const kv of method.slice(slash + 1).split(',')) {
      const eq = kv.indexOf('=');
      if (eq < 0) throw new Unsupported(`${method}: setting '${kv}' is not key=value`);
      try {
        driver.configure(kv.slice(0, eq), kv.slice(eq + 1));
      } catch (e) {
        throw new Unsupported(`${method}: ${e.message}`);
      }
    }
  }
  return driver;
}
