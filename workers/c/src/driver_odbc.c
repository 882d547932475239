/* c-odbc: the SQL call-level interface through unixODBC — psqlODBC (PostgreSQL Unicode) for
 * PostgreSQL, the SQLite3 ODBC driver for SQLite, MariaDB Connector/ODBC (MariaDB Unicode) for
 * MariaDB.
 *
 * Settings (part of the method name): fetch=N rows per SQLFetch (SQL_ATTR_ROW_ARRAY_SIZE),
 * batch=array|loop. */
#include <locale.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <sql.h>
#include <sqlext.h>

#include "driver.h"
#include "tls.h"

#ifndef AB_UNIXODBC_VERSION
#define AB_UNIXODBC_VERSION "?"
#endif

/* psqlODBC options that change behaviour, pinned (the rest are not used by this worker:
 * catalog functions, updatable cursors, Windows dialogs). */
static const char PG_OPTIONS[] =
    "UseServerSidePrepare=1;" /* SQLPrepare/SQLExecute and bound parameters use the extended protocol */
    "UseDeclareFetch=0;"      /* no cursor: the whole result is read at execution, as libpq does */
    "BoolsAsChar=0;"          /* boolean → SQL_BIT, not '1'/'0' text */
    "TextAsLongVarchar=1;"    /* text → SQL_LONGVARCHAR (the default) */
    "MaxVarcharSize=255;MaxLongVarcharSize=8190;UnknownSizes=0;" /* reported column sizes (defaults) */
    "LFConversion=0;"         /* no LF ↔ CR/LF rewriting of text */
    "Parse=0;"                /* no client-side parsing of statements for column info */
    "UpdatableCursors=0;"     /* no keyset emulation */
    "Protocol=7.4-1;"         /* an error rolls back the transaction: no SAVEPOINT around each statement */
    "BatchSize=100;"          /* parameter arrays: up to 100 sets per round trip (the default) */
    "CommLog=0;Debug=0;";     /* odbcinst.ini may switch the driver's logs on: off */

static const char SQLITE_OPTIONS[] =
    "StepAPI=1;"   /* rows stepped with sqlite3_step as they are fetched, not read whole at execution */
    "NoTXN=0;"     /* transactions are real */
    "SyncPragma=FULL;" /* the driver would set PRAGMA synchronous=NORMAL; FULL is the library default that c-sqlite and py-sqlite3 get */
    "Timeout=5000;" /* busy timeout (ms), as c-sqlite and Python's sqlite3 */
    "NoWCHAR=1;"   /* character columns reported as SQL_CHAR/VARCHAR (read as UTF-8 SQL_C_CHAR) */
    "BigInt=0;JDConv=0;FKSupport=0;LongNames=0;ShortNames=0;"; /* defaults; JournalMode not
                                                               set: the file's own (WAL) */

/* MariaDB Connector/ODBC: OPTION=2 is FLAG_FOUND_ROWS (an UPDATE counts the rows it matched, as
 * every MariaDB method does); statements prepared on the server (PrepOnClient=0, its default);
 * utf8mb4. The same text as py-pyodbc's (src/accessbench/pyworker/drivers/odbc.py). With
 * compress, OPTION also has FLAG_COMPRESSED_PROTO (2048): Option=2050. */
#define MARIADB_OTHER_OPTIONS "CharSet=utf8mb4;PrepOnClient=0;"
static const char MARIADB_OPTIONS[] = "Option=2;" MARIADB_OTHER_OPTIONS;
static const char MARIADB_OPTIONS_COMPRESSED[] = "Option=2050;" MARIADB_OTHER_OPTIONS;

static int opt_fetch = 1, opt_loop = 0;
static SQLHENV env; /* one ODBC environment for every connection, made at the first open */
static pthread_once_t env_once = PTHREAD_ONCE_INIT;

/* ---- result columns ----------------------------------------------------------------------------- */

enum { R_INT, R_FLOAT, R_FLOAT4, R_DEC, R_TEXT, R_BYTES, R_TS, R_DATE, R_TIME, R_BIT, R_DYN };

typedef struct {
    int kind;
    SQLSMALLINT ctype;
    SQLLEN elem; /* bytes per row in buf */
    char *buf;   /* elem × opt_fetch */
    SQLLEN *ind; /* opt_fetch */
    size_t cap;
} rcol;

/* ---- parameters --------------------------------------------------------------------------------- */

/* A parameter column of the step, shared by every connection (made in step_begin). */
typedef struct {
    SQLSMALLINT ctype, sqltype;
    SQLULEN colsize;
    SQLSMALLINT digits;
    SQLLEN elem;
    char *all;      /* n × elem: every row's value, column-wise (made before the clock) */
    SQLLEN *allind; /* n */
} pcol;

static pcol *pcols;
static int pcols_n;

/* ---- a connection --------------------------------------------------------------------------------- */

enum { DB_PG, DB_SQLITE, DB_MARIADB };

struct ab_conn {
    SQLHDBC dbc;
    SQLHSTMT stmt;
    int dbms;  /* DB_PG, DB_SQLITE, DB_MARIADB */
    char *connstr; /* made at the first open (an ab_conn is opened on one endpoint) */
    int64_t backend_pid;
    SQLULEN fetched;
    rcol *rcols;
    int nrcols_cap, nrcols; /* bound columns of the current result */
    /* the one-row parameter buffers bound for extended / prepared / loop, filled per operation;
     * kept across the client's connections (a connection per request allocates nothing) */
    char *onebuf;
    size_t onecap;
    char **one;
    SQLLEN *oneind;
    int onen;
    int prepared; /* SQLPrepare done in this step */
    /* a load step's statement: its parameters' types and values, bound per call (grown) */
    pcol *qp;
    char *qbuf;
    SQLLEN *qind;
    size_t qbufcap;
    int qcap;
    int autocommit_off;
};

/* ---- errors -------------------------------------------------------------------------------------- */

static int fail_odbc(SQLSMALLINT type, SQLHANDLE h, const char *what)
{
    SQLCHAR state[8] = "", msg[2048] = "";
    SQLINTEGER native = 0;
    SQLSMALLINT len = 0;
    SQLRETURN rc = h ? SQLGetDiagRec(type, h, 1, state, &native, msg, sizeof msg, &len) : SQL_ERROR;
    if (SQL_SUCCEEDED(rc))
        return ab_fail("db", (const char *)state, "%s", (const char *)msg);
    return ab_fail("db", NULL, "%s failed", what);
}

#define OK(rc) SQL_SUCCEEDED(rc)

static int configure(const char *key, const char *value)
{
    if (!strcmp(key, "fetch")) {
        char *end;
        long n = strtol(value, &end, 10);
        if (*end || n < 1 || n > 1000000)
            return ab_fail("unsupported", NULL, "c-odbc: fetch must be a row count from 1 to 1000000, not %s", value);
        opt_fetch = (int)n;
        return 0;
    }
    if (!strcmp(key, "batch") && (!strcmp(value, "array") || !strcmp(value, "loop"))) {
        opt_loop = value[0] == 'l';
        return 0;
    }
    return ab_fail("unsupported", NULL, "c-odbc has no setting %s=%s (fetch=N, batch=array|loop)", key, value);
}

static void hello(json_t *a, json_t *s, json_t *caps)
{
    char fetch[96];
    json_object_set_new(a, "driver_version",
                        json_string("unixODBC " AB_UNIXODBC_VERSION "; the ODBC driver's own name and version are in open's answer"));
    json_object_set_new(caps, "batch",
                        json_string(opt_loop ? "autocommit off; SQLExecute once per row; SQLEndTran(COMMIT) per group"
                                             : "autocommit off; one SQLExecute per group with SQL_ATTR_PARAMSET_SIZE = group "
                                               "size (column-wise parameter arrays); SQLEndTran(COMMIT) per group"));
    snprintf(fetch, sizeof fetch, "%d row%s per SQLFetch (SQL_ATTR_ROW_ARRAY_SIZE), columns bound with SQLBindCol", opt_fetch,
             opt_fetch == 1 ? "" : "s");
    json_object_set_new(s, "fetch", json_string(fetch));
    json_object_set_new(s, "batch", json_string(opt_loop ? "loop" : "array"));
    json_object_set_new(s, "postgresql driver", json_string("psqlODBC, Driver={PostgreSQL Unicode}; search_path by pqopt={options='-c search_path=<schema>'}"));
    json_object_set_new(s, "postgresql options", json_string(PG_OPTIONS));
    json_object_set_new(s, "sqlite driver", json_string("SQLite3 ODBC driver, Driver={SQLite3}"));
    json_object_set_new(s, "sqlite options", json_string(SQLITE_OPTIONS));
    json_object_set_new(s, "sqlite connect and disconnect",
                        json_string("serialized by the worker (one process-wide mutex around allocate+connect and "
                                    "disconnect+free, inside the operation's time per request): the SQLite ODBC driver's "
                                    "connection list is unlocked on Linux and concurrent SQLDisconnect crashes"));
    json_object_set_new(s, "mariadb driver", json_string("MariaDB Connector/ODBC, Driver={MariaDB Unicode}; Socket= on the unix path, else Server/Port"));
    json_object_set_new(s, "mariadb options", json_string(MARIADB_OPTIONS));
    json_object_set_new(s, "mariadb statements",
                        json_string("MariaDB Connector/ODBC 3.1 (PrepOnClient=0) sends every statement through the binary "
                                    "protocol: each SQLExecDirect, of an inlined text (literal) or with bound parameters "
                                    "(extended), is COM_STMT_PREPARE + COM_STMT_EXECUTE in one round trip, the statement "
                                    "closed afterwards (server counters: one Com_stmt_prepare and one Com_stmt_execute per "
                                    "operation); so literal on MariaDB is not the text protocol (COM_QUERY), which this "
                                    "driver uses only for statements the server cannot prepare"));
    json_object_set_new(s, "mariadb connect",
                        json_string("the driver itself sends SET SESSION SQL_AUTO_IS_NULL=0, SET autocommit=1, SET "
                                    "session_track_schema=ON and SET session_track_system_variables='autocommit,tx_isolation' "
                                    "at every connect (inside a connect step's or a per-request operation's time)"));
    json_object_set_new(s, "mariadb batch",
                        json_string("array: the driver sends an INSERT's SQL_ATTR_PARAMSET_SIZE rows as one bulk execution "
                                    "(COM_STMT_BULK_EXECUTE) per group"));
    json_object_set_new(s, "tls",
                        json_string("PostgreSQL (psqlODBC): SSLmode=<sslmode> (no sslmode: prefer, libpq's default, "
                                    "since psqlODBC's own, disable, would turn TLS off), and the other keys in "
                                    "pqopt={…}, which psqlODBC hands to libpq: "
                                    "sslrootcert, ssl_min_protocol_version and ssl_max_protocol_version, "
                                    "sslnegotiation, mapped as c-libpq maps them (libpq's own keywords: sslrootcert "
                                    "with verify-ca and verify-full only, a pinned version as both minimum and "
                                    "maximum, sslnegotiation=direct only with libpq 17 or later, else unsupported); "
                                    "MariaDB (Connector/ODBC 3.1 over libmariadb 3.3): disable, prefer or no sslmode "
                                    "→ no TLS key (it asks for no TLS unless a key says so; it has no other off "
                                    "switch), require → FORCETLS=1;SSLVERIFY=0 (encrypted, nothing checked), "
                                    "verify-ca → FORCETLS=1;SSLVERIFY=0;SSLCA=<the CA file> (libmariadb checks the "
                                    "chain whenever it has a CA, the host name only with SSLVERIFY), verify-full → "
                                    "FORCETLS=1;SSLVERIFY=1;SSLCA=<the CA file>, a pinned version → TLSVERSION=<it> "
                                    "(which the driver applies only together with SSLCA: require with a pinned "
                                    "version is unsupported), sslnegotiation unsupported (PostgreSQL's); at open, "
                                    "SHOW SESSION STATUS confirms Ssl_cipher (libmariadb 3.3 drops TLS silently when "
                                    "the server offers none and no host check was asked) and Compression; both "
                                    "drivers make their SSL context and read the CA file per connection, inside "
                                    "connect's time: nothing can be built once and reused; SQLite: no TLS"));
    json_object_set_new(s, "read_only",
                        json_string("endpoint read_only: PostgreSQL pqopt={options='-c default_transaction_read_only=on'} "
                                    "(beside -c search_path=<schema>), in the startup packet; MariaDB InitStmt=" AB_MARIADB_READ_ONLY
                                    " (Connector/ODBC's MYSQL_INIT_COMMAND, run at every connect before its own SETs); "
                                    "SQLite Database=file:<file>?mode=ro (the driver opens with SQLITE_OPEN_URI: the file "
                                    "read-only)"));
    json_object_set_new(s, "compress",
                        json_string("MariaDB: compress → Option=2050 (FLAG_FOUND_ROWS + FLAG_COMPRESSED_PROTO: "
                                    "CLIENT_COMPRESS, zlib), confirmed at open; otherwise Option=2, no compression; "
                                    "PostgreSQL: unsupported (its protocol has none)"));
    json_object_set_new(s, "autocommit", json_string("on, except in batch steps and commit_every groups (off, SQLEndTran)"));
    json_object_set_new(s, "literal", json_string("SQLExecDirect of the text with values inlined (MariaDB: values as MariaDB "
                                                  "literals, backslashes doubled; sent through the binary protocol by the "
                                                  "driver, see mariadb statements)"));
    json_object_set_new(s, "extended", json_string("SQLExecDirect with SQLBindParameter-bound parameters (psqlODBC: unnamed "
                                                   "statement, parsed every time; MariaDB Connector/ODBC: prepared and "
                                                   "executed every time, one round trip)"));
    json_object_set_new(s, "prepared", json_string("SQLPrepare once (inside the first operation), SQLExecute per operation; the statement handle is freed after the step (untimed)"));
    json_object_set_new(s, "parameters", json_string("bound by the parameter's type once per step to one row of buffers, filled per operation: integers SQL_C_SBIGINT/SQL_BIGINT, booleans SQL_C_BIT/SQL_BIT (PostgreSQL) or SQL_C_SBIGINT/SQL_BIGINT 1/0 (MariaDB, SQLite), floats SQL_C_DOUBLE/SQL_DOUBLE, decimals their text as SQL_C_CHAR/SQL_NUMERIC (precision and scale of the longest values; SQLite: SQL_VARCHAR text), text SQL_C_CHAR/SQL_VARCHAR, timestamps SQL_C_TYPE_TIMESTAMP with column size 26 and 6 decimal digits (PostgreSQL, MariaDB: MariaDB Connector/ODBC keeps their microseconds bound so, checked for single rows and parameter arrays) or ISO text (SQLite), dates SQL_C_TYPE_DATE/SQL_TYPE_DATE (SQLite: ISO text), bytes SQL_C_BINARY/SQL_VARBINARY; NULL with its type's C and SQL types"));
    json_object_set_new(s, "reading", json_string("SQLDescribeCol + SQLBindCol per execution (once per step when prepared): integers SQL_C_SBIGINT, floating SQL_C_DOUBLE, numeric SQL_C_CHAR text, character SQL_C_CHAR (UTF-8, LC_CTYPE C.UTF-8), timestamp/date SQL_C_TYPE_TIMESTAMP/DATE, time as text, bit SQL_C_BIT, binary SQL_C_BINARY; MariaDB BIT as binary; MariaDB FLOAT (SQL_REAL) turned into the server's text for it (6 significant digits) read as a double, as the text protocol gives it"));
    json_object_set_new(s, "server_pid", json_string("PostgreSQL: SELECT pg_backend_pid(); MariaDB: " AB_MARIADB_TID_QUERY " (the serving thread); at open (untimed; not on a connection per request)"));
    json_object_set_new(s, "client encoding",
                        json_string("PGCLIENTENCODING=UTF8 in the worker's environment (psqlODBC's application encoding; "
                                    "without it psqlODBC calls setlocale at every connect, which is not thread-safe)"));
    json_object_set_new(s, "pooled", json_string("not built: unixODBC's driver-manager pooling is a process-wide odbcinst.ini switch "
                                                 "(Pooling=Yes in [ODBC]), not a pool of pool_size connections the worker fills"));
    json_object_set_new(s, "odbc pooling", json_string("off: unixODBC pools connections only with Pooling=Yes in odbcinst.ini's [ODBC] section, which accessbench's copy of it does not set"));
}

/* ---- connection ---------------------------------------------------------------------------------- */

/* value for a connection string, always braced ('}' doubled) */
static void put_braced(char **o, const char *v)
{
    *(*o)++ = '{';
    for (; *v; v++) {
        *(*o)++ = *v;
        if (*v == '}')
            *(*o)++ = '}';
    }
    *(*o)++ = '}';
    **o = '\0';
}

/* value for a connection string: braced when it holds special characters */
static void put_value(char **o, const char *v)
{
    if (!strpbrk(v, ";{}=") && v[0] != ' ')
        *o += sprintf(*o, "%s", v);
    else
        put_braced(o, v);
}

/* key=value of a connection string (key with its leading ';'); an absent value is empty */
static void put_pair(char **o, const char *key, const char *v)
{
    *o += sprintf(*o, "%s=", key);
    put_value(o, v ? v : "");
}

static int endpoint_dbms(json_t *ep)
{
    const char *dbms = ab_ep_str(ep, "dbms");
    return dbms && !strcmp(dbms, "sqlite") ? DB_SQLITE : dbms && !strcmp(dbms, "mariadb") ? DB_MARIADB : DB_PG;
}

/* read_only: the driver opens its Database with SQLITE_OPEN_URI, so a file: URI with mode=ro
 * opens it read-only (it has no key of its own for that). The driver reads a value up to the
 * next ';' (no braces), so ';' is escaped too, with the URI's '%', '?' and '#'. */
static void sqlite_ro_uri(char **o, const char *file)
{
    *o += sprintf(*o, "file:%s", file[0] == '/' ? "//" : ""); /* an absolute path after an empty authority */
    for (; *file; file++)
        *o += strchr("%?#;", *file) ? sprintf(*o, "%%%02X", (unsigned char)*file) : sprintf(*o, "%c", *file);
    *o += sprintf(*o, "?mode=ro");
}

static void sqlite_connstr(char *o, json_t *ep)
{
    const char *file = ab_ep_str(ep, "file");
    o += sprintf(o, "Driver={SQLite3};");
    if (ab_ep_read_only(ep) && file) {
        o += sprintf(o, "Database=");
        sqlite_ro_uri(&o, file);
    } else {
        put_pair(&o, "Database", file);
    }
    sprintf(o, ";%s", SQLITE_OPTIONS);
}

/* MariaDB Connector/ODBC's TLS keys (it sets libmariadb's options from them: ma_connection.c):
 * require FORCETLS=1 and SSLVERIFY=0, verify-ca SSLCA and SSLVERIFY=0 (libmariadb checks the
 * chain whenever it has a CA), verify-full SSLCA and SSLVERIFY=1, a pinned version TLSVERSION;
 * disable, prefer and no sslmode: no key (it asks for no TLS unless a key says so). -1 with
 * unsupported for what it cannot do. */
static int mariadb_tls(char **o, const ab_tls *t)
{
    if (ab_my_tls_check(t, "c-odbc (MariaDB Connector/ODBC)"))
        return -1;
    if (!ab_tls_required(t))
        return 0;
    int ca = t->mode != AB_SSL_REQUIRE && t->rootcert;
    if (t->version && !ca)
        return ab_fail("unsupported", NULL, "c-odbc: MariaDB Connector/ODBC 3.1 applies TLSVERSION only together with "
                       "a certificate key such as SSLCA, %s",
                       t->mode == AB_SSL_REQUIRE ? "and SSLCA makes libmariadb check the chain, which require does not "
                                                   "ask: no pinned TLS version with sslmode=require"
                                                 : "and no sslrootcert was given for SSLCA");
    *o += sprintf(*o, "FORCETLS=1;SSLVERIFY=%d;", t->mode == AB_SSL_VERIFY_FULL);
    if (ca) {
        put_pair(o, "SSLCA", t->rootcert);
        *o += sprintf(*o, ";");
    }
    if (t->version && ca)
        *o += sprintf(*o, "TLSVERSION=%s;", t->version);
    return 0;
}

/* as py-pyodbc: the socket file when there is one, else host and port */
static int mariadb_connstr(char *o, json_t *ep)
{
    const char *v;
    char port[32];
    ab_tls tls;
    if (ab_tls_read(ep, &tls))
        return -1;
    o += sprintf(o, "Driver={MariaDB Unicode};");
    if ((v = ab_ep_str(ep, "socket")) && *v) {
        put_pair(&o, "Socket", v);
    } else {
        put_pair(&o, "Server", (v = ab_ep_str(ep, "host")) ? v : "localhost");
        o += sprintf(o, ";Port=%s", ab_ep_port(ep, port, sizeof port) ? port : "3306");
    }
    put_pair(&o, ";Database", ab_ep_str(ep, "database"));
    put_pair(&o, ";Uid", ab_ep_str(ep, "user"));
    if ((v = ab_ep_str(ep, "password")) && *v)
        put_pair(&o, ";Pwd", v);
    o += sprintf(o, ";%s", tls.compress ? MARIADB_OPTIONS_COMPRESSED : MARIADB_OPTIONS);
    if (ab_ep_read_only(ep)) /* the driver's MYSQL_INIT_COMMAND: run first at every connect */
        o += sprintf(o, "InitStmt=%s;", AB_MARIADB_READ_ONLY);
    return mariadb_tls(&o, &tls);
}

/* key='value' of a libpq conninfo text (backslash and quote escaped), appended at o */
static void put_libpq(char **o, const char *key, const char *v)
{
    *o += sprintf(*o, "%s='", key);
    for (; *v; v++) {
        if (*v == '\\' || *v == '\'')
            *(*o)++ = '\\';
        *(*o)++ = *v;
    }
    *(*o)++ = '\'';
    *(*o)++ = ' ';
    **o = '\0';
}

/* psqlODBC: SSLmode is its own keyword; the other TLS keys and the startup options (the schema's
 * search_path, read_only's default_transaction_read_only) go to libpq in pqopt={…}, a libpq
 * conninfo text that psqlODBC hands to PQconnectdbParams. */
static int pg_connstr(char *o, json_t *ep)
{
    const char *v, *kw[AB_PG_TLS_MAX], *val[AB_PG_TLS_MAX];
    char port[32], options[600];
    ab_tls tls;
    size_t cap = 512 + 2 * sizeof options;
    int opts;
    if (ab_tls_read(ep, &tls) || ab_pg_tls_check(&tls, "c-odbc (psqlODBC)") ||
        (opts = ab_ep_pg_options(ep, options, sizeof options)) < 0)
        return -1;
    o += sprintf(o, "Driver={PostgreSQL Unicode};");
    put_pair(&o, "Server", (v = ab_ep_str(ep, "host")) ? v : "localhost");
    put_pair(&o, ";Port", ab_ep_port(ep, port, sizeof port) ? port : "5432");
    put_pair(&o, ";Database", ab_ep_str(ep, "database"));
    put_pair(&o, ";Uid", ab_ep_str(ep, "user"));
    if ((v = ab_ep_str(ep, "password")) && *v) {
        o += sprintf(o, ";Pwd=");
        put_braced(&o, v); /* always braced, so that nothing in it is read as a keyword */
    }
    /* no sslmode: libpq's default, prefer (psqlODBC's own default, disable, would turn TLS off) */
    o += sprintf(o, ";SSLmode=%s;%s", tls.sslmode ? tls.sslmode : "prefer", PG_OPTIONS);
    int n = ab_pg_tls_params(&tls, kw, val);
    for (int k = 0; k < n; k++)
        cap += strlen(kw[k]) + 2 * strlen(val[k]) + 4;
    char *pqopt = malloc(cap), *p = pqopt;
    *p = '\0';
    for (int k = 0; k < n; k++)
        if (strcmp(kw[k], "sslmode")) /* SSLmode above */
            put_libpq(&p, kw[k], val[k]);
    if (opts)
        put_libpq(&p, "options", options);
    if (*pqopt) {
        p[-1] = '\0'; /* the last separating space */
        o += sprintf(o, "pqopt=");
        put_braced(&o, pqopt);
        sprintf(o, ";");
    }
    free(pqopt);
    return 0;
}

/* The connection string of the endpoint; NULL with ab_err set when the driver cannot do what
 * the endpoint's TLS keys ask. */
static char *make_connstr(json_t *ep)
{
    size_t cap = 8192; /* every value at most doubled (braces, '}' escaped), libpq's at most four times */
    const char *keys[] = {"file", "host", "socket", "database", "user", "password", "schema", "sslmode", "sslrootcert"};
    for (size_t k = 0; k < sizeof keys / sizeof *keys; k++) {
        const char *v = ab_ep_str(ep, keys[k]);
        cap += v ? 4 * strlen(v) + 16 : 0;
    }
    char *s = malloc(cap);
    int dbms = endpoint_dbms(ep), rc = 0;
    if (dbms == DB_SQLITE)
        sqlite_connstr(s, ep);
    else if (dbms == DB_MARIADB)
        rc = mariadb_connstr(s, ep);
    else
        rc = pg_connstr(s, ep);
    if (rc) {
        free(s);
        return NULL;
    }
    return s;
}

/* The SQLite3 ODBC driver keeps its connections in a process-wide list that it does not lock
 * on Linux: three clients of a per-request step inside SQLDisconnect at once crashed in
 * libsqlite3odbc.so. Its allocate+connect and disconnect+free are serialized by this mutex
 * (inside the operation's time, where a per-request connection's are); psqlODBC and MariaDB
 * Connector/ODBC connect concurrently. */
static pthread_mutex_t sqlite_dbc_mu = PTHREAD_MUTEX_INITIALIZER;

static void dbc_lock(int dbms)
{
    if (dbms == DB_SQLITE)
        pthread_mutex_lock(&sqlite_dbc_mu);
}

static void dbc_unlock(int dbms)
{
    if (dbms == DB_SQLITE)
        pthread_mutex_unlock(&sqlite_dbc_mu);
}

static int connect_dbc(const char *connstr, int dbms, SQLHDBC *h)
{
    dbc_lock(dbms);
    if (!OK(SQLAllocHandle(SQL_HANDLE_DBC, env, h))) {
        dbc_unlock(dbms);
        return fail_odbc(SQL_HANDLE_ENV, env, "SQLAllocHandle(DBC)");
    }
    SQLRETURN rc = SQLDriverConnect(*h, NULL, (SQLCHAR *)connstr, SQL_NTS, NULL, 0, NULL, SQL_DRIVER_NOPROMPT);
    dbc_unlock(dbms);
    if (!OK(rc)) {
        fail_odbc(SQL_HANDLE_DBC, *h, "SQLDriverConnect");
        dbc_lock(dbms);
        SQLFreeHandle(SQL_HANDLE_DBC, *h);
        dbc_unlock(dbms);
        *h = NULL;
        return -1;
    }
    return 0;
}

static void disconnect_dbc(SQLHDBC h, int dbms)
{
    dbc_lock(dbms);
    SQLDisconnect(h);
    SQLFreeHandle(SQL_HANDLE_DBC, h);
    dbc_unlock(dbms);
}

static int new_stmt(ab_conn *cn)
{
    if (!OK(SQLAllocHandle(SQL_HANDLE_STMT, cn->dbc, &cn->stmt)))
        return fail_odbc(SQL_HANDLE_DBC, cn->dbc, "SQLAllocHandle(STMT)");
    if (!OK(SQLSetStmtAttr(cn->stmt, SQL_ATTR_ROW_ARRAY_SIZE, (SQLPOINTER)(SQLULEN)opt_fetch, 0)) ||
        !OK(SQLSetStmtAttr(cn->stmt, SQL_ATTR_ROWS_FETCHED_PTR, &cn->fetched, 0)))
        return fail_odbc(SQL_HANDLE_STMT, cn->stmt, "SQLSetStmtAttr(ROW_ARRAY_SIZE)");
    return 0;
}

static void make_env(void)
{
    /* character data crosses the API as UTF-8 whatever the caller's locale (setlocale is
     * process-wide and not thread-safe: once, before any client thread runs) */
    if (!setlocale(LC_CTYPE, "C.UTF-8"))
        fprintf(stderr, "abworker-c: no C.UTF-8 locale; multibyte text may not round-trip\n");
    /* psqlODBC takes the application's encoding from PGCLIENTENCODING, or else calls
     * setlocale(LC_CTYPE, "") at every connect and reads the name it returns — which races
     * when several clients connect at once (ThreadSanitizer: another thread's setlocale frees
     * that name) and would undo the C.UTF-8 above. Set before any connection or thread. */
    setenv("PGCLIENTENCODING", "UTF8", 1);
    if (!OK(SQLAllocHandle(SQL_HANDLE_ENV, SQL_NULL_HANDLE, &env))) {
        env = NULL;
        return;
    }
    SQLSetEnvAttr(env, SQL_ATTR_ODBC_VERSION, (SQLPOINTER)SQL_OV_ODBC3, 0);
}

static ab_conn *conn_new(void)
{
    return calloc(1, sizeof(ab_conn));
}

static void close_(ab_conn *cn)
{
    if (cn->stmt)
        SQLFreeHandle(SQL_HANDLE_STMT, cn->stmt);
    cn->stmt = NULL;
    if (cn->dbc)
        disconnect_dbc(cn->dbc, cn->dbms);
    cn->dbc = NULL;
    cn->nrcols = 0;
    cn->prepared = 0;
    cn->autocommit_off = 0;
}

static void conn_free(ab_conn *cn)
{
    if (!cn)
        return;
    close_(cn);
    for (int c = 0; c < cn->nrcols_cap; c++) {
        free(cn->rcols[c].buf);
        free(cn->rcols[c].ind);
    }
    free(cn->rcols);
    free(cn->onebuf);
    free(cn->one);
    free(cn->oneind);
    free(cn->qp);
    free(cn->qbuf);
    free(cn->qind);
    free(cn->connstr);
    free(cn);
}

/* untimed: which backend serves us, and the server's own version text */
static void ask_pg_server(ab_conn *cn, json_t *a)
{
    SQLBIGINT pid = 0;
    char sv[256] = "";
    SQLLEN i1, i2;
    SQLHSTMT stmt = cn->stmt;
    if (OK(SQLExecDirect(stmt, (SQLCHAR *)"SELECT pg_backend_pid(), current_setting('server_version')", SQL_NTS)) &&
        OK(SQLBindCol(stmt, 1, SQL_C_SBIGINT, &pid, 0, &i1)) && OK(SQLBindCol(stmt, 2, SQL_C_CHAR, sv, sizeof sv, &i2)) &&
        OK(SQLFetch(stmt))) {
        cn->backend_pid = pid;
        json_object_set_new(a, "server_pid", json_integer(pid));
        json_object_set_new(a, "server_version", json_string(sv));
    }
    SQLFreeStmt(stmt, SQL_CLOSE);
    SQLFreeStmt(stmt, SQL_UNBIND);
}

/* untimed: the OS thread serving this connection, for the runner's CPU accounting */
static void ask_mariadb_thread(ab_conn *cn, json_t *a)
{
    SQLBIGINT tid = 0;
    SQLLEN i1;
    SQLHSTMT stmt = cn->stmt;
    if (OK(SQLExecDirect(stmt, (SQLCHAR *)AB_MARIADB_TID_QUERY, SQL_NTS)) &&
        OK(SQLBindCol(stmt, 1, SQL_C_SBIGINT, &tid, 0, &i1)) && OK(SQLFetch(stmt))) {
        cn->backend_pid = tid;
        json_object_set_new(a, "server_pid", json_integer(tid));
    }
    SQLFreeStmt(stmt, SQL_CLOSE);
    SQLFreeStmt(stmt, SQL_UNBIND);
}

/* open's answer: the ODBC driver, the server's version and, where it can be asked, its pid */
static void describe_connection(ab_conn *cn, json_t *a)
{
    char name[256] = "", ver[256] = "", dbver[256] = "", both[600];
    SQLSMALLINT len;
    SQLGetInfo(cn->dbc, SQL_DRIVER_NAME, name, sizeof name, &len);
    SQLGetInfo(cn->dbc, SQL_DRIVER_VER, ver, sizeof ver, &len);
    SQLGetInfo(cn->dbc, SQL_DBMS_VER, dbver, sizeof dbver, &len);
    snprintf(both, sizeof both, "%s %s", name, ver);
    json_object_set_new(a, "odbc_driver", json_string(both));
    if (cn->dbms == DB_PG) {
        ask_pg_server(cn, a);
        return;
    }
    if (cn->dbms == DB_MARIADB)
        ask_mariadb_thread(cn, a);
    json_object_set_new(a, "server_version", json_string(dbver));
}

/* MariaDB: the session is encrypted and compressed as the endpoint asked. libmariadb 3.3 under
 * Connector/ODBC drops TLS without a word when the server offers none and the host name is not
 * to be checked (FORCETLS does not refuse), and compression when the server has none: asked of
 * the server once, at open (as the TID is; not on the connections of a connect step or of a
 * connection per request, where it would be a round trip inside the operation's time). */
static int confirm_mariadb_transport(ab_conn *cn, json_t *ep)
{
    ab_tls tls;
    if (ab_tls_read(ep, &tls) || (!ab_tls_required(&tls) && !tls.compress))
        return 0;
    char name[64], value[256];
    SQLLEN i1, i2;
    int encrypted = 0, compressed = 0;
    SQLHSTMT stmt = cn->stmt;
    if (!OK(SQLExecDirect(stmt, (SQLCHAR *)"SHOW SESSION STATUS WHERE Variable_name IN ('Ssl_cipher', 'Compression')",
                          SQL_NTS)) ||
        !OK(SQLBindCol(stmt, 1, SQL_C_CHAR, name, sizeof name, &i1)) ||
        !OK(SQLBindCol(stmt, 2, SQL_C_CHAR, value, sizeof value, &i2))) {
        fail_odbc(SQL_HANDLE_STMT, stmt, "SHOW SESSION STATUS");
        SQLFreeStmt(stmt, SQL_CLOSE);
        SQLFreeStmt(stmt, SQL_UNBIND);
        return -1;
    }
    while (OK(SQLFetch(stmt))) {
        int set = i2 > 0 && value[0] && strcasecmp(value, "OFF");
        if (!strcasecmp(name, "Ssl_cipher"))
            encrypted = set;
        else if (!strcasecmp(name, "Compression"))
            compressed = set;
    }
    SQLFreeStmt(stmt, SQL_CLOSE);
    SQLFreeStmt(stmt, SQL_UNBIND);
    if (ab_tls_required(&tls) && !encrypted)
        return ab_fail("db", NULL, "sslmode=%s: the server offers no TLS, and MariaDB Connector/ODBC connected without "
                       "it", tls.sslmode);
    if (tls.compress && !compressed)
        return ab_fail("db", NULL, "compress: the server did not accept the protocol's compression");
    return 0;
}

static int open_(ab_conn *cn, json_t *ep, json_t *a)
{
    pthread_once(&env_once, make_env);
    if (!env)
        return ab_fail("db", NULL, "SQLAllocHandle(ENV) failed");
    cn->dbms = endpoint_dbms(ep);
    if (!cn->connstr && !(cn->connstr = make_connstr(ep)))
        return -1;
    if (connect_dbc(cn->connstr, cn->dbms, &cn->dbc))
        return -1;
    if (new_stmt(cn)) {
        close_(cn);
        return -1;
    }
    cn->backend_pid = 0;
    if (a && cn->dbms == DB_MARIADB && confirm_mariadb_transport(cn, ep)) {
        close_(cn);
        return -1;
    }
    if (a) /* NULL for a connection per request: nothing is asked beyond the connection itself */
        describe_connection(cn, a);
    return 0;
}

static int64_t server_pid(ab_conn *cn)
{
    return cn->backend_pid;
}

/* ---- transactions ------------------------------------------------------------------------------- */

static int set_autocommit(ab_conn *cn, int on)
{
    if (!OK(SQLSetConnectAttr(cn->dbc, SQL_ATTR_AUTOCOMMIT, (SQLPOINTER)(SQLULEN)(on ? SQL_AUTOCOMMIT_ON : SQL_AUTOCOMMIT_OFF), 0)))
        return fail_odbc(SQL_HANDLE_DBC, cn->dbc, "SQLSetConnectAttr(AUTOCOMMIT)");
    cn->autocommit_off = !on;
    return 0;
}

static int txn_begin(ab_conn *cn, ab_step *st)
{
    (void)cn; /* autocommit is off for the step: the driver begins the transaction itself */
    (void)st;
    return 0;
}

static int txn_commit(ab_conn *cn, ab_step *st)
{
    (void)st;
    if (!OK(SQLEndTran(SQL_HANDLE_DBC, cn->dbc, SQL_COMMIT)))
        return fail_odbc(SQL_HANDLE_DBC, cn->dbc, "SQLEndTran(COMMIT)");
    return 0;
}

/* ---- reading ------------------------------------------------------------------------------------- */

static void rcol_reserve(rcol *c, SQLLEN elem)
{
    size_t need = (size_t)elem * (size_t)opt_fetch;
    if (need > c->cap) {
        free(c->buf);
        c->buf = malloc(need);
        c->cap = need;
    }
    if (!c->ind)
        c->ind = malloc((size_t)opt_fetch * sizeof *c->ind);
    c->elem = elem;
}

/* Describes and binds the result's columns. */
static int bind_result(ab_conn *cn, int nc)
{
    SQLHSTMT stmt = cn->stmt;
    if (nc > cn->nrcols_cap) {
        cn->rcols = realloc(cn->rcols, (size_t)nc * sizeof *cn->rcols);
        memset(cn->rcols + cn->nrcols_cap, 0, (size_t)(nc - cn->nrcols_cap) * sizeof *cn->rcols);
        cn->nrcols_cap = nc;
    }
    int sqlite = cn->dbms == DB_SQLITE;
    for (int c = 0; c < nc; c++) {
        SQLCHAR name[256];
        SQLSMALLINT nlen, type;
        SQLULEN size;
        if (!OK(SQLDescribeCol(stmt, (SQLUSMALLINT)(c + 1), name, sizeof name, &nlen, &type, &size, NULL, NULL)))
            return fail_odbc(SQL_HANDLE_STMT, stmt, "SQLDescribeCol");
        rcol *r = &cn->rcols[c];
        SQLLEN elem;
        switch (type) {
        case SQL_TINYINT:
        case SQL_SMALLINT:
        case SQL_INTEGER:
        case SQL_BIGINT:
            r->kind = R_INT, r->ctype = SQL_C_SBIGINT, elem = sizeof(SQLBIGINT);
            break;
        case SQL_REAL:
            if (cn->dbms == DB_MARIADB) {
                /* the binary protocol's 4-byte FLOAT, as the server's text prints it (6 significant
                 * digits) read as a double, not the float widened. Read as SQL_C_DOUBLE (exactly
                 * the float) all the same: with row arrays MariaDB Connector/ODBC 3.1 steps
                 * through an SQL_C_FLOAT column 8 bytes at a time, past the end of its buffer. */
                r->kind = R_FLOAT4, r->ctype = SQL_C_DOUBLE, elem = sizeof(SQLDOUBLE);
                break;
            }
            /* fall through */
        case SQL_FLOAT:
        case SQL_DOUBLE:
            r->kind = R_FLOAT, r->ctype = SQL_C_DOUBLE, elem = sizeof(SQLDOUBLE);
            break;
        case SQL_NUMERIC:
        case SQL_DECIMAL:
            /* SQLite has no decimal type: a NUMERIC column holds integers or reals */
            r->kind = sqlite ? R_DYN : R_DEC, r->ctype = SQL_C_CHAR;
            elem = (SQLLEN)(size > 0 && size < 4000 ? size + 3 : 4000);
            if (elem < 256)
                elem = 256;
            break;
        case SQL_BIT:
            if (cn->dbms == DB_MARIADB) { /* BIT(1): its byte, as the MariaDB text protocol gives it */
                r->kind = R_BYTES, r->ctype = SQL_C_BINARY, elem = 8;
                break;
            }
            r->kind = R_BIT, r->ctype = SQL_C_BIT, elem = 1;
            break;
        case SQL_TYPE_TIMESTAMP:
        case SQL_TIMESTAMP:
            r->kind = R_TS, r->ctype = SQL_C_TYPE_TIMESTAMP, elem = sizeof(SQL_TIMESTAMP_STRUCT);
            break;
        case SQL_TYPE_DATE:
        case SQL_DATE:
            r->kind = R_DATE, r->ctype = SQL_C_TYPE_DATE, elem = sizeof(SQL_DATE_STRUCT);
            break;
        case SQL_TYPE_TIME:
        case SQL_TIME:
            r->kind = R_TIME, r->ctype = SQL_C_CHAR, elem = 32;
            break;
        case SQL_BINARY:
        case SQL_VARBINARY:
        case SQL_LONGVARBINARY:
            r->kind = R_BYTES, r->ctype = SQL_C_BINARY;
            elem = (SQLLEN)(size > 0 && size <= (1u << 20) && type == SQL_BINARY ? size : (1u << 20));
            break;
        default: /* character data, and whatever else, as UTF-8 text (up to 4 bytes a character) */
            r->kind = R_TEXT, r->ctype = SQL_C_CHAR;
            elem = (SQLLEN)(size > 0 && size <= 65536 ? size * 4 + 1 : 262145);
            if (type == SQL_LONGVARCHAR || type == SQL_WLONGVARCHAR) /* text: its reported size is only MaxLongVarcharSize */
                elem = 262145;
        }
        if (sqlite) {
            /* SQLite types values, not columns, and the driver reports declared types: an
             * expression or untyped column ('varchar', lower case, the driver's default) and a
             * NUMERIC/DECIMAL column (integers or reals) are read as text and typed by their
             * form; declared sizes are not enforced, so text and blobs get room to spare. */
            char tname[64] = "";
            SQLSMALLINT tlen = 0;
            SQLColAttribute(stmt, (SQLUSMALLINT)(c + 1), SQL_DESC_TYPE_NAME, tname, sizeof tname, &tlen, NULL);
            if (!strcmp(tname, "varchar") || !strncasecmp(tname, "NUMERIC", 7) || !strncasecmp(tname, "DECIMAL", 7))
                r->kind = R_DYN, r->ctype = SQL_C_CHAR, elem = 65537;
            else if ((r->ctype == SQL_C_CHAR || r->ctype == SQL_C_BINARY) && elem < 65537)
                elem = 65537;
        }
        /* at most 64 MiB of buffer per column, whatever the fetch size (a longer value than the
         * buffer then holds is reported when it is met) */
        if ((size_t)elem * (size_t)opt_fetch > (64u << 20) && (r->ctype == SQL_C_CHAR || r->ctype == SQL_C_BINARY)) {
            size_t fit = (64u << 20) / (size_t)opt_fetch;
            elem = (SQLLEN)(fit > 65537 ? fit : 65537);
        }
        rcol_reserve(r, elem);
        if (!OK(SQLBindCol(stmt, (SQLUSMALLINT)(c + 1), r->ctype, r->buf, r->elem, r->ind)))
            return fail_odbc(SQL_HANDLE_STMT, stmt, "SQLBindCol");
    }
    cn->nrcols = nc;
    return 0;
}

static int64_t ts_us(const SQL_TIMESTAMP_STRUCT *t)
{
    return ab_us_from_civil(t->year, t->month, t->day, t->hour, t->minute, t->second, (int64_t)(t->fraction / 1000));
}

static int64_t time_text_us(const char *p)
{
    int h = 0, m = 0, s = 0;
    int64_t us = 0;
    int n = 0;
    sscanf(p, "%d:%d:%d%n", &h, &m, &s, &n);
    p += n;
    if (*p == '.') {
        int nd = 0;
        for (p++; *p >= '0' && *p <= '9'; p++)
            if (nd < 6)
                us = us * 10 + (*p - '0'), nd++;
        for (; nd < 6; nd++)
            us *= 10;
    }
    return ((int64_t)h * 3600 + m * 60 + s) * 1000000LL + us;
}

static void decode_dyn(ab_value *v, const char *p, size_t n)
{
    size_t k = *p == '-' || *p == '+';
    int integer = n > k;
    for (; k < n; k++)
        integer &= p[k] >= '0' && p[k] <= '9';
    if (integer) {
        v->type = AB_INT;
        v->u.i = strtoll(p, NULL, 10);
    } else {
        char *end;
        double d = strtod(p, &end);
        if (end == p + n) {
            v->type = AB_FLOAT;
            v->u.f = d;
        } else {
            v->type = AB_TEXT;
            v->u.s.p = p;
            v->u.s.n = n;
        }
    }
}

/* Fetches every row of the open result, decoding each value. */
static int fetch_all(ab_conn *cn, ab_step *st, int64_t *count)
{
    int nc = cn->nrcols;
    int64_t rows = 0;
    SQLRETURN rc;
    while ((rc = SQLFetch(cn->stmt)) != SQL_NO_DATA) {
        if (!OK(rc))
            return fail_odbc(SQL_HANDLE_STMT, cn->stmt, "SQLFetch");
        for (SQLULEN r = 0; r < cn->fetched; r++) {
            ab_value *row = ab_row(st, nc);
            for (int c = 0; c < nc; c++) {
                rcol *col = &cn->rcols[c];
                ab_value *v = &row[c];
                SQLLEN ind = col->ind[r];
                const char *p = col->buf + (size_t)r * (size_t)col->elem;
                if (ind == SQL_NULL_DATA) {
                    v->type = AB_NULL;
                    continue;
                }
                if ((col->ctype == SQL_C_CHAR && (ind < 0 || ind >= col->elem)) ||
                    (col->ctype == SQL_C_BINARY && (ind < 0 || ind > col->elem)))
                    return ab_fail("internal", NULL, "column %d: a value longer than its bound buffer (%ld bytes)", c + 1,
                                   (long)col->elem);
                switch (col->kind) {
                case R_INT:
                    v->type = AB_INT;
                    memcpy(&v->u.i, p, 8);
                    break;
                case R_FLOAT:
                    v->type = AB_FLOAT;
                    memcpy(&v->u.f, p, 8);
                    break;
                case R_FLOAT4: { /* the float's exact value, read as SQL_C_DOUBLE */
                    double f;
                    memcpy(&f, p, sizeof f);
                    v->type = AB_FLOAT;
                    v->u.f = ab_mariadb_float((float)f, AB_MARIADB_NOT_FIXED_DEC);
                    break;
                }
                case R_DEC:
                    v->type = AB_DECIMAL;
                    v->u.s.p = p;
                    v->u.s.n = (size_t)ind;
                    break;
                case R_DYN:
                    decode_dyn(v, p, (size_t)ind);
                    break;
                case R_BIT:
                    v->type = AB_BOOL;
                    v->u.i = *(const unsigned char *)p != 0;
                    break;
                case R_TS:
                    v->type = AB_TIMESTAMP;
                    v->u.i = ts_us((const SQL_TIMESTAMP_STRUCT *)(const void *)p);
                    break;
                case R_DATE: {
                    const SQL_DATE_STRUCT *d = (const void *)p;
                    v->type = AB_DATE;
                    v->u.i = ab_days_from_civil(d->year, d->month, d->day);
                    break;
                }
                case R_TIME:
                    v->type = AB_TIME;
                    v->u.i = time_text_us(p);
                    break;
                case R_BYTES:
                    v->type = AB_BYTES;
                    v->u.s.p = p;
                    v->u.s.n = (size_t)ind;
                    break;
                default:
                    v->type = AB_TEXT;
                    v->u.s.p = p;
                    v->u.s.n = (size_t)ind;
                }
            }
            ab_emit(st, row, nc);
            rows++;
        }
    }
    st->ncols = nc;
    *count = rows;
    return 0;
}

/* After an execution: read the rows (reads), or count the rows changed. */
static int finish(ab_conn *cn, ab_step *st, int reads, int bind_each, int64_t *count)
{
    SQLHSTMT stmt = cn->stmt;
    SQLSMALLINT nc = 0;
    if (!OK(SQLNumResultCols(stmt, &nc)))
        return fail_odbc(SQL_HANDLE_STMT, stmt, "SQLNumResultCols");
    if (nc == 0 || !reads) {
        SQLLEN changed = 0;
        if (!OK(SQLRowCount(stmt, &changed)))
            changed = 0;
        if (nc)
            SQLFreeStmt(stmt, SQL_CLOSE);
        *count = reads ? 0 : changed < 0 ? 0 : changed;
        return 0;
    }
    if ((bind_each || cn->nrcols != nc) && bind_result(cn, nc))
        return -1;
    int rc = fetch_all(cn, st, count);
    SQLFreeStmt(stmt, SQL_CLOSE);
    return rc;
}

/* ---- parameters ---------------------------------------------------------------------------------- */

static int bind_param(ab_conn *cn, int k, char *buf, SQLLEN *ind)
{
    pcol *p = &pcols[k];
    SQLRETURN rc = SQLBindParameter(cn->stmt, (SQLUSMALLINT)(k + 1), SQL_PARAM_INPUT, p->ctype, p->sqltype, p->colsize,
                                    p->digits, buf, p->elem, ind);
    return OK(rc) ? 0 : fail_odbc(SQL_HANDLE_STMT, cn->stmt, "SQLBindParameter");
}

/* Parameter column j's C and SQL types, from its parameter's type (protocol/PROTOCOL.md, Types):
 * booleans SQL_BIT on PostgreSQL and integers 1/0 elsewhere, decimals their text as SQL_NUMERIC,
 * dates SQL_TYPE_DATE, bytes SQL_VARBINARY; SQLite, which has no timestamp, date or decimal
 * type, takes those as text. Sizes from the longest value. */
/* Widens *maxlen, *maxint and *maxscale to fit v (a decimal's digits before and after its point). */
static void measure_param(const ab_param *v, size_t *maxlen, size_t *maxint, size_t *maxscale)
{
    if (v->type == AB_NULL)
        return;
    if (v->len > *maxlen)
        *maxlen = v->len;
    if (v->type == AB_DECIMAL) {
        const char *dot = memchr(v->text, '.', v->len);
        size_t before = (size_t)((dot ? dot : v->text + v->len) - v->text) - (v->text[0] == '-');
        size_t after = dot ? v->len - (size_t)(dot - v->text) - 1 : 0;
        *maxint = before > *maxint ? before : *maxint;
        *maxscale = after > *maxscale ? after : *maxscale;
    }
}

/* p's C and SQL types for values of type t that fit the sizes measure_param found. */
static void type_param(pcol *p, ab_type t, size_t maxlen, size_t maxint, size_t maxscale, int dbms)
{
    int sqlite = dbms == DB_SQLITE;
    memset(p, 0, sizeof *p);
    if (t == AB_INT || (t == AB_BOOL && dbms != DB_PG))
        p->ctype = SQL_C_SBIGINT, p->sqltype = SQL_BIGINT, p->elem = 8, p->colsize = 19;
    else if (t == AB_FLOAT)
        p->ctype = SQL_C_DOUBLE, p->sqltype = SQL_DOUBLE, p->elem = 8, p->colsize = 15;
    else if (t == AB_BOOL)
        p->ctype = SQL_C_BIT, p->sqltype = SQL_BIT, p->elem = 1, p->colsize = 1;
    else if (t == AB_TIMESTAMP && !sqlite)
        p->ctype = SQL_C_TYPE_TIMESTAMP, p->sqltype = SQL_TYPE_TIMESTAMP, p->elem = sizeof(SQL_TIMESTAMP_STRUCT),
        p->colsize = 26, p->digits = 6;
    else if (t == AB_DATE && !sqlite)
        p->ctype = SQL_C_TYPE_DATE, p->sqltype = SQL_TYPE_DATE, p->elem = sizeof(SQL_DATE_STRUCT), p->colsize = 10;
    else if (t == AB_DECIMAL && !sqlite)
        p->ctype = SQL_C_CHAR, p->sqltype = SQL_NUMERIC, p->elem = (SQLLEN)maxlen + 1,
        p->colsize = maxint + maxscale, p->digits = (SQLSMALLINT)maxscale;
    else if (t == AB_BYTES)
        p->ctype = SQL_C_BINARY, p->sqltype = SQL_VARBINARY, p->elem = (SQLLEN)maxlen, p->colsize = maxlen;
    else
        p->ctype = SQL_C_CHAR, p->sqltype = SQL_VARCHAR, p->elem = (SQLLEN)maxlen + 1, p->colsize = maxlen;
}

static void choose_param_type(pcol *p, const ab_step *st, int j, int dbms)
{
    size_t maxlen = 1, maxint = 1, maxscale = 0;
    for (int64_t i = 0; i < st->n; i++)
        measure_param(&st->params[i * st->nparams + j], &maxlen, &maxint, &maxscale);
    type_param(p, st->param_types[j], maxlen, maxint, maxscale, dbms);
}

/* Value v (not NULL) in p's C type at dst; returns its length (the indicator). */
static SQLLEN put_param(const pcol *p, const ab_param *v, char *dst)
{
    switch (p->ctype) {
    case SQL_C_SBIGINT: {
        SQLBIGINT x = v->i;
        memcpy(dst, &x, 8);
        return 8;
    }
    case SQL_C_DOUBLE:
        memcpy(dst, &v->f, 8);
        return 8;
    case SQL_C_BIT:
        *dst = (char)(v->i != 0);
        return 1;
    case SQL_C_TYPE_TIMESTAMP: {
        SQL_TIMESTAMP_STRUCT t;
        ab_civil c;
        ab_civil_from_us(v->i, &c);
        t.year = (SQLSMALLINT)c.year, t.month = (SQLUSMALLINT)c.month, t.day = (SQLUSMALLINT)c.day;
        t.hour = (SQLUSMALLINT)c.hour, t.minute = (SQLUSMALLINT)c.minute, t.second = (SQLUSMALLINT)c.second;
        t.fraction = (SQLUINTEGER)c.micro * 1000;
        memcpy(dst, &t, sizeof t);
        return sizeof t;
    }
    case SQL_C_TYPE_DATE: {
        SQL_DATE_STRUCT d;
        int64_t y;
        unsigned m, day;
        ab_civil_from_days(v->i, &y, &m, &day);
        d.year = (SQLSMALLINT)y, d.month = (SQLUSMALLINT)m, d.day = (SQLUSMALLINT)day;
        memcpy(dst, &d, sizeof d);
        return sizeof d;
    }
    case SQL_C_BINARY:
        memcpy(dst, v->text, v->len);
        return (SQLLEN)v->len;
    default:
        memcpy(dst, v->text, v->len);
        dst[v->len] = '\0';
        return (SQLLEN)v->len;
    }
}

/* Parameter columns: a C type per column from its parameter's type, every row's value laid out. */
static void make_params(ab_step *st)
{
    int k = st->nparams, dbms = endpoint_dbms(st->endpoint);
    pcols = calloc((size_t)(k ? k : 1), sizeof *pcols);
    pcols_n = k;
    for (int j = 0; j < k; j++) {
        pcol *p = &pcols[j];
        choose_param_type(p, st, j, dbms);
        p->all = calloc((size_t)(st->n > 0 ? st->n : 1), (size_t)p->elem);
        p->allind = calloc((size_t)(st->n > 0 ? st->n : 1), sizeof *p->allind);
        for (int64_t i = 0; i < st->n; i++) {
            const ab_param *v = &st->params[i * k + j];
            p->allind[i] = v->type == AB_NULL ? SQL_NULL_DATA : put_param(p, v, p->all + (size_t)i * (size_t)p->elem);
        }
    }
}

/* The connection's one-row buffers for the step's parameter columns (grown, never shrunk). */
static void make_one(ab_conn *cn, ab_step *st)
{
    size_t total = 0;
    for (int j = 0; j < st->nparams; j++)
        total += ((size_t)pcols[j].elem + 15) & ~(size_t)15;
    if (total > cn->onecap) {
        free(cn->onebuf);
        cn->onebuf = calloc(1, total);
        cn->onecap = total;
    }
    if (st->nparams > cn->onen) {
        cn->one = realloc(cn->one, (size_t)st->nparams * sizeof *cn->one);
        cn->oneind = realloc(cn->oneind, (size_t)st->nparams * sizeof *cn->oneind);
        cn->onen = st->nparams;
    }
    size_t off = 0;
    for (int j = 0; j < st->nparams; j++) {
        cn->one[j] = cn->onebuf + off;
        off += ((size_t)pcols[j].elem + 15) & ~(size_t)15;
    }
}

/* Copies row i's values into the bound one-row buffers. */
static inline void fill_one(ab_conn *cn, ab_step *st, int64_t i)
{
    for (int j = 0; j < st->nparams; j++) {
        pcol *p = &pcols[j];
        cn->oneind[j] = p->allind[i];
        if (cn->oneind[j] != SQL_NULL_DATA)
            memcpy(cn->one[j], p->all + (size_t)i * (size_t)p->elem, (size_t)p->elem);
    }
}

/* ---- operations ---------------------------------------------------------------------------------- */

static int exec_direct(ab_conn *cn, const char *sql, size_t len)
{
    SQLRETURN rc = SQLExecDirect(cn->stmt, (SQLCHAR *)sql, (SQLINTEGER)len);
    if (!OK(rc) && rc != SQL_NO_DATA)
        return fail_odbc(SQL_HANDLE_STMT, cn->stmt, "SQLExecDirect");
    return 0;
}

static int execute(ab_conn *cn)
{
    SQLRETURN rc = SQLExecute(cn->stmt);
    if (!OK(rc) && rc != SQL_NO_DATA)
        return fail_odbc(SQL_HANDLE_STMT, cn->stmt, "SQLExecute");
    return 0;
}

static int prepare_once(ab_conn *cn, ab_step *st)
{
    if (cn->prepared)
        return 0;
    if (!OK(SQLPrepare(cn->stmt, (SQLCHAR *)st->sql, SQL_NTS)))
        return fail_odbc(SQL_HANDLE_STMT, cn->stmt, "SQLPrepare");
    cn->prepared = 1;
    return 0;
}

/* batch=loop: one SQLExecute per row of the group */
static int batch_loop(ab_conn *cn, ab_step *st, int64_t first, int64_t last)
{
    for (int64_t r = first; r < last; r++) {
        int64_t changed;
        fill_one(cn, st, r);
        if (execute(cn) || finish(cn, st, 0, 0, &changed))
            return -1;
    }
    return 0;
}

/* batch=array: one SQLExecute of the group's rows as parameter arrays */
static int batch_array(ab_conn *cn, ab_step *st, int64_t first, int64_t last)
{
    /* the shared parameter arrays are only read, by the driver */
    for (int j = 0; j < st->nparams; j++)
        if (bind_param(cn, j, pcols[j].all + (size_t)first * (size_t)pcols[j].elem, &pcols[j].allind[first]))
            return -1;
    if (!OK(SQLSetStmtAttr(cn->stmt, SQL_ATTR_PARAMSET_SIZE, (SQLPOINTER)(SQLULEN)(last - first), 0)))
        return fail_odbc(SQL_HANDLE_STMT, cn->stmt, "SQLSetStmtAttr(PARAMSET_SIZE)");
    int64_t changed;
    return execute(cn) || finish(cn, st, 0, 0, &changed) ? -1 : 0;
}

/* A load step's statement, as extended runs one: each parameter bound by its own type (as
 * choose_param_type binds a column of that type), SQLExecDirect, every row fetched as 'fetch'
 * says and decoded. */
static int load_query(ab_conn *cn, ab_step *st, const char *sql, const ab_param *params, int n, int64_t *count)
{
    if (n > cn->qcap) {
        int cap = n > 2 * cn->qcap ? n : 2 * cn->qcap;
        cn->qp = realloc(cn->qp, (size_t)cap * sizeof *cn->qp);
        cn->qind = realloc(cn->qind, (size_t)cap * sizeof *cn->qind);
        if (!cn->qp || !cn->qind)
            return ab_fail("internal", NULL, "cannot allocate %d parameters", n);
        cn->qcap = cap;
    }
    size_t total = 0;
    for (int j = 0; j < n; j++) {
        size_t maxlen = 1, maxint = 1, maxscale = 0;
        measure_param(&params[j], &maxlen, &maxint, &maxscale);
        type_param(&cn->qp[j], params[j].type, maxlen, maxint, maxscale, cn->dbms);
        total += ((size_t)cn->qp[j].elem + 15) & ~(size_t)15;
    }
    if (total > cn->qbufcap) {
        free(cn->qbuf);
        if (!(cn->qbuf = malloc(total)))
            return ab_fail("internal", NULL, "cannot allocate %zu bytes of parameters", total);
        cn->qbufcap = total;
    }
    if (!OK(SQLFreeStmt(cn->stmt, SQL_RESET_PARAMS)))
        return fail_odbc(SQL_HANDLE_STMT, cn->stmt, "SQLFreeStmt(RESET_PARAMS)");
    char *at = cn->qbuf;
    for (int j = 0; j < n; j++) {
        const pcol *p = &cn->qp[j];
        cn->qind[j] = params[j].type == AB_NULL ? SQL_NULL_DATA : put_param(p, &params[j], at);
        SQLRETURN rc = SQLBindParameter(cn->stmt, (SQLUSMALLINT)(j + 1), SQL_PARAM_INPUT, p->ctype, p->sqltype,
                                        p->colsize, p->digits, at, p->elem, &cn->qind[j]);
        if (!OK(rc))
            return fail_odbc(SQL_HANDLE_STMT, cn->stmt, "SQLBindParameter");
        at += ((size_t)p->elem + 15) & ~(size_t)15;
    }
    if (exec_direct(cn, sql, strlen(sql)))
        return -1;
    return finish(cn, st, 1, 1, count);
}

static int op(ab_conn *cn, ab_step *st, int64_t i, int64_t *count)
{
    switch (st->kind) {
    case K_CONNECT: {
        SQLHDBC h;
        if (connect_dbc(cn->connstr, cn->dbms, &h))
            return -1;
        disconnect_dbc(h, cn->dbms);
        *count = 0;
        return 0;
    }
    case K_SCAN:
        if (exec_direct(cn, st->sql, strlen(st->sql)))
            return -1;
        return finish(cn, st, 1, 1, count);
    case K_EXEC:
        if (st->mode == M_LITERAL) {
            if (exec_direct(cn, st->texts[i], st->text_lens[i]))
                return -1;
            return finish(cn, st, st->fetch, 1, count);
        }
        fill_one(cn, st, i);
        if (st->mode == M_EXTENDED) {
            if (exec_direct(cn, st->sql, strlen(st->sql)))
                return -1;
            return finish(cn, st, st->fetch, 1, count);
        }
        if (prepare_once(cn, st) || execute(cn))
            return -1;
        return finish(cn, st, st->fetch, 0, count);
    case K_BATCH: {
        int64_t first, last;
        ab_batch_group(st, i, &first, &last);
        if (prepare_once(cn, st) || (opt_loop ? batch_loop(cn, st, first, last) : batch_array(cn, st, first, last)) ||
            txn_commit(cn, st))
            return -1;
        *count = last - first;
        return 0;
    }
    }
    return ab_fail("internal", NULL, "unknown step kind");
}

static int step_begin(ab_step *st)
{
    if (st->kind == K_EXEC || st->kind == K_BATCH)
        make_params(st);
    return 0;
}

static int conn_begin(ab_conn *cn, ab_step *st)
{
    cn->prepared = 0;
    cn->nrcols = 0;
    if ((st->kind == K_EXEC && st->mode != M_LITERAL) || (st->kind == K_BATCH && opt_loop)) {
        make_one(cn, st);
        for (int j = 0; j < st->nparams; j++)
            if (bind_param(cn, j, cn->one[j], &cn->oneind[j]))
                return -1;
    }
    if (st->kind == K_BATCH || st->commit_every)
        return set_autocommit(cn, 0);
    return 0;
}

static void recover(ab_conn *cn, ab_step *st)
{
    (void)st;
    if (cn->stmt)
        SQLFreeStmt(cn->stmt, SQL_CLOSE);
    if (cn->dbc && cn->autocommit_off)
        SQLEndTran(SQL_HANDLE_DBC, cn->dbc, SQL_ROLLBACK);
}

static void conn_end(ab_conn *cn, ab_step *st)
{
    (void)st;
    if (cn->dbc && cn->autocommit_off)
        set_autocommit(cn, 1);
    /* a fresh statement handle for the next step: the driver drops what this one prepared */
    if (cn->stmt) {
        SQLFreeHandle(SQL_HANDLE_STMT, cn->stmt);
        cn->stmt = NULL;
        if (cn->dbc && new_stmt(cn))
            fprintf(stderr, "abworker-c: %s\n", ab_err.message);
    }
    cn->nrcols = 0;
    cn->prepared = 0;
}

static void step_end(ab_step *st)
{
    (void)st;
    if (pcols) {
        for (int j = 0; j < pcols_n; j++) {
            free(pcols[j].all);
            free(pcols[j].allind);
        }
        free(pcols);
        pcols = NULL;
        pcols_n = 0;
    }
}

const ab_driver ab_driver_odbc = {
    .base = "c-odbc",
    .driver = "unixODBC",
    .dbms = {"postgresql", "sqlite", "mariadb"},
    .batch_style_default = "parameter arrays",
    .configure = configure,
    .hello = hello,
    .conn_new = conn_new,
    .conn_free = conn_free,
    .open = open_,
    .close = close_,
    .step_begin = step_begin,
    .conn_begin = conn_begin,
    .op = op,
    .txn_begin = txn_begin,
    .txn_commit = txn_commit,
    .recover = recover,
    .conn_end = conn_end,
    .step_end = step_end,
    .server_pid = server_pid,
    .query = load_query,
    .mark = AB_MARK_QMARK,
    .query_words = "as extended: SQLFreeStmt(SQL_RESET_PARAMS), each parameter bound with SQLBindParameter by its own "
                   "type as 'parameters' says (each value as its row decoded it), SQLExecDirect, the rows fetched as "
                   "'fetch' says and decoded as a scan decodes them",
};
