/* c-libmariadb: MariaDB Connector/C (libmariadb), the MariaDB/MySQL C client library.
 *
 * literal: mysql_real_query (text protocol, COM_QUERY); extended: mariadb_stmt_execute_direct
 * (binary protocol, prepared and executed in one round trip, every time); prepared:
 * mysql_stmt_prepare once, mysql_stmt_execute per operation; record: HANDLER statements.
 *
 * Settings (part of the method name): scan=store|use — every statement that returns rows is
 * read with mysql_store_result / mysql_stmt_store_result (the whole result first, the default)
 * or mysql_use_result / unbuffered mysql_stmt_fetch (row by row from the connection). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mysql.h>

#include "driver.h"
#include "tls.h"

#define HANDLER_ROWS 1000        /* records per HANDLER … READ NEXT (record-level scans) */
#define HANDLER_ALIAS "ab_rec"   /* the alias a record step's table is opened as, per connection */
#define BINARY_CHARSET 63        /* charsetnr of binary columns (BLOB, BINARY, VARBINARY) */
#define RESULT_BUF_MIN 64        /* initial bound buffer of a variable-length result column */
#define RESULT_BUF_MAX 65536     /* … at most; a longer value grows it (mysql_stmt_fetch_column) */

static int opt_use;
static pthread_once_t lib_once = PTHREAD_ONCE_INIT;

/* ---- per step, shared by every connection (made in step_begin, only read afterwards) ---------- */

/* A parameter column: its binary-protocol type (from the parameter's type) and every row's
 * value laid out for binding. */
typedef struct {
    enum enum_field_types type; /* LONGLONG, TINY, DOUBLE, DATETIME, DATE, NEWDECIMAL, BLOB or STRING */
    size_t size;                /* values held in `fixed`: bytes per value; 0 for variable-length ones */
    int packed;                 /* bulk arrays of values (TINY, LONGLONG, DOUBLE), not of pointers */
    size_t maxlen;              /* variable-length: the longest value */
    char *fixed;                /* n values of size bytes */
    void **ptr;                 /* n pointers to the values (column-wise arrays of variable types) */
    unsigned long *len;         /* n lengths */
    my_bool *nul;               /* n NULL flags */
    char *ind;                  /* n indicators (STMT_INDICATOR_NULL / NONE), for bulk execution */
} pcol;

static pcol *pcols;
static int pcols_n;
static char *rec_open, *rec_close, *rec_first, *rec_next; /* record steps' HANDLER statements */
static char **rec_keyed;                                     /* … and one keyed READ per operation */
static size_t *rec_keyed_len;

/* ---- a connection ------------------------------------------------------------------------------- */

/* A bound result column (binary protocol). */
typedef struct {
    int kind;          /* R_* below */
    int bytes;         /* variable-length: binary (charsetnr 63) */
    unsigned int decimals; /* FLOAT: declared decimals, or AB_MARIADB_NOT_FIXED_DEC */
    union {
        int64_t i;
        double f;
        float f4;
        MYSQL_TIME tm;
    } v;
    char *buf; /* variable-length columns */
    unsigned long cap, len;
    my_bool nul, err;
} rcol;

enum { R_INT, R_FLOAT4, R_FLOAT, R_DEC, R_VAR, R_DATETIME, R_DATE, R_TIME, R_NULL };

/* A bound parameter's value of a fixed-size type. */
typedef union {
    signed char b;
    int64_t i;
    double f;
    MYSQL_TIME tm;
} pslot;

struct ab_conn {
    MYSQL *m;
    int64_t tid;       /* the serving thread's OS id (TID), asked at open */
    MYSQL_STMT *stmt;  /* prepared / extended / batch: one statement handle per step */
    int prepared;      /* prepared / batch: mysql_stmt_prepare done in this step */
    int handler_open;  /* record: HANDLER … OPEN done */
    /* prepared: the one-row parameter buffers bound once, filled per operation */
    MYSQL_BIND *pbind;
    pslot *pval;
    char **ptext;
    size_t *ptext_cap;
    unsigned long *plen;
    my_bool *pnul;
    int pcap;
    /* result columns, bound for the binary protocol */
    MYSQL_BIND *rbind;
    rcol *rcols;
    int rcap, rn;       /* allocated, bound */
    int result_bound;   /* prepared: bound once per step */
    int kinds_cap;      /* text protocol: per-column kinds of the current result */
    int *kinds;
    /* a load step's statement: its parameters bound per call (grown, never shrunk) */
    MYSQL_BIND *qbind;
    pslot *qval;
    unsigned long *qlen;
    my_bool *qnul;
    int qcap;
};

/* ---- errors ------------------------------------------------------------------------------------- */

static int fail_my(MYSQL *m)
{
    return ab_fail("db", mysql_sqlstate(m), "ERROR %u (%s): %s", mysql_errno(m), mysql_sqlstate(m), mysql_error(m));
}

static int fail_stmt(MYSQL_STMT *s)
{
    return ab_fail("db", mysql_stmt_sqlstate(s), "ERROR %u (%s): %s", mysql_stmt_errno(s), mysql_stmt_sqlstate(s),
                   mysql_stmt_error(s));
}

static int configure(const char *key, const char *value)
{
    if (!strcmp(key, "scan") && (!strcmp(value, "store") || !strcmp(value, "use"))) {
        opt_use = value[0] == 'u';
        return 0;
    }
    return ab_fail("unsupported", NULL, "c-libmariadb has no setting %s=%s (scan=store|use)", key, value);
}

static const char BATCH_STYLE[] =
    "one transaction per group (BEGIN, COMMIT): the INSERT prepared once (mysql_stmt_prepare, in the first group), "
    "then per group one mysql_stmt_execute with column-wise parameter arrays (STMT_ATTR_ARRAY_SIZE = group size): "
    "a single COM_STMT_BULK_EXECUTE";

static void hello(json_t *a, json_t *s, json_t *caps)
{
    char v[160];
    snprintf(v, sizeof v, "Connector/C %s (libmariadb; built against %s)", mysql_get_client_info(),
             MARIADB_PACKAGE_VERSION);
    json_object_set_new(a, "driver_version", json_string(v));
    json_object_set_new(caps, "batch", json_string(BATCH_STYLE));
    json_object_set_new(s, "scan", json_string(opt_use ? "use" : "store"));
    json_object_set_new(s, "reading",
                        json_string(opt_use ? "row by row from the connection: mysql_use_result (text protocol) and unbuffered "
                                              "mysql_stmt_fetch without mysql_stmt_store_result (binary protocol), for every "
                                              "statement that returns rows"
                                            : "the whole result first: mysql_store_result (text protocol) and "
                                              "mysql_stmt_store_result (binary protocol), for every statement that returns rows"));
    json_object_set_new(s, "connect",
                        json_string("mysql_real_connect with client flag CLIENT_FOUND_ROWS (an UPDATE counts the rows it "
                                    "matched), MYSQL_SET_CHARSET_NAME utf8mb4, through the endpoint's unix socket when it "
                                    "has one, else host and port; TLS and compression as the tls and compress settings say; "
                                    "no multi-statements, no automatic reconnect"));
    json_object_set_new(s, "read_only",
                        json_string("endpoint read_only: MYSQL_INIT_COMMAND " AB_MARIADB_READ_ONLY " (mysql_optionsv "
                                    "before mysql_real_connect, which runs it as the connection's first statement, on "
                                    "every connection)"));
    json_object_set_new(s, "tls", json_string(AB_MY_TLS_WORDS));
    json_object_set_new(s, "compress", json_string(AB_MY_COMPRESS_WORDS));
    json_object_set_new(s, "autocommit",
                        json_string("on: the server's default, read from the handshake's status flags; mysql_autocommit(1) "
                                    "only if it were off (as mysqlclient does); BEGIN/COMMIT explicit"));
    json_object_set_new(s, "library",
                        json_string("mysql_library_init once in the process; mysql_thread_init / mysql_thread_end on every "
                                    "client thread of a loaded step"));
    json_object_set_new(s, "literal", json_string("mysql_real_query of the text with values inlined: text protocol (COM_QUERY)"));
    json_object_set_new(s, "extended",
                        json_string("mariadb_stmt_execute_direct on one statement handle per step: COM_STMT_PREPARE and "
                                    "COM_STMT_EXECUTE sent together, the previous operation's statement closed "
                                    "(COM_STMT_CLOSE) first: the binary protocol, prepared and executed every time"));
    json_object_set_new(s, "prepared",
                        json_string("mysql_stmt_prepare once (inside the first operation), parameters bound once to one "
                                    "row of buffers filled per operation, mysql_stmt_execute per operation; "
                                    "mysql_stmt_close after the step (untimed)"));
    json_object_set_new(s, "parameters",
                        json_string("binary protocol, by the parameter's type: integers MYSQL_TYPE_LONGLONG, booleans "
                                    "MYSQL_TYPE_TINY 1/0, floats MYSQL_TYPE_DOUBLE, decimals MYSQL_TYPE_NEWDECIMAL (their "
                                    "text), timestamps MYSQL_TYPE_DATETIME (MYSQL_TIME with microseconds), dates "
                                    "MYSQL_TYPE_DATE (MYSQL_TIME), bytes MYSQL_TYPE_BLOB, text MYSQL_TYPE_STRING, NULL by "
                                    "is_null (bulk: indicators) with its type's buffer type; literal: MariaDB literals "
                                    "(backslashes doubled in strings, floats as 0.1e0, dates '…', bytes X'…')"));
    char rec[400];
    snprintf(rec, sizeof rec,
             "HANDLER table OPEN AS " HANDLER_ALIAS " before the loop (untimed; per request inside the operation); "
             "per operation HANDLER … READ `index` = (key literals), or for a scan READ FIRST then READ NEXT, "
             "LIMIT %d records per round trip, until a short batch; CLOSE after the step (untimed)",
             HANDLER_ROWS);
    json_object_set_new(s, "record", json_string(rec));
    json_object_set_new(s, "decoding",
                        json_string("by field type, text and binary protocol alike: integer types → int64, DOUBLE → double "
                                    "(a binary FLOAT → its text as the server prints it, 6 significant digits or its "
                                    "declared decimals, read as a double: what the text protocol gives), "
                                    "DECIMAL → text, DATETIME/TIMESTAMP → µs, DATE → days, TIME → µs, character "
                                    "columns → text, binary ones (charsetnr 63: BLOB, BINARY, VARBINARY, and BIT) → "
                                    "bytes; BOOLEAN is TINYINT(1): an integer"));
    json_object_set_new(s, "result buffers",
                        json_string("binary protocol: a variable-length column is bound to a buffer of its declared length "
                                    "(64 B to 64 KiB); a longer value grows it and is read with mysql_stmt_fetch_column"));
    json_object_set_new(s, "rows changed", json_string("mysql_affected_rows / mysql_stmt_affected_rows (rows matched: CLIENT_FOUND_ROWS)"));
    json_object_set_new(s, "server_pid",
                        json_string(AB_MARIADB_TID_QUERY " at open "
                                    "(untimed; not on a connection per request)"));
    json_object_set_new(s, "pooled", json_string("not built: libmariadb has no connection pool"));
}

/* ---- connection ---------------------------------------------------------------------------------- */

static void lib_init(void)
{
    if (mysql_library_init(0, NULL, NULL))
        fprintf(stderr, "abworker-c: mysql_library_init failed\n");
}

static void thread_begin(void)
{
    pthread_once(&lib_once, lib_init);
    mysql_thread_init();
}

static void thread_end(void)
{
    mysql_thread_end();
}

/* A new connection to the endpoint, autocommit on; NULL with ab_err set. */
static MYSQL *connect_my(json_t *ep)
{
    ab_tls tls;
    if (ab_tls_read(ep, &tls) || ab_my_tls_check(&tls, "c-libmariadb"))
        return NULL;
    pthread_once(&lib_once, lib_init);
    MYSQL *m = mysql_init(NULL);
    if (!m) {
        ab_fail("internal", NULL, "mysql_init: out of memory");
        return NULL;
    }
    mysql_options(m, MYSQL_SET_CHARSET_NAME, "utf8mb4");
    if (ab_ep_read_only(ep)) /* sent by mysql_real_connect right after the handshake */
        mysql_optionsv(m, MYSQL_INIT_COMMAND, AB_MARIADB_READ_ONLY);
    ab_my_tls_apply(m, &tls);
    const char *socket = ab_ep_str(ep, "socket"), *host = ab_ep_str(ep, "host"), *pw = ab_ep_str(ep, "password");
    char port[32];
    unsigned int portn = ab_ep_port(ep, port, sizeof port) ? (unsigned int)strtoul(port, NULL, 10) : 0;
    if (socket && *socket) { /* the unix socket file: host "localhost" is how libmariadb is told to use it */
        host = "localhost";
        portn = 0;
    } else {
        socket = NULL;
    }
    if (!mysql_real_connect(m, host, ab_ep_str(ep, "user"), pw && *pw ? pw : NULL, ab_ep_str(ep, "database"), portn,
                            socket, CLIENT_FOUND_ROWS)) {
        fail_my(m);
        mysql_close(m);
        return NULL;
    }
    if (ab_my_tls_confirm(m, &tls)) {
        mysql_close(m);
        return NULL;
    }
    unsigned int status = 0;
    mariadb_get_infov(m, MARIADB_CONNECTION_SERVER_STATUS, &status);
    if (!(status & SERVER_STATUS_AUTOCOMMIT) && mysql_autocommit(m, 1)) {
        fail_my(m);
        mysql_close(m);
        return NULL;
    }
    return m;
}

static ab_conn *conn_new(void)
{
    return calloc(1, sizeof(ab_conn));
}

static void close_(ab_conn *c)
{
    if (c->m) /* first: it detaches the statement handle, whose close then sends nothing */
        mysql_close(c->m);
    c->m = NULL;
    if (c->stmt)
        mysql_stmt_close(c->stmt);
    c->stmt = NULL;
    c->prepared = c->handler_open = c->result_bound = 0;
}

static void conn_free(ab_conn *c)
{
    if (!c)
        return;
    close_(c);
    for (int k = 0; k < c->pcap; k++)
        free(c->ptext[k]);
    free(c->pbind);
    free(c->pval);
    free(c->ptext);
    free(c->ptext_cap);
    free(c->plen);
    free(c->pnul);
    for (int k = 0; k < c->rcap; k++)
        free(c->rcols[k].buf);
    free(c->rbind);
    free(c->rcols);
    free(c->kinds);
    free(c->qbind);
    free(c->qval);
    free(c->qlen);
    free(c->qnul);
    free(c);
}

static int open_(ab_conn *c, json_t *ep, json_t *a)
{
    if (!(c->m = connect_my(ep)))
        return -1;
    c->tid = 0;
    if (!a) /* a connection per request: nothing is asked beyond the connection itself */
        return 0;
    /* untimed: the OS thread serving this connection, for the runner's CPU accounting */
    static const char q[] = AB_MARIADB_TID_QUERY;
    if (mysql_real_query(c->m, q, sizeof q - 1)) {
        fail_my(c->m);
        close_(c);
        return -1;
    }
    MYSQL_RES *res = mysql_store_result(c->m);
    MYSQL_ROW row = res ? mysql_fetch_row(res) : NULL;
    if (row && row[0])
        c->tid = strtoll(row[0], NULL, 10);
    mysql_free_result(res);
    if (c->tid)
        json_object_set_new(a, "server_pid", json_integer(c->tid));
    json_object_set_new(a, "server_version", json_string(mysql_get_server_info(c->m)));
    return 0;
}

static int64_t server_pid(ab_conn *c)
{
    return c->tid;
}

static int query(ab_conn *c, const char *sql, size_t len)
{
    return mysql_real_query(c->m, sql, (unsigned long)len) ? fail_my(c->m) : 0;
}

static int txn_begin(ab_conn *c, ab_step *st)
{
    (void)st;
    return query(c, "BEGIN", 5);
}

static int txn_commit(ab_conn *c, ab_step *st)
{
    (void)st;
    return mysql_commit(c->m) ? fail_my(c->m) : 0;
}

/* ---- decoding ------------------------------------------------------------------------------------ */

static inline int64_t parse_int(const char *p, int is_unsigned)
{
    return is_unsigned ? (int64_t)strtoull(p, NULL, 10) : ab_parse_int(p);
}

/* days of 'YYYY-MM-DD', leaving *p after the day */
static int64_t text_days(const char **p)
{
    int64_t y;
    int m, d;
    ab_parse_ymd(p, &y, &m, &d);
    return ab_days_from_civil(y, (unsigned)m, (unsigned)d);
}

static int64_t text_timestamp_us(const char *p)
{
    int64_t days = text_days(&p);
    if (*p == ' ' || *p == 'T')
        p++;
    return days * 86400000000LL + ab_parse_time_us(&p);
}

static int64_t time_us(const MYSQL_TIME *t)
{
    int64_t us = ((int64_t)t->day * 86400 + (int64_t)t->hour * 3600 + t->minute * 60 + t->second) * 1000000LL +
                 (int64_t)t->second_part;
    return t->neg ? -us : us;
}

static int64_t datetime_us(const MYSQL_TIME *t)
{
    return ab_us_from_civil(t->year, t->month, t->day, t->hour, t->minute, t->second, (int64_t)t->second_part);
}

/* What a field decodes as. */
static int field_kind(const MYSQL_FIELD *f)
{
    switch (f->type) {
    case MYSQL_TYPE_TINY:
    case MYSQL_TYPE_SHORT:
    case MYSQL_TYPE_LONG:
    case MYSQL_TYPE_INT24:
    case MYSQL_TYPE_LONGLONG:
    case MYSQL_TYPE_YEAR:
        return R_INT;
    case MYSQL_TYPE_FLOAT:
        return R_FLOAT4;
    case MYSQL_TYPE_DOUBLE:
        return R_FLOAT;
    case MYSQL_TYPE_DECIMAL:
    case MYSQL_TYPE_NEWDECIMAL:
        return R_DEC;
    case MYSQL_TYPE_DATETIME:
    case MYSQL_TYPE_TIMESTAMP:
        return R_DATETIME;
    case MYSQL_TYPE_DATE:
    case MYSQL_TYPE_NEWDATE:
        return R_DATE;
    case MYSQL_TYPE_TIME:
        return R_TIME;
    case MYSQL_TYPE_NULL:
        return R_NULL;
    default: /* strings, blobs, BIT, JSON, ENUM, SET, GEOMETRY */
        return R_VAR;
    }
}

static inline int field_bytes(const MYSQL_FIELD *f)
{
    return f->charsetnr == BINARY_CHARSET || f->type == MYSQL_TYPE_BIT;
}

/* The text protocol: decodes one row (values in place in the row's strings). */
static void decode_text_row(ab_step *st, MYSQL_ROW row, const unsigned long *lens, const MYSQL_FIELD *fields,
                            const int *kinds, int nc)
{
    ab_value *out = ab_row(st, nc);
    for (int c = 0; c < nc; c++) {
        ab_value *v = &out[c];
        const char *p = row[c];
        if (!p) {
            v->type = AB_NULL;
            continue;
        }
        switch (kinds[c]) {
        case R_INT:
            v->type = AB_INT;
            v->u.i = parse_int(p, (fields[c].flags & UNSIGNED_FLAG) != 0);
            break;
        case R_FLOAT4:
        case R_FLOAT:
            v->type = AB_FLOAT;
            v->u.f = strtod(p, NULL);
            break;
        case R_DEC:
            v->type = AB_DECIMAL;
            v->u.s.p = p;
            v->u.s.n = lens[c];
            break;
        case R_DATETIME:
            v->type = AB_TIMESTAMP;
            v->u.i = text_timestamp_us(p);
            break;
        case R_DATE:
            v->type = AB_DATE;
            v->u.i = text_days(&p);
            break;
        case R_TIME:
            v->type = AB_TIME;
            v->u.i = ab_parse_time_us(&p);
            break;
        case R_NULL:
            v->type = AB_NULL;
            break;
        default:
            v->type = field_bytes(&fields[c]) ? AB_BYTES : AB_TEXT;
            v->u.s.p = p;
            v->u.s.n = lens[c];
        }
    }
    ab_emit(st, out, nc);
}

/* After mysql_real_query: reads the rows (reads) or counts the rows changed. */
static int text_result(ab_conn *c, ab_step *st, int reads, int64_t *count)
{
    MYSQL *m = c->m;
    MYSQL_RES *res = opt_use ? mysql_use_result(m) : mysql_store_result(m);
    if (!res) {
        if (mysql_field_count(m))
            return fail_my(m);
        *count = reads ? 0 : (int64_t)mysql_affected_rows(m);
        return 0;
    }
    int nc = (int)mysql_num_fields(res);
    const MYSQL_FIELD *fields = mysql_fetch_fields(res);
    if (nc > c->kinds_cap) {
        c->kinds = realloc(c->kinds, (size_t)nc * sizeof *c->kinds);
        c->kinds_cap = nc;
    }
    for (int k = 0; k < nc; k++)
        c->kinds[k] = field_kind(&fields[k]);
    int64_t rows = 0;
    MYSQL_ROW row;
    while ((row = mysql_fetch_row(res))) {
        if (reads)
            decode_text_row(st, row, mysql_fetch_lengths(res), fields, c->kinds, nc);
        rows++;
    }
    int failed = mysql_errno(m) != 0; /* a row-by-row read can fail half way */
    if (failed)
        fail_my(m);
    mysql_free_result(res);
    if (failed)
        return -1;
    st->ncols = nc;
    *count = reads ? rows : 0;
    return 0;
}

static int text_query(ab_conn *c, ab_step *st, const char *sql, size_t len, int reads, int64_t *count)
{
    return query(c, sql, len) || text_result(c, st, reads, count) ? -1 : 0;
}

/* ---- the binary protocol: results ------------------------------------------------------------------ */

static void rcols_reserve(ab_conn *c, int nc)
{
    if (nc <= c->rcap)
        return;
    c->rbind = realloc(c->rbind, (size_t)nc * sizeof *c->rbind);
    c->rcols = realloc(c->rcols, (size_t)nc * sizeof *c->rcols);
    memset(c->rcols + c->rcap, 0, (size_t)(nc - c->rcap) * sizeof *c->rcols);
    c->rcap = nc;
}

/* Points bind k at rcol k's buffers. */
static void rbind_set(ab_conn *c, int k)
{
    rcol *r = &c->rcols[k];
    MYSQL_BIND *b = &c->rbind[k];
    enum enum_field_types t = b->buffer_type;
    int unsig = b->is_unsigned;
    memset(b, 0, sizeof *b);
    b->buffer_type = t;
    b->is_unsigned = (my_bool)unsig;
    b->is_null = &r->nul;
    b->error = &r->err;
    b->length = &r->len;
    if (r->kind == R_VAR || r->kind == R_DEC) {
        b->buffer = r->buf;
        b->buffer_length = r->cap;
    } else {
        b->buffer = &r->v;
        b->buffer_length = sizeof r->v;
    }
}

/* Binds the statement's result columns by their field types. */
static int bind_result(ab_conn *c)
{
    MYSQL_STMT *s = c->stmt;
    MYSQL_RES *meta = mysql_stmt_result_metadata(s);
    if (!meta)
        return fail_stmt(s);
    int nc = (int)mysql_num_fields(meta);
    const MYSQL_FIELD *fields = mysql_fetch_fields(meta);
    rcols_reserve(c, nc);
    for (int k = 0; k < nc; k++) {
        const MYSQL_FIELD *f = &fields[k];
        rcol *r = &c->rcols[k];
        MYSQL_BIND *b = &c->rbind[k];
        r->kind = field_kind(f);
        r->bytes = field_bytes(f);
        r->decimals = f->decimals;
        b->is_unsigned = (f->flags & UNSIGNED_FLAG) != 0;
        switch (r->kind) {
        case R_INT: b->buffer_type = MYSQL_TYPE_LONGLONG; break;
        case R_FLOAT4: b->buffer_type = MYSQL_TYPE_FLOAT; break;
        case R_FLOAT: b->buffer_type = MYSQL_TYPE_DOUBLE; break;
        case R_DATETIME: b->buffer_type = MYSQL_TYPE_DATETIME; break;
        case R_DATE: b->buffer_type = MYSQL_TYPE_DATE; break;
        case R_TIME: b->buffer_type = MYSQL_TYPE_TIME; break;
        case R_NULL: b->buffer_type = MYSQL_TYPE_NULL; break;
        default: {
            b->buffer_type = r->bytes ? MYSQL_TYPE_BLOB : MYSQL_TYPE_STRING;
            unsigned long want = f->length + 1; /* declared length in bytes (+ the NUL libmariadb adds) */
            if (want < RESULT_BUF_MIN)
                want = RESULT_BUF_MIN;
            if (want > RESULT_BUF_MAX)
                want = RESULT_BUF_MAX;
            if (r->cap < want) {
                free(r->buf);
                r->buf = malloc(want);
                r->cap = want;
            }
        }
        }
        rbind_set(c, k);
    }
    mysql_free_result(meta);
    c->rn = nc;
    if (mysql_stmt_bind_result(s, c->rbind))
        return fail_stmt(s);
    return 0;
}

/* A variable-length value longer than its buffer: grow the buffer and read the value again
 * (the statement's bindings are renewed once the row is complete, so later rows fit). */
static int refetch(ab_conn *c, int k)
{
    rcol *r = &c->rcols[k];
    unsigned long want = r->len + 1;
    char *buf = malloc(want);
    if (!buf)
        return ab_fail("internal", NULL, "cannot allocate %lu bytes for a value", want);
    free(r->buf);
    r->buf = buf;
    r->cap = want;
    rbind_set(c, k);
    return mysql_stmt_fetch_column(c->stmt, &c->rbind[k], (unsigned int)k, 0) ? fail_stmt(c->stmt) : 0;
}

static void decode_bound_row(ab_conn *c, ab_step *st)
{
    int nc = c->rn;
    ab_value *out = ab_row(st, nc);
    for (int k = 0; k < nc; k++) {
        rcol *r = &c->rcols[k];
        ab_value *v = &out[k];
        if (r->nul) {
            v->type = AB_NULL;
            continue;
        }
        switch (r->kind) {
        case R_INT:
            v->type = AB_INT;
            v->u.i = r->v.i;
            break;
        case R_FLOAT4:
            v->type = AB_FLOAT;
            v->u.f = ab_mariadb_float(r->v.f4, r->decimals);
            break;
        case R_FLOAT:
            v->type = AB_FLOAT;
            v->u.f = r->v.f;
            break;
        case R_DEC:
            v->type = AB_DECIMAL;
            v->u.s.p = r->buf;
            v->u.s.n = r->len;
            break;
        case R_DATETIME:
            v->type = AB_TIMESTAMP;
            v->u.i = datetime_us(&r->v.tm);
            break;
        case R_DATE:
            v->type = AB_DATE;
            v->u.i = ab_days_from_civil(r->v.tm.year, r->v.tm.month, r->v.tm.day);
            break;
        case R_TIME:
            v->type = AB_TIME;
            v->u.i = time_us(&r->v.tm);
            break;
        case R_NULL:
            v->type = AB_NULL;
            break;
        default:
            v->type = r->bytes ? AB_BYTES : AB_TEXT;
            v->u.s.p = r->buf;
            v->u.s.n = r->len;
        }
    }
    ab_emit(st, out, nc);
}

/* After an execution: reads the rows (reads) or counts the rows changed. bind_each: bind the
 * result columns now (a statement prepared for this operation), else once per step. */
static int stmt_result(ab_conn *c, ab_step *st, int reads, int bind_each, int64_t *count)
{
    MYSQL_STMT *s = c->stmt;
    int nc = (int)mysql_stmt_field_count(s);
    if (!nc || !reads) {
        *count = reads ? 0 : (int64_t)mysql_stmt_affected_rows(s);
        if (nc)
            mysql_stmt_free_result(s);
        return 0;
    }
    if ((bind_each || !c->result_bound || c->rn != nc) && bind_result(c))
        return -1;
    c->result_bound = 1;
    if (!opt_use && mysql_stmt_store_result(s))
        return fail_stmt(s);
    int64_t rows = 0;
    int rc;
    while ((rc = mysql_stmt_fetch(s)) == 0 || rc == MYSQL_DATA_TRUNCATED) {
        int grown = 0;
        for (int k = 0; k < nc; k++) {
            rcol *r = &c->rcols[k];
            if (!r->nul && (r->kind == R_VAR || r->kind == R_DEC) && r->len > r->cap) {
                if (refetch(c, k)) {
                    mysql_stmt_free_result(s);
                    return -1;
                }
                grown = 1;
            }
        }
        if (grown && mysql_stmt_bind_result(s, c->rbind)) {
            fail_stmt(s);
            mysql_stmt_free_result(s);
            return -1;
        }
        decode_bound_row(c, st);
        rows++;
    }
    if (rc != MYSQL_NO_DATA) {
        fail_stmt(s);
        mysql_stmt_free_result(s);
        return -1;
    }
    mysql_stmt_free_result(s);
    st->ncols = nc;
    *count = rows;
    return 0;
}

/* ---- the binary protocol: parameters ------------------------------------------------------------- */

static void micros_to_time(int64_t us, MYSQL_TIME *t)
{
    ab_civil c;
    ab_civil_from_us(us, &c);
    memset(t, 0, sizeof *t);
    t->year = (unsigned)c.year, t->month = c.month, t->day = c.day;
    t->hour = c.hour, t->minute = c.minute, t->second = c.second, t->second_part = c.micro;
    t->time_type = MYSQL_TIMESTAMP_DATETIME;
}

/* How a parameter of each type is bound (protocol/PROTOCOL.md, Types): booleans TINYINT 1/0,
 * decimals NEWDECIMAL as their text, dates MYSQL_TIME as DATE, bytes BLOB. */
static void choose_param_type(pcol *p, const ab_step *st, int j)
{
    switch (st->param_types[j]) {
    case AB_INT: p->type = MYSQL_TYPE_LONGLONG, p->size = 8, p->packed = 1; break;
    case AB_BOOL: p->type = MYSQL_TYPE_TINY, p->size = 1, p->packed = 1; break;
    case AB_FLOAT: p->type = MYSQL_TYPE_DOUBLE, p->size = 8, p->packed = 1; break;
    case AB_TIMESTAMP: p->type = MYSQL_TYPE_DATETIME, p->size = sizeof(MYSQL_TIME); break;
    case AB_DATE: p->type = MYSQL_TYPE_DATE, p->size = sizeof(MYSQL_TIME); break;
    case AB_DECIMAL: p->type = MYSQL_TYPE_NEWDECIMAL; break;
    case AB_BYTES: p->type = MYSQL_TYPE_BLOB; break;
    default: p->type = MYSQL_TYPE_STRING;
    }
    for (int64_t i = 0; i < st->n; i++) {
        const ab_param *v = &st->params[i * st->nparams + j];
        if (v->type != AB_NULL && v->len > p->maxlen)
            p->maxlen = v->len;
    }
}

/* Row i's value v of column p, laid out for binding. */
static void put_param(pcol *p, const ab_param *v, int64_t i)
{
    if (v->type == AB_NULL) {
        p->nul[i] = 1;
        p->ind[i] = STMT_INDICATOR_NULL;
        p->ptr[i] = p->size ? (void *)(p->fixed + (size_t)i * p->size) : (void *)""; /* never read */
        return;
    }
    p->ind[i] = STMT_INDICATOR_NONE;
    if (!p->size) { /* text, decimal text, bytes: in place */
        p->ptr[i] = (void *)v->text;
        p->len[i] = (unsigned long)v->len;
        return;
    }
    void *dst = p->fixed + (size_t)i * p->size;
    p->ptr[i] = dst;
    p->len[i] = (unsigned long)p->size;
    switch (p->type) {
    case MYSQL_TYPE_TINY: *(signed char *)dst = (signed char)(v->i != 0); break;
    case MYSQL_TYPE_LONGLONG: memcpy(dst, &v->i, 8); break;
    case MYSQL_TYPE_DOUBLE: memcpy(dst, &v->f, 8); break;
    case MYSQL_TYPE_DATE:
        micros_to_time(v->i * 86400000000LL, dst);
        ((MYSQL_TIME *)dst)->time_type = MYSQL_TIMESTAMP_DATE;
        break;
    default: micros_to_time(v->i, dst);
    }
}

/* Parameter columns: a binary-protocol type per column from its parameter's type, every row's
 * value laid out (before the clock). */
static void make_params(ab_step *st)
{
    int k = st->nparams;
    int64_t n = st->n > 0 ? st->n : 1;
    pcols = calloc((size_t)(k ? k : 1), sizeof *pcols);
    pcols_n = k;
    for (int j = 0; j < k; j++) {
        pcol *p = &pcols[j];
        choose_param_type(p, st, j);
        p->ptr = calloc((size_t)n, sizeof *p->ptr);
        p->len = calloc((size_t)n, sizeof *p->len);
        p->nul = calloc((size_t)n, sizeof *p->nul);
        p->ind = calloc((size_t)n, sizeof *p->ind);
        p->fixed = p->size ? calloc((size_t)n, p->size) : NULL;
        for (int64_t i = 0; i < st->n; i++)
            put_param(p, &st->params[i * k + j], i);
    }
}

/* Bind j for row i of the shared parameter arrays (extended: bound per operation). */
static void bind_shared(MYSQL_BIND *b, const pcol *p, int64_t i)
{
    memset(b, 0, sizeof *b);
    b->buffer_type = p->type;
    b->buffer = p->ptr[i];
    b->buffer_length = p->len[i];
    b->length = &p->len[i];
    b->is_null = &p->nul[i];
}

/* Binds the connection's one-row buffers (prepared: once per step). */
static int bind_one(ab_conn *c, ab_step *st)
{
    int k = st->nparams;
    if (k > c->pcap) {
        c->pbind = realloc(c->pbind, (size_t)k * sizeof *c->pbind);
        c->pval = realloc(c->pval, (size_t)k * sizeof *c->pval);
        c->ptext = realloc(c->ptext, (size_t)k * sizeof *c->ptext);
        c->ptext_cap = realloc(c->ptext_cap, (size_t)k * sizeof *c->ptext_cap);
        c->plen = realloc(c->plen, (size_t)k * sizeof *c->plen);
        c->pnul = realloc(c->pnul, (size_t)k * sizeof *c->pnul);
        for (int j = c->pcap; j < k; j++)
            c->ptext[j] = NULL, c->ptext_cap[j] = 0;
        c->pcap = k;
    }
    for (int j = 0; j < k; j++) {
        const pcol *p = &pcols[j];
        MYSQL_BIND *b = &c->pbind[j];
        memset(b, 0, sizeof *b);
        b->buffer_type = p->type;
        b->length = &c->plen[j];
        b->is_null = &c->pnul[j];
        if (!p->size) {
            if (c->ptext_cap[j] < p->maxlen + 1) {
                free(c->ptext[j]);
                c->ptext[j] = malloc(p->maxlen + 1);
                c->ptext_cap[j] = p->maxlen + 1;
            }
            b->buffer = c->ptext[j];
            b->buffer_length = (unsigned long)c->ptext_cap[j];
        } else {
            b->buffer = &c->pval[j];
            b->buffer_length = sizeof c->pval[j];
        }
    }
    return k && mysql_stmt_bind_param(c->stmt, c->pbind) ? fail_stmt(c->stmt) : 0;
}

/* Copies row i's values into the bound one-row buffers. */
static inline void fill_one(ab_conn *c, ab_step *st, int64_t i)
{
    for (int j = 0; j < st->nparams; j++) {
        const pcol *p = &pcols[j];
        c->pnul[j] = p->nul[i];
        c->plen[j] = p->len[i];
        if (!p->nul[i])
            memcpy(p->size ? (void *)&c->pval[j] : (void *)c->ptext[j], p->ptr[i], p->len[i]);
    }
}

/* ---- operations ---------------------------------------------------------------------------------- */

static int prepare_once(ab_conn *c, ab_step *st)
{
    if (c->prepared)
        return 0;
    if (mysql_stmt_prepare(c->stmt, st->sql, (unsigned long)strlen(st->sql)))
        return fail_stmt(c->stmt);
    c->prepared = 1;
    return st->kind == K_BATCH ? 0 : bind_one(c, st);
}

/* extended: prepared and executed in one round trip, every time (the handle's previous
 * statement is closed when its parameter count is set) */
static int execute_direct(ab_conn *c, ab_step *st, int64_t i)
{
    MYSQL_STMT *s = c->stmt;
    unsigned int k = (unsigned int)st->nparams;
    if (mysql_stmt_attr_set(s, STMT_ATTR_PREBIND_PARAMS, &k))
        return fail_stmt(s);
    if (k) {
        MYSQL_BIND b[k];
        for (unsigned int j = 0; j < k; j++)
            bind_shared(&b[j], &pcols[j], i);
        if (mysql_stmt_bind_param(s, b))
            return fail_stmt(s);
    }
    if (mariadb_stmt_execute_direct(s, st->sql, strlen(st->sql)))
        return fail_stmt(s);
    return 0;
}

/* batch: one bulk execution of rows first … last-1 (column-wise arrays) */
static int execute_bulk(ab_conn *c, ab_step *st, int64_t first, int64_t last)
{
    MYSQL_STMT *s = c->stmt;
    int k = st->nparams;
    unsigned int size = (unsigned int)(last - first);
    if (mysql_stmt_attr_set(s, STMT_ATTR_ARRAY_SIZE, &size))
        return fail_stmt(s);
    if (k) {
        MYSQL_BIND b[k];
        for (int j = 0; j < k; j++) {
            const pcol *p = &pcols[j];
            memset(&b[j], 0, sizeof b[j]);
            b[j].buffer_type = p->type;
            /* fixed-size values as arrays of values, the others as arrays of pointers */
            b[j].buffer = p->packed ? (void *)(p->fixed + (size_t)first * p->size) : (void *)&p->ptr[first];
            b[j].length = &p->len[first];
            b[j].u.indicator = &p->ind[first];
        }
        if (mysql_stmt_bind_param(s, b))
            return fail_stmt(s);
    }
    if (mysql_stmt_execute(s))
        return fail_stmt(s);
    return 0;
}

/* A load step's parameter v bound at b as choose_param_type binds its type (a NULL: is_null,
 * MYSQL_TYPE_NULL); fixed-size values in *slot, the others in place. */
static void bind_value(MYSQL_BIND *b, const ab_param *v, pslot *slot, unsigned long *len, my_bool *nul)
{
    memset(b, 0, sizeof *b);
    b->length = len;
    b->is_null = nul;
    *nul = v->type == AB_NULL;
    *len = 0;
    switch (v->type) {
    case AB_NULL: b->buffer_type = MYSQL_TYPE_NULL; return;
    case AB_INT: b->buffer_type = MYSQL_TYPE_LONGLONG, slot->i = v->i, *len = 8; break;
    case AB_BOOL: b->buffer_type = MYSQL_TYPE_TINY, slot->b = (signed char)(v->i != 0), *len = 1; break;
    case AB_FLOAT: b->buffer_type = MYSQL_TYPE_DOUBLE, slot->f = v->f, *len = 8; break;
    case AB_TIMESTAMP:
        b->buffer_type = MYSQL_TYPE_DATETIME, *len = sizeof(MYSQL_TIME);
        micros_to_time(v->i, &slot->tm);
        break;
    case AB_DATE:
        b->buffer_type = MYSQL_TYPE_DATE, *len = sizeof(MYSQL_TIME);
        micros_to_time(v->i * 86400000000LL, &slot->tm);
        slot->tm.time_type = MYSQL_TIMESTAMP_DATE;
        break;
    default: /* decimal text, bytes, text: in place */
        b->buffer_type = v->type == AB_DECIMAL ? MYSQL_TYPE_NEWDECIMAL : v->type == AB_BYTES ? MYSQL_TYPE_BLOB
                                                                                           : MYSQL_TYPE_STRING;
        b->buffer = (void *)v->text;
        b->buffer_length = *len = (unsigned long)v->len;
        return;
    }
    b->buffer = slot;
    b->buffer_length = *len;
}

/* A load step's statement, as extended runs one: its parameters bound, then
 * mariadb_stmt_execute_direct (prepared and executed in one round trip, the handle's previous
 * statement closed), every row read as 'reading' says and decoded. */
static int load_query(ab_conn *c, ab_step *st, const char *sql, const ab_param *params, int n, int64_t *count)
{
    MYSQL_STMT *s = c->stmt;
    unsigned int k = (unsigned int)n;
    if (n > c->qcap) {
        int cap = n > 2 * c->qcap ? n : 2 * c->qcap;
        c->qbind = realloc(c->qbind, (size_t)cap * sizeof *c->qbind);
        c->qval = realloc(c->qval, (size_t)cap * sizeof *c->qval);
        c->qlen = realloc(c->qlen, (size_t)cap * sizeof *c->qlen);
        c->qnul = realloc(c->qnul, (size_t)cap * sizeof *c->qnul);
        if (!c->qbind || !c->qval || !c->qlen || !c->qnul)
            return ab_fail("internal", NULL, "cannot allocate %d parameters", n);
        c->qcap = cap;
    }
    for (int j = 0; j < n; j++)
        bind_value(&c->qbind[j], &params[j], &c->qval[j], &c->qlen[j], &c->qnul[j]);
    if (mysql_stmt_attr_set(s, STMT_ATTR_PREBIND_PARAMS, &k))
        return fail_stmt(s);
    if (k && mysql_stmt_bind_param(s, c->qbind))
        return fail_stmt(s);
    if (mariadb_stmt_execute_direct(s, sql, strlen(sql)))
        return fail_stmt(s);
    return stmt_result(c, st, 1, 1, count);
}

static int record_scan(ab_conn *c, ab_step *st, int64_t *count)
{
    int64_t rows = 0, got;
    const char *sql = rec_first;
    do {
        if (text_query(c, st, sql, strlen(sql), 1, &got))
            return -1;
        rows += got;
        sql = rec_next;
    } while (got == HANDLER_ROWS);
    *count = rows;
    return 0;
}

static int op(ab_conn *c, ab_step *st, int64_t i, int64_t *count)
{
    switch (st->kind) {
    case K_CONNECT: {
        MYSQL *m = connect_my(st->endpoint);
        if (!m)
            return -1;
        mysql_close(m);
        *count = 0;
        return 0;
    }
    case K_SCAN:
        if (st->mode == M_RECORD)
            return record_scan(c, st, count);
        return text_query(c, st, st->sql, strlen(st->sql), 1, count);
    case K_EXEC:
        switch (st->mode) {
        case M_LITERAL:
            return text_query(c, st, st->texts[i], st->text_lens[i], st->fetch, count);
        case M_RECORD:
            return text_query(c, st, rec_keyed[i], rec_keyed_len[i], st->fetch, count);
        case M_EXTENDED:
            return execute_direct(c, st, i) || stmt_result(c, st, st->fetch, 1, count) ? -1 : 0;
        default:
            if (prepare_once(c, st))
                return -1;
            fill_one(c, st, i);
            if (mysql_stmt_execute(c->stmt))
                return fail_stmt(c->stmt);
            return stmt_result(c, st, st->fetch, 0, count);
        }
    case K_BATCH: {
        int64_t first, last;
        ab_batch_group(st, i, &first, &last);
        if (query(c, "BEGIN", 5) || prepare_once(c, st) || execute_bulk(c, st, first, last) ||
            txn_commit(c, st))
            return -1;
        *count = last - first;
        return 0;
    }
    }
    return ab_fail("internal", NULL, "unknown step kind");
}

/* ---- steps --------------------------------------------------------------------------------------- */

static char *strdupf(const char *fmt, const char *a, const char *b)
{
    size_t n = strlen(fmt) + strlen(a) + (b ? strlen(b) : 0) + 1;
    char *s = malloc(n);
    snprintf(s, n, fmt, a, b ? b : "");
    return s;
}

static int step_begin(ab_step *st)
{
    if (st->mode == M_RECORD) {
        char limit[32];
        snprintf(limit, sizeof limit, "%d", HANDLER_ROWS);
        rec_open = strdupf("HANDLER %s OPEN AS " HANDLER_ALIAS "%s", st->record_table, NULL);
        rec_close = strdupf("HANDLER " HANDLER_ALIAS " CLOSE%s%s", "", NULL);
        rec_first = strdupf("HANDLER " HANDLER_ALIAS " READ FIRST LIMIT %s%s", limit, NULL);
        rec_next = strdupf("HANDLER " HANDLER_ALIAS " READ NEXT LIMIT %s%s", limit, NULL);
        if (st->kind == K_EXEC) { /* HANDLER … READ `index` = (key): rendered before the clock */
            rec_keyed = ab_arena_alloc(st->arena, (size_t)(st->n + 1) * sizeof *rec_keyed);
            rec_keyed_len = ab_arena_alloc(st->arena, (size_t)(st->n + 1) * sizeof *rec_keyed_len);
            size_t head = strlen("HANDLER " HANDLER_ALIAS " READ `` = ()") + strlen(st->record_index);
            for (int64_t i = 0; i < st->n; i++) {
                size_t cap = head + st->text_lens[i] + 1;
                rec_keyed[i] = ab_arena_alloc(st->arena, cap);
                rec_keyed_len[i] = (size_t)snprintf(rec_keyed[i], cap, "HANDLER " HANDLER_ALIAS " READ `%s` = (%s)",
                                                    st->record_index, st->texts[i]);
            }
        }
        return 0;
    }
    if (st->kind == K_EXEC || st->kind == K_BATCH)
        make_params(st);
    return 0;
}

static int conn_begin(ab_conn *c, ab_step *st)
{
    c->prepared = c->result_bound = 0;
    if (st->mode == M_RECORD) { /* the table opened for record-level reads */
        if (query(c, rec_open, strlen(rec_open)))
            return -1;
        c->handler_open = 1;
        return 0;
    }
    if ((st->kind == K_EXEC && st->mode != M_LITERAL) || st->kind == K_BATCH || st->kind == K_LOAD) {
        if (!c->stmt && !(c->stmt = mysql_stmt_init(c->m)))
            return fail_my(c->m);
    }
    return 0;
}

static void recover(ab_conn *c, ab_step *st)
{
    (void)st;
    if (!c->m)
        return;
    if (c->stmt)
        mysql_stmt_free_result(c->stmt);
    unsigned int status = 0;
    mariadb_get_infov(c->m, MARIADB_CONNECTION_SERVER_STATUS, &status);
    if (status & SERVER_STATUS_IN_TRANS)
        mysql_rollback(c->m);
}

static void conn_end(ab_conn *c, ab_step *st)
{
    (void)st;
    if (c->handler_open && c->m && query(c, rec_close, strlen(rec_close)))
        fprintf(stderr, "abworker-c: %s: %s\n", rec_close, ab_err.message);
    c->handler_open = 0;
    if (c->stmt) /* untimed: the server drops what the step prepared */
        mysql_stmt_close(c->stmt);
    c->stmt = NULL;
    c->prepared = c->result_bound = 0;
}

static void step_end(ab_step *st)
{
    (void)st;
    for (int j = 0; pcols && j < pcols_n; j++) {
        free(pcols[j].fixed);
        free(pcols[j].ptr);
        free(pcols[j].len);
        free(pcols[j].nul);
        free(pcols[j].ind);
    }
    free(pcols);
    pcols = NULL;
    pcols_n = 0;
    free(rec_open);
    free(rec_close);
    free(rec_first);
    free(rec_next);
    rec_open = rec_close = rec_first = rec_next = NULL;
    rec_keyed = NULL; /* in the step's arena */
    rec_keyed_len = NULL;
}

const ab_driver ab_driver_libmariadb = {
    .base = "c-libmariadb",
    .driver = "libmariadb (MariaDB Connector/C)",
    .dbms = {"mariadb", NULL},
    .batch_style_default = BATCH_STYLE,
    .record = 1,
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
    .thread_begin = thread_begin,
    .thread_end = thread_end,
    .query = load_query,
    .mark = AB_MARK_QMARK,
    .query_words = "as extended: parameters bound as 'parameters' says (each value as its row decoded it), "
                   "mariadb_stmt_execute_direct on the step's statement handle (COM_STMT_PREPARE and COM_STMT_EXECUTE "
                   "together, the previous statement closed first), the rows read as 'reading' says and decoded as the "
                   "binary protocol's 'decoding' says (what a scan's text protocol gives)",
};
