/* TLS and compression as an endpoint asks for them, and each DBMS's one mapping (tls.h). */
#include <string.h>

#include <libpq-fe.h>

#include "driver.h"
#include "tls.h"

static const char *const MODES[] = {
    [AB_SSL_DISABLE] = "disable", [AB_SSL_ALLOW] = "allow", [AB_SSL_PREFER] = "prefer",
    [AB_SSL_REQUIRE] = "require", [AB_SSL_VERIFY_CA] = "verify-ca", [AB_SSL_VERIFY_FULL] = "verify-full",
};

int ab_tls_read(json_t *ep, ab_tls *t)
{
    memset(t, 0, sizeof *t);
    t->sslmode = ab_ep_str(ep, "sslmode");
    if (t->sslmode) {
        for (int m = AB_SSL_DISABLE; m <= AB_SSL_VERIFY_FULL; m++)
            if (!strcmp(t->sslmode, MODES[m]))
                t->mode = (ab_sslmode)m;
        if (t->mode == AB_SSL_DEFAULT)
            return ab_fail("protocol", NULL, "endpoint sslmode '%s': expected disable, prefer, require, verify-ca or "
                           "verify-full", t->sslmode);
    }
    const char *s = ab_ep_str(ep, "sslrootcert");
    t->rootcert = s && *s ? s : NULL;
    if ((s = ab_ep_str(ep, "tls_version"))) {
        if (strcmp(s, "TLSv1.2") && strcmp(s, "TLSv1.3"))
            return ab_fail("protocol", NULL, "endpoint tls_version '%s': expected TLSv1.2 or TLSv1.3", s);
        t->version = s;
    }
    if ((s = ab_ep_str(ep, "sslnegotiation"))) {
        if (strcmp(s, "direct") && strcmp(s, "postgres"))
            return ab_fail("protocol", NULL, "endpoint sslnegotiation '%s': expected direct", s);
        t->direct = !strcmp(s, "direct");
    }
    json_t *c = json_object_get(ep, "compress");
    if (c && !json_is_boolean(c) && !json_is_null(c))
        return ab_fail("protocol", NULL, "endpoint compress: expected true or false");
    t->compress = json_is_true(c);
    return 0;
}

/* ---- PostgreSQL -------------------------------------------------------------------------------- */

const char AB_PG_TLS_WORDS[] =
    "libpq's own keywords: sslmode as given (disable: no TLS and no SSLRequest; absent: libpq's default, "
    "prefer), sslrootcert=<the CA file> with verify-ca and verify-full (with require it is not passed: libpq "
    "would check the chain against it, which require does not ask; libpq still does if ~/.postgresql/root.crt "
    "exists), a pinned version as ssl_min_protocol_version and ssl_max_protocol_version both set to it, "
    "sslnegotiation=direct only with libpq 17 or later (this libpq's version is in driver_version; an older "
    "one answers unsupported); libpq makes its SSL context and reads the CA file per connection, inside "
    "connect's time: nothing can be built once and reused";

int ab_pg_tls_check(const ab_tls *t, const char *who)
{
    if (t->compress)
        return ab_fail("unsupported", NULL, "%s: PostgreSQL's protocol has no compression (compress is MariaDB's)", who);
    if (t->direct && PQlibVersion() < 170000) {
        int v = PQlibVersion();
        return ab_fail("unsupported", NULL, "%s: libpq %d.%d has no sslnegotiation=direct (libpq 17 and later)", who,
                       v / 10000, v % 10000);
    }
    return 0;
}

int ab_pg_tls_params(const ab_tls *t, const char **kw, const char **val)
{
    int k = 0;
#define ADD(K, V)                                                                                                      \
    do {                                                                                                               \
        kw[k] = (K);                                                                                                   \
        val[k++] = (V);                                                                                                \
    } while (0)
    if (t->sslmode)
        ADD("sslmode", t->sslmode);
    if (t->mode == AB_SSL_DISABLE)
        return k;
    if (t->rootcert && t->mode != AB_SSL_REQUIRE)
        ADD("sslrootcert", t->rootcert);
    if (t->version) {
        ADD("ssl_min_protocol_version", t->version);
        ADD("ssl_max_protocol_version", t->version);
    }
    if (t->direct)
        ADD("sslnegotiation", "direct");
#undef ADD
    return k;
}

/* ---- MariaDB ------------------------------------------------------------------------------------ */

const char AB_MY_TLS_WORDS[] =
    "Connector/C's options, set with mysql_optionsv before mysql_real_connect: disable → MYSQL_OPT_SSL_ENFORCE 0 "
    "(libmariadb 3.3 asks for no TLS unless told to); absent or prefer → nothing (libmariadb 3.3's default: no "
    "TLS); require → MYSQL_OPT_SSL_ENFORCE 1, no CA, MYSQL_OPT_SSL_VERIFY_SERVER_CERT 0 (encrypted, nothing "
    "checked); verify-ca → MYSQL_OPT_SSL_CA <the CA file> (libmariadb checks the chain whenever it has a CA) and "
    "MYSQL_OPT_SSL_VERIFY_SERVER_CERT 0 (no host name check); verify-full → MYSQL_OPT_SSL_CA and "
    "MYSQL_OPT_SSL_VERIFY_SERVER_CERT 1 (the host name too); a pinned version → MARIADB_OPT_TLS_VERSION "
    "(that version alone enabled); after connecting, a connection asked to be encrypted that is not "
    "(libmariadb 3.3 drops TLS silently when the server offers none and no host check was asked) is an error "
    "(mysql_get_ssl_cipher, no round trip); sslnegotiation: MariaDB has none (unsupported); libmariadb makes "
    "its SSL context and reads the CA file per connection, inside connect's time: nothing can be built once "
    "and reused";

const char AB_MY_COMPRESS_WORDS[] =
    "compress → MYSQL_OPT_COMPRESS (CLIENT_COMPRESS, zlib), checked after connecting (the server may "
    "refuse it; then an error, never a plain connection); otherwise off";

int ab_my_tls_check(const ab_tls *t, const char *who)
{
    if (t->direct)
        return ab_fail("unsupported", NULL, "%s: sslnegotiation=direct is PostgreSQL's; MariaDB's protocol has none", who);
    if (t->mode == AB_SSL_ALLOW)
        return ab_fail("unsupported", NULL, "%s: sslmode=allow is libpq's; libmariadb has no such mode", who);
    if (t->mode == AB_SSL_VERIFY_CA && !t->rootcert)
        return ab_fail("unsupported", NULL, "%s: libmariadb checks a chain without the host name only against a CA "
                       "file it is given (MYSQL_OPT_SSL_CA); verify-ca without sslrootcert has none", who);
    return 0;
}

void ab_my_tls_apply(MYSQL *m, const ab_tls *t)
{
    my_bool on = 1, off = 0;
    if (t->mode == AB_SSL_DISABLE)
        mysql_optionsv(m, MYSQL_OPT_SSL_ENFORCE, &off);
    if (ab_tls_required(t)) {
        mysql_optionsv(m, MYSQL_OPT_SSL_ENFORCE, &on);
        if (t->mode != AB_SSL_REQUIRE && t->rootcert)
            mysql_optionsv(m, MYSQL_OPT_SSL_CA, t->rootcert);
        mysql_optionsv(m, MYSQL_OPT_SSL_VERIFY_SERVER_CERT, t->mode == AB_SSL_VERIFY_FULL ? &on : &off);
        if (t->version)
            mysql_optionsv(m, MARIADB_OPT_TLS_VERSION, t->version);
    }
    if (t->compress)
        mysql_optionsv(m, MYSQL_OPT_COMPRESS, NULL);
}

int ab_my_tls_confirm(MYSQL *m, const ab_tls *t)
{
    if (ab_tls_required(t) && !mysql_get_ssl_cipher(m))
        return ab_fail("db", NULL, "sslmode=%s: the server offers no TLS, and libmariadb connected without it",
                       t->sslmode);
    if (t->compress && !m->net.compress)
        return ab_fail("db", NULL, "compress: the server did not accept the protocol's compression");
    return 0;
}
