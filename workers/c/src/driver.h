/* One interface for every C driver: the message loop (main.c) parses a step, generates its
 * parameters, then calls step_begin (untimed, once per step), conn_begin (untimed, once per
 * connection the step runs on), op once per operation (timed or verified), conn_end and
 * step_end (untimed). A load step's operation is the host's (assoc.c: the strategies, the
 * entities kept once), which calls the driver's query for each statement it sends. A loaded step (load.c) runs one client per thread, each on its own
 * ab_conn: everything a connection touches while it runs lives in its ab_conn, and what
 * step_begin makes is only read from then on. */
#ifndef AB_DRIVER_H
#define AB_DRIVER_H

#include <stdint.h>

#include <jansson.h>

#include "protocol.h"

enum { K_CONNECT, K_SCAN, K_EXEC, K_BATCH, K_LOAD };
enum { M_NONE, M_LITERAL, M_EXTENDED, M_PREPARED, M_RECORD };

/* ---- errors ------------------------------------------------------------------------------ */

typedef struct {
    const char *kind; /* "db", "unsupported", "protocol", "internal" */
    char message[2048];
    char sqlstate[64];
} ab_error;

/* per thread: each client of a loaded step records its own error */
extern _Thread_local ab_error ab_err;

/* Records an error and returns -1. sqlstate may be NULL. */
int ab_fail(const char *kind, const char *sqlstate, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* ---- rows -------------------------------------------------------------------------------- */

typedef struct ab_sink {
    ab_checksum sum;
    int width;      /* columns of the first row seen */
    int64_t values; /* values of every row seen (a load's entities are rows of several widths) */
    /* with the step's dump: the first dump_max rows read, as typed values (NULL: no dump) */
    json_t *dump;
    int64_t dump_max;
} ab_sink;

/* A growable byte buffer for decoded values (bytea hex, numeric text). */
typedef struct {
    char *p;
    size_t len, cap;
} ab_buf;

void ab_buf_reserve(ab_buf *b, size_t n);

/* ---- one step ---------------------------------------------------------------------------- */

/* What a step's statement does (PROTOCOL.md, `shape`), worked out by the runner and sent with
 * every step that has sql, so that no worker parses SQL: a select, insert, update or delete of
 * one table, the columns it reads (select), writes (insert) or sets (update) and those its
 * where compares with a marker, in marker order. kind is NULL when the step's shape is null.
 * The names point into the step message. */
typedef struct {
    const char *kind; /* "select", "insert", "update", "delete"; NULL: no plain shape */
    const char *table;
    const char **columns;
    int ncolumns;
    const char **where;
    int nwhere;
} ab_shape;

/* A load step's association (assoc.c): what the message's `load` says, read once per step. */
typedef struct ab_assoc_spec ab_assoc_spec;
/* One client's state while it loads (entities seen, keys to bind, statements sent). */
typedef struct ab_assoc_run ab_assoc_run;

typedef struct {
    int kind, mode;
    const char *sql;      /* neutral form ('?' markers); NULL for connect */
    ab_shape shape;       /* what sql does (a batch=copy takes its table and columns from it) */
    const size_t *marks;  /* byte offsets of the markers in sql */
    int nparams;          /* markers = parameters per row */
    int64_t n;            /* iterations: rows for batch, operations otherwise */
    int64_t batch;        /* rows per group (batch) */
    int64_t nops;         /* operations: n, or groups for batch */
    int64_t commit_every; /* exec: operations per transaction, 0 = autocommit */
    int fetch;            /* the statement returns rows to read */
    int verify;
    int64_t dump;         /* verification: rows to answer as typed values (0: none) */
    int size;             /* verification: also answer result_bytes, where the driver can tell */
    const ab_param *params; /* n rows × nparams, generated before the clock */
    const ab_type *param_types; /* nparams: each parameter's type (its generator's), NULLs' too */
    char **texts;           /* literal mode: n statements with values inlined; record mode (exec):
                               n keys, the key's values as literals separated by ", " */
    size_t *text_lens;
    const char *record_table; /* record mode: the table read without SQL */
    const char *record_index; /* record mode, exec: the index whose key the params are */
    json_t *endpoint;
    ab_arena *arena;  /* the step's memory, for anything a driver prepares before the clock */
    ab_sink *sink;    /* verification: every decoded row goes here; NULL when timed */
    int ncols;        /* set by the driver: columns of the rows it read */
    ab_value *row;    /* a row buffer of rowcap values, allocated before the loop */
    int rowcap;
    const ab_assoc_spec *assoc_spec; /* load: the association, shared by every client */
    ab_assoc_run *assoc;             /* load: this client's state (each client's copy its own) */
} ab_step;

/* The step reads rows (a scan, or an exec step with fetch): its answers count values. */
static inline int ab_step_reads(const ab_step *st)
{
    return st->fetch && (st->kind == K_SCAN || st->kind == K_EXEC);
}

/* Batch operation i writes rows first … last−1: one group of st->batch rows (the last group
 * may be shorter). */
static inline void ab_batch_group(const ab_step *st, int64_t i, int64_t *first, int64_t *last)
{
    *first = i * st->batch;
    *last = *first + st->batch < st->n ? *first + st->batch : st->n;
}

/* Grows st's row buffer to at least ncols values. */
ab_value *ab_row_grow(ab_step *st, int ncols);

/* The row buffer with room for ncols values (grows only if a result is wider than any
 * before). */
static inline ab_value *ab_row(ab_step *st, int ncols)
{
    return ncols <= st->rowcap ? st->row : ab_row_grow(st, ncols);
}

/* Hands one row to the verification sink (no-op when timed): the checksum, and while fewer
 * than dump_max rows are dumped, the same values typed. */
static inline void ab_sink_row(ab_step *st, const ab_value *row, int ncols)
{
    st->ncols = ncols;
    ab_sink *s = st->sink;
    if (s) {
        if (!s->sum.rows)
            s->width = ncols;
        s->values += ncols;
        if (s->dump && (int64_t)s->sum.rows < s->dump_max)
            json_array_append_new(s->dump, ab_row_json(row, ncols));
        ab_checksum_add(&s->sum, row, ncols);
    }
}

/* A row a load step's statement read (assoc.c): split into its entities, each kept once. */
void ab_assoc_row(ab_step *st, const ab_value *row, int ncols);

/* Every row a driver decodes comes here: a load step's to its entities (each new one then to
 * the sink), any other step's to the sink. */
static inline void ab_emit(ab_step *st, const ab_value *row, int ncols)
{
    if (st->kind == K_LOAD)
        ab_assoc_row(st, row, ncols);
    else
        ab_sink_row(st, row, ncols);
}

/* ---- the driver interface ------------------------------------------------------------------ */

/* One client's connection and what the current step has made on it (a prepared statement,
 * bound buffers, scratch space). Each driver defines struct ab_conn in its own file; an
 * ab_conn is used by one thread at a time and opened on one endpoint only. */
typedef struct ab_conn ab_conn;

typedef struct {
    const char *base;   /* method base name, e.g. "c-libpq" */
    const char *driver; /* what is reported as driver */
    const char *dbms[3]; /* NULL after the last */
    const char *batch_style_default;
    int record; /* has record-level access (mode record) */
    /* a key=value setting from the method name; 0, or -1 with ab_err set */
    int (*configure)(const char *key, const char *value);
    /* adds driver_version, settings (object) and capabilities.batch to the hello answer */
    void (*hello)(json_t *answer, json_t *settings, json_t *caps);
    ab_conn *(*conn_new)(void);    /* a client's state, not connected yet */
    void (*conn_free)(ab_conn *c); /* closes it first when open */
    /* connects c; answer gets server_pid, server_version, … — NULL when nobody asks, and then
     * nothing beyond the connection itself is sent (a connection per request) */
    int (*open)(ab_conn *c, json_t *endpoint, json_t *answer);
    void (*close)(ab_conn *c);
    /* once per step: what every connection shares (statement texts, parameter arrays) */
    int (*step_begin)(ab_step *st);
    /* once per connection the step runs on, before its first operation */
    int (*conn_begin)(ab_conn *c, ab_step *st);
    /* operation i: *count = rows read, or rows changed/written */
    int (*op)(ab_conn *c, ab_step *st, int64_t i, int64_t *count);
    int (*txn_begin)(ab_conn *c, ab_step *st);
    int (*txn_commit)(ab_conn *c, ab_step *st);
    void (*recover)(ab_conn *c, ab_step *st);
    void (*conn_end)(ab_conn *c, ab_step *st); /* releases what the step made on c */
    void (*step_end)(ab_step *st);
    int64_t (*server_pid)(ab_conn *c); /* 0 when unknown */
    /* optional: called on each client thread of a loaded step before its first and after its
     * last call into the driver (a client library's per-thread setup) */
    void (*thread_begin)(void);
    void (*thread_end)(void);
    /* optional: the largest result of the step on c, in bytes of the client's native form
     * (a verification asked for size); -1 when it cannot tell */
    int64_t (*result_bytes)(ab_conn *c);
    /* optional, for load steps (the host's assoc.c runs the strategies and calls this for each
     * statement; NULL: the driver has no load steps): runs sql — NUL-ended, its markers already
     * in the driver's style (`mark`) — with params[0 … nparams−1] bound, the driver's extended
     * mode, and hands each row it reads, decoded as its scans decode, to ab_emit; *count = rows
     * read. The statement is the driver's own for this call: nothing of it outlives the call. */
    int (*query)(ab_conn *c, ab_step *st, const char *sql, const ab_param *params, int nparams, int64_t *count);
    int mark;                /* AB_MARK_QMARK (0) or AB_MARK_DOLLAR: how query's statements write markers */
    const char *query_words; /* how query runs a statement, for hello's settings */
} ab_driver;

/* One operation of a load step (assoc.c): the whole load — the parents, their children and
 * grandchildren by the step's strategy — through d->query; *count = entities read. */
int ab_assoc_op(const ab_driver *d, ab_conn *c, ab_step *st, int64_t i, int64_t *count);

/* One operation, with the BEGIN/COMMIT of commit_every around it: i picks the operation's
 * arguments, seq counts the operations this connection has run in the step (the same as i in
 * a plain pass; under load the arguments cycle while seq goes on). */
static inline int ab_run_op(const ab_driver *d, ab_conn *c, ab_step *st, int64_t i, int64_t seq, int64_t *count)
{
    int64_t k = st->commit_every;
    if (k && seq % k == 0 && d->txn_begin(c, st))
        return -1;
    if (st->kind == K_LOAD ? ab_assoc_op(d, c, st, i, count) : d->op(c, st, i, count))
        return -1;
    if (k && ((seq + 1) % k == 0 || seq + 1 == st->nops) && d->txn_commit(c, st))
        return -1;
    return 0;
}

/* One operation of a client. Connection per request: connecting, preparing what the operation
 * needs, running it and disconnecting are all part of it (c is opened and closed here). */
static inline int ab_client_op(const ab_driver *d, ab_conn *c, int per_request, ab_step *st, int64_t i, int64_t seq,
                               int64_t *count)
{
    if (!per_request)
        return ab_run_op(d, c, st, i, seq, count);
    if (d->open(c, st->endpoint, NULL))
        return -1;
    int rc = d->conn_begin(c, st) || ab_run_op(d, c, st, i, 0, count) ? -1 : 0;
    d->close(c); /* the server drops whatever the request prepared; a failed one is rolled back */
    return rc;
}

/* MariaDB: the OS thread serving this connection (its server_pid), asked at open, untimed. */
#define AB_MARIADB_TID_QUERY "SELECT TID FROM information_schema.PROCESSLIST WHERE ID = CONNECTION_ID()"

/* MariaDB: a read-only session (endpoint read_only): the server then refuses writes (1792,
 * SQLSTATE 25006). Run as the connection's first statement (libmariadb's init command). */
#define AB_MARIADB_READ_ONLY "SET SESSION TRANSACTION READ ONLY"

/* Endpoint helpers */
const char *ab_ep_str(json_t *endpoint, const char *key); /* NULL when absent or null */
/* the endpoint's port as text (number or string) into buf; NULL when absent */
const char *ab_ep_port(json_t *endpoint, char *buf, size_t len);
/* read_only: true (a session in which the server refuses writes; checked at open) */
int ab_ep_read_only(json_t *endpoint);
/* PostgreSQL: libpq's `options` (the startup packet's) into buf: -c search_path=<schema> when
 * the endpoint has one, -c default_transaction_read_only=on when read_only. 1: written, 0:
 * neither, -1 with ab_err set when buf is too short. */
int ab_ep_pg_options(json_t *endpoint, char *buf, size_t len);

#endif
