/* TLS and compression as an endpoint asks for them (protocol/PROTOCOL.md, `open`: "TLS, for
 * both DBMSs"), in libpq's words, and the one mapping of them per DBMS:
 *
 * - PostgreSQL: libpq's own connection keywords (sslmode, sslrootcert,
 *   ssl_min_protocol_version, ssl_max_protocol_version, sslnegotiation), which c-libpq puts
 *   in its conninfo and c-odbc hands to psqlODBC (SSLmode, and the rest in pqopt={…}, which
 *   psqlODBC passes to the same libpq).
 * - MariaDB: Connector/C's options (libmariadb 3.3), which c-libmariadb sets with
 *   mysql_optionsv; c-odbc writes MariaDB Connector/ODBC's connection string keys, which that
 *   driver turns into the same options of the same libmariadb.
 *
 * Nothing here is timed: the keys are read from the endpoint, and what a driver cannot do is
 * refused, when a connection is made (libpq and libmariadb make their TLS context, and read
 * the CA file, per connection; neither lets one be built once and reused). */
#ifndef AB_TLS_H
#define AB_TLS_H

#include <jansson.h>
#include <mysql.h>

typedef enum {
    AB_SSL_DEFAULT,     /* no sslmode: the driver's own default */
    AB_SSL_DISABLE,
    AB_SSL_ALLOW,       /* libpq's; the runner never sends it */
    AB_SSL_PREFER,
    AB_SSL_REQUIRE,
    AB_SSL_VERIFY_CA,
    AB_SSL_VERIFY_FULL,
} ab_sslmode;

typedef struct {
    ab_sslmode mode;
    const char *sslmode;  /* as given; NULL when absent */
    const char *rootcert; /* sslrootcert: the CA's PEM file; NULL when none */
    const char *version;  /* tls_version pinned: "TLSv1.2" or "TLSv1.3"; NULL: the highest both ends have */
    int direct;           /* sslnegotiation=direct (PostgreSQL 17+) */
    int compress;         /* compress: the MariaDB protocol's compression (CLIENT_COMPRESS) */
} ab_tls;

/* The endpoint's TLS keys and compress (the strings point into ep); -1 with a protocol error
 * when one is malformed. */
int ab_tls_read(json_t *ep, ab_tls *t);

/* The mode asks for an encrypted connection (require, verify-ca, verify-full). */
static inline int ab_tls_required(const ab_tls *t)
{
    return t->mode >= AB_SSL_REQUIRE;
}

/* ---- PostgreSQL: libpq's keywords ------------------------------------------------------------ */

#define AB_PG_TLS_MAX 5 /* keyword/value pairs ab_pg_tls_params appends at most */

/* -1 with an `unsupported` error naming what the libpq in this process lacks (sslnegotiation
 * before libpq 17) or what PostgreSQL has not (compression); `who` names the method. */
int ab_pg_tls_check(const ab_tls *t, const char *who);

/* Appends the libpq keywords for t at kw/val (the mapping below); returns how many. */
int ab_pg_tls_params(const ab_tls *t, const char **kw, const char **val);

/* How ab_pg_tls_params maps the keys, for hello's `tls` setting. */
extern const char AB_PG_TLS_WORDS[];

/* ---- MariaDB: Connector/C's options ------------------------------------------------------------ */

/* -1 with an `unsupported` error for what MariaDB has not (sslnegotiation, sslmode=allow). */
int ab_my_tls_check(const ab_tls *t, const char *who);

/* Sets t on m with mysql_optionsv, before mysql_real_connect. */
void ab_my_tls_apply(MYSQL *m, const ab_tls *t);

/* After mysql_real_connect: -1 with an error when the connection is not what t asked for.
 * libmariadb 3.3 drops TLS without a word when the server offers none and only require or
 * verify-ca was asked (it refuses only when the host name is to be verified), and drops
 * compression when the server has none: asked locally, no round trip. */
int ab_my_tls_confirm(MYSQL *m, const ab_tls *t);

/* How ab_my_tls_apply maps the keys, and compress, for hello's settings. */
extern const char AB_MY_TLS_WORDS[];
extern const char AB_MY_COMPRESS_WORDS[];

#endif
