// The endpoint's TLS keys (protocol/PROTOCOL.md, open: sslmode, sslrootcert, tls_version,
// sslnegotiation, in libpq's words for both DBMSs) → what Node's TLS takes. Every driver of this
// worker speaks TLS through node:tls (tls.connect on its own socket), so this is the one place
// the keys are read; each DBMS's drivers then put the result in their own option:
//   PostgreSQL: node-pg's `ssl` (and through it Knex's, Drizzle's and Prisma's adapter's), and
//               postgres.js's `ssl` — both hand the object to tls.connect as it is (pgSsl)
//   MariaDB:    mysql2's `ssl` profile {ca, rejectUnauthorized, verifyIdentity, minVersion,
//               maxVersion}, from which mysql2 builds its own secure context (mysql2.js)
// Read when the endpoint arrives (open), outside any timed loop: the CA file is read once.

import fs from 'node:fs';
import tls from 'node:tls';

import { ProtocolError } from '../protocol.js';

const MODES = ['disable', 'allow', 'prefer', 'require', 'verify-ca', 'verify-full'];
const VERSIONS = ['TLSv1.2', 'TLSv1.3'];

// { mode, ca (Buffer or undefined), version (pinned, or undefined), direct (bool) }
export function tlsOf(ep) {
  const mode = ep.sslmode || 'prefer';
  if (!MODES.includes(mode)) throw new ProtocolError(`unknown sslmode '${mode}'`);
  const version = ep.tls_version || undefined;
  if (version !== undefined && !VERSIONS.includes(version)) {
    throw new ProtocolError(`unknown tls_version '${version}' (${VERSIONS.join(' or ')})`);
  }
  const negotiation = ep.sslnegotiation || 'postgres';
  if (negotiation !== 'postgres' && negotiation !== 'direct') {
    throw new ProtocolError(`unknown sslnegotiation '${negotiation}' (postgres or direct)`);
  }
  const direct = negotiation === 'direct';
  if (direct && !['require', 'verify-ca', 'verify-full'].includes(mode)) {
    // libpq's own rule: a direct handshake cannot fall back to no TLS
    throw new ProtocolError(`sslnegotiation=direct needs sslmode require, verify-ca or verify-full, not ${mode}`);
  }
  const verifies = mode === 'verify-ca' || mode === 'verify-full';
  if (verifies && !ep.sslrootcert) throw new ProtocolError(`sslmode=${mode} needs sslrootcert (the CA's PEM file)`);
  const ca = verifies && ep.sslrootcert ? fs.readFileSync(ep.sslrootcert) : undefined;
  return { mode, ca, version, direct };
}

const noIdentityCheck = () => undefined;

// PostgreSQL's tls.connect options, as node-pg's and postgres.js's `ssl` object (both assign it
// to tls.connect's options): null where the mode is not one of TLS (disable/allow/prefer, left to
// each driver). One tls.SecureContext made here from the CA and the pinned version (what
// tls.connect would otherwise build from the same options at every connect); rejectUnauthorized
// (the chain to it) from verify-ca on, and for verify-ca a checkServerIdentity that accepts any
// host name.
export function pgSsl(t) {
  if (t.mode !== 'require' && t.mode !== 'verify-ca' && t.mode !== 'verify-full') return null;
  const secureContext = tls.createSecureContext({
    ...(t.ca ? { ca: t.ca } : {}),
    ...(t.version ? { minVersion: t.version, maxVersion: t.version } : {}),
  });
  const ssl = { secureContext, rejectUnauthorized: t.mode !== 'require' };
  if (t.mode === 'verify-ca') ssl.checkServerIdentity = noIdentityCheck;
  return ssl;
}

// The secure context's version pin of a `prefer` connection (TLS when the server offers it):
// the driver's own object, with the pinned version added.
export function pinned(t, ssl) {
  if (!t.version) return ssl;
  return { ...ssl, secureContext: tls.createSecureContext({ minVersion: t.version, maxVersion: t.version }) };
}

export const PG_TLS = (driver) => `node:tls under ${driver}'s ssl option, the object made once at open (the CA file ` +
  'read then; one tls.SecureContext made from it and the pinned version, passed as secureContext, so no ' +
  'connect parses the CA again); require → {rejectUnauthorized: false} (encrypted, nothing checked); verify-ca → ' +
  '{rejectUnauthorized: true, checkServerIdentity: () => undefined} (the chain to sslrootcert, no host name); ' +
  'verify-full → {rejectUnauthorized: true} (the chain and the host name, node:tls checkServerIdentity against ' +
  'the host: DNS name or IP SAN); tls_version → the secure context\'s minVersion = maxVersion; no TLS session ' +
  'resumption (every connect a full handshake)';
