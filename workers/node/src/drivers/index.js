// The registry: every method base this worker knows → its driver module. A driver module's
// default export is a subclass of `Driver` (../driver.js); the host uses what that class
// declares and nothing else.

import { Unsupported } from '../driver.js';
import { useVersion } from '../versions.js';

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

// The driver of a method name (a base from DRIVERS, optionally at another version of its
// driver, `@VERSION` (versions.js), and followed by `/key=value[,key=value]` settings, each
// given to the driver's `configure`). A method that cannot be used (unknown base or setting,
// driver module not installed, a version not installed or not the one loaded) throws
// `Unsupported` with the reason: the worker answers it to every message (and `bye` still ends
// the process).
export async function loadDriver(method) {
  const slash = method.indexOf('/');
  const named = slash < 0 ? method : method.slice(0, slash);
  const [base, version] = named.split('@');
  if (!(base in DRIVERS)) {
    throw new Unsupported(`unknown method '${base}' (abworker-node knows ${Object.keys(DRIVERS).join(', ')})`);
  }
  if (version) {
    try {
      useVersion(named);
    } catch (e) {
      throw new Unsupported(e.message);
    }
  }
  let mod;
  try {
    mod = await import(DRIVERS[base].split('#')[0]);
  } catch (e) {
    process.stderr.write(`${e && e.stack ? e.stack : e}\n`);
    throw new Unsupported(`${named}: driver module not importable (npm ci --prefix workers/node): ${e.message}`);
  }
  const driver = new mod[DRIVERS[base].split('#')[1] || 'default'](method);
  if (version && driver.version().split(' ')[0] !== version) {
    throw new Unsupported(`${method}: this worker loaded ${base}'s driver at ${driver.version()}, not ${version}`);
  }
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
