/* c-sqlite: the SQLite C API, in process. sqlite3_prepare_v2 / bind / step / column. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "driver.h"

#define BUSY_TIMEOUT_MS 5000 /* what Python's sqlite3.connect uses by default */

struct ab_conn {
    sqlite3 *db;
    sqlite3_stmt *prepared;    /* prepared mode / batch: made in the first operation */
    sqlite3_stmt *txn_stmt[2]; /* BEGIN, COMMIT: prepared once per connection */
};

static const char *code_name(int code)
{
    switch (code) {
    case SQLITE_CONSTRAINT_PRIMARYKEY: return "SQLITE_CONSTRAINT_PRIMARYKEY";
    case SQLITE_CONSTRAINT_UNIQUE: return "SQLITE_CONSTRAINT_UNIQUE";
    case SQLITE_CONSTRAINT_NOTNULL: return "SQLITE_CONSTRAINT_NOTNULL";
    case SQLITE_CONSTRAINT_CHECK: return "SQLITE_CONSTRAINT_CHECK";
    case SQLITE_CONSTRAINT_FOREIGNKEY: return "SQLITE_CONSTRAINT_FOREIGNKEY";
    case SQLITE_BUSY_SNAPSHOT: return "SQLITE_BUSY_SNAPSHOT";
    default: break;
    }
    switch (code & 0xff) {
    case SQLITE_ERROR: return "SQLITE_ERROR";
    case SQLITE_INTERNAL: return "SQLITE_INTERNAL";
    case SQLITE_PERM: return "SQLITE_PERM";
    case SQLITE_ABORT: return "SQLITE_ABORT";
    case SQLITE_BUSY: return "SQLITE_BUSY";
    case SQLITE_LOCKED: return "SQLITE_LOCKED";
    case SQLITE_NOMEM: return "SQLITE_NOMEM";
    case SQLITE_READONLY: return "SQLITE_READONLY";
    case SQLITE_INTERRUPT: return "SQLITE_INTERRUPT";
    case SQLITE_IOERR: return "SQLITE_IOERR";
    case SQLITE_CORRUPT: return "SQLITE_CORRUPT";
    case SQLITE_FULL: return "SQLITE_FULL";
    case SQLITE_CANTOPEN: return "SQLITE_CANTOPEN";
    case SQLITE_SCHEMA: return "SQLITE_SCHEMA";
    case SQLITE_TOOBIG: return "SQLITE_TOOBIG";
    case SQLITE_CONSTRAINT: return "SQLITE_CONSTRAINT";
    case SQLITE_MISMATCH: return "SQLITE_MISMATCH";
    case SQLITE_MISUSE: return "SQLITE_MISUSE";
    case SQLITE_RANGE: return "SQLITE_RANGE";
    default: return NULL;
    }
}

static int fail_db(sqlite3 *h, int rc)
{
    const char *msg = h ? sqlite3_errmsg(h) : sqlite3_errstr(rc);
    int code = h ? sqlite3_extended_errcode(h) : rc;
    return ab_fail("db", code_name(code), "%s", msg);
}

static int configure(const char *key, const char *value)
{
    return ab_fail("unsupported", NULL, "c-sqlite has no setting %s=%s", key, value);
}

static void hello(json_t *a, json_t *settings, json_t *caps)
{
    (void)caps;
    json_object_set_new(a, "driver_version", json_string(sqlite3_libversion()));
    json_object_set_new(settings, "autocommit", json_string("yes (BEGIN/COMMIT explicit)"));
    json_object_set_new(settings, "pooled", json_string("not built: SQLite's C API has no connection pool"));
    json_object_set_new(settings, "open", json_string("sqlite3_open_v2(file, READWRITE|CREATE), busy_timeout 5000 ms (as Python's sqlite3)"));
    json_object_set_new(settings, "read_only", json_string("endpoint read_only: sqlite3_open_v2(file, SQLITE_OPEN_READONLY)"));
    json_object_set_new(settings, "literal", json_string("sqlite3_prepare_v2 + step + finalize of the text with values inlined, every operation"));
    json_object_set_new(settings, "extended", json_string("sqlite3_prepare_v2 + bind + step + finalize, every operation"));
    json_object_set_new(settings, "prepared", json_string("sqlite3_prepare_v2 once (first operation), then reset + clear_bindings + bind + step"));
    json_object_set_new(settings, "scan", json_string("prepare, step every row, decode each column by sqlite3_column_type, finalize"));
    json_object_set_new(settings, "timestamps", json_string("bound and read as ISO text"));
    json_object_set_new(settings, "parameters",
                        json_string("sqlite3_bind_int64 for integers and booleans (1/0), sqlite3_bind_double for floats, "
                                    "sqlite3_bind_blob64 for bytes, sqlite3_bind_text for text and for decimals, dates "
                                    "and timestamps (their text: SQLite has no such types), sqlite3_bind_null for NULL"));
    json_object_set_new(settings, "rows changed", json_string("sqlite3_changes"));
}

static ab_conn *conn_new(void)
{
    return calloc(1, sizeof(ab_conn));
}

static void close_(ab_conn *c)
{
    for (int k = 0; k < 2; k++) {
        sqlite3_finalize(c->txn_stmt[k]);
        c->txn_stmt[k] = NULL;
    }
    sqlite3_finalize(c->prepared);
    c->prepared = NULL;
    sqlite3_close(c->db);
    c->db = NULL;
}

static void conn_free(ab_conn *c)
{
    if (c)
        close_(c);
    free(c);
}

/* Opens the endpoint's file (a connect step's operation, and open's), read-only when the
 * endpoint asks; -1 with ab_err set. */
static int open_file(json_t *ep, sqlite3 **db)
{
    int flags = ab_ep_read_only(ep) ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
    int rc = sqlite3_open_v2(ab_ep_str(ep, "file"), db, flags, NULL);
    if (rc != SQLITE_OK) {
        fail_db(*db, rc);
        sqlite3_close(*db);
        *db = NULL;
        return -1;
    }
    return 0;
}

static int open_(ab_conn *c, json_t *ep, json_t *a)
{
    const char *file = ab_ep_str(ep, "file");
    if (!file)
        return ab_fail("protocol", NULL, "the sqlite endpoint needs a file");
    if (open_file(ep, &c->db))
        return -1;
    sqlite3_extended_result_codes(c->db, 1);
    sqlite3_busy_timeout(c->db, BUSY_TIMEOUT_MS);
    const char *txn[2] = {"BEGIN", "COMMIT"};
    for (int k = 0; k < 2; k++)
        if (sqlite3_prepare_v2(c->db, txn[k], -1, &c->txn_stmt[k], NULL) != SQLITE_OK) {
            fail_db(c->db, 0);
            close_(c);
            return -1;
        }
    if (a)
        json_object_set_new(a, "server_version", json_string(sqlite3_libversion()));
    return 0;
}

static int run_txn(ab_conn *c, int k)
{
    int rc = sqlite3_step(c->txn_stmt[k]);
    sqlite3_reset(c->txn_stmt[k]);
    return rc == SQLITE_DONE ? 0 : fail_db(c->db, rc);
}

static int txn_begin(ab_conn *c, ab_step *st)
{
    (void)st;
    return run_txn(c, 0);
}

static int txn_commit(ab_conn *c, ab_step *st)
{
    (void)st;
    return run_txn(c, 1);
}

/* SQLite's storage classes (protocol/PROTOCOL.md, Types): booleans as integers 1/0, floats as
 * reals, bytes as blobs; decimals, dates and timestamps as their text, as the data loader
 * writes them. */
static int bind_row(sqlite3 *db, sqlite3_stmt *s, const ab_param *row, int n)
{
    for (int k = 0; k < n; k++) {
        const ab_param *p = &row[k];
        int rc;
        switch (p->type) {
        case AB_NULL: rc = sqlite3_bind_null(s, k + 1); break;
        case AB_INT:
        case AB_BOOL: rc = sqlite3_bind_int64(s, k + 1, p->i); break;
        case AB_FLOAT: rc = sqlite3_bind_double(s, k + 1, p->f); break;
        case AB_BYTES: rc = sqlite3_bind_blob64(s, k + 1, p->len ? p->text : "", p->len, SQLITE_STATIC); break;
        default: /* text, decimal, date, timestamp */
            rc = sqlite3_bind_text(s, k + 1, p->text, (int)p->len, SQLITE_STATIC);
        }
        if (rc != SQLITE_OK)
            return fail_db(db, rc);
    }
    return 0;
}

/* Steps s to the end; reads (and decodes) every row when reads. */
static int run(sqlite3 *db, ab_step *st, sqlite3_stmt *s, int reads, int64_t *count)
{
    int rc;
    int64_t rows = 0;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        if (!reads)
            continue;
        int nc = sqlite3_column_count(s);
        ab_value *row = ab_row(st, nc);
        for (int c = 0; c < nc; c++) {
            ab_value *v = &row[c];
            switch (sqlite3_column_type(s, c)) {
            case SQLITE_INTEGER:
                v->type = AB_INT;
                v->u.i = sqlite3_column_int64(s, c);
                break;
            case SQLITE_FLOAT:
                v->type = AB_FLOAT;
                v->u.f = sqlite3_column_double(s, c);
                break;
            case SQLITE_TEXT:
                v->type = AB_TEXT;
                v->u.s.p = (const char *)sqlite3_column_text(s, c);
                v->u.s.n = (size_t)sqlite3_column_bytes(s, c);
                break;
            case SQLITE_BLOB:
                v->type = AB_BYTES;
                v->u.s.p = sqlite3_column_blob(s, c);
                v->u.s.n = (size_t)sqlite3_column_bytes(s, c);
                break;
            default:
                v->type = AB_NULL;
            }
        }
        ab_emit(st, row, nc);
        rows++;
    }
    if (rc != SQLITE_DONE)
        return fail_db(db, rc);
    if (reads) {
        st->ncols = sqlite3_column_count(s);
        *count = rows;
    } else {
        *count = sqlite3_stmt_readonly(s) ? 0 : sqlite3_changes(db);
    }
    return 0;
}

static int prepare(sqlite3 *db, const char *sql, size_t len, sqlite3_stmt **s)
{
    int rc = sqlite3_prepare_v2(db, sql, (int)len + 1, s, NULL);
    if (rc != SQLITE_OK) {
        sqlite3_finalize(*s);
        *s = NULL;
        return fail_db(db, rc);
    }
    if (!*s)
        return ab_fail("db", NULL, "empty statement");
    return 0;
}

/* prepare + (bind the n values of row) + step + finalize */
static int once(sqlite3 *db, ab_step *st, const char *sql, size_t len, const ab_param *row, int n, int reads,
                int64_t *count)
{
    sqlite3_stmt *s;
    if (prepare(db, sql, len, &s))
        return -1;
    int rc = (row ? bind_row(db, s, row, n) : 0) || run(db, st, s, reads, count) ? -1 : 0;
    sqlite3_finalize(s);
    return rc;
}

/* reset + clear_bindings, then bind row and step: a prepared statement run again */
static int step_again(sqlite3 *db, ab_step *st, sqlite3_stmt *s, const ab_param *row, int reads, int64_t *count)
{
    sqlite3_reset(s);
    sqlite3_clear_bindings(s);
    return bind_row(db, s, row, st->nparams) || run(db, st, s, reads, count) ? -1 : 0;
}

static int exec_op(ab_conn *c, ab_step *st, int64_t i, int64_t *count)
{
    sqlite3 *db = c->db;
    const ab_param *row = &st->params[i * st->nparams];
    if (st->mode == M_LITERAL)
        return once(db, st, st->texts[i], st->text_lens[i], NULL, 0, st->fetch, count);
    if (st->mode == M_EXTENDED)
        return once(db, st, st->sql, strlen(st->sql), row, st->nparams, st->fetch, count);
    if (c->prepared)
        return step_again(db, st, c->prepared, row, st->fetch, count);
    /* parsed once, inside the first operation's time */
    if (prepare(db, st->sql, strlen(st->sql), &c->prepared))
        return -1;
    return bind_row(db, c->prepared, row, st->nparams) || run(db, st, c->prepared, st->fetch, count) ? -1 : 0;
}

static int batch_op(ab_conn *c, ab_step *st, int64_t i, int64_t *count)
{
    int64_t first, last;
    ab_batch_group(st, i, &first, &last);
    if (run_txn(c, 0))
        return -1;
    if (!c->prepared && prepare(c->db, st->sql, strlen(st->sql), &c->prepared))
        return -1;
    for (int64_t r = first; r < last; r++) {
        int64_t changed;
        if (step_again(c->db, st, c->prepared, &st->params[r * st->nparams], 0, &changed))
            return -1;
    }
    if (run_txn(c, 1))
        return -1;
    *count = last - first;
    return 0;
}

/* A load step's statement: as extended runs one (prepare, bind, step every row, finalize). */
static int load_query(ab_conn *c, ab_step *st, const char *sql, const ab_param *params, int n, int64_t *count)
{
    return once(c->db, st, sql, strlen(sql), params, n, 1, count);
}

static int op(ab_conn *c, ab_step *st, int64_t i, int64_t *count)
{
    switch (st->kind) {
    case K_CONNECT: {
        sqlite3 *h = NULL;
        if (open_file(st->endpoint, &h))
            return -1;
        sqlite3_close(h);
        *count = 0;
        return 0;
    }
    case K_SCAN:
        return once(c->db, st, st->sql, strlen(st->sql), NULL, 0, 1, count);
    case K_EXEC:
        return exec_op(c, st, i, count);
    case K_BATCH:
        return batch_op(c, st, i, count);
    }
    return ab_fail("internal", NULL, "unknown step kind");
}

static int step_begin(ab_step *st)
{
    (void)st;
    return 0;
}

static int conn_begin(ab_conn *c, ab_step *st)
{
    (void)c;
    (void)st;
    return 0;
}

static void recover(ab_conn *c, ab_step *st)
{
    (void)st;
    if (c->prepared)
        sqlite3_reset(c->prepared);
    for (int k = 0; k < 2; k++)
        if (c->txn_stmt[k])
            sqlite3_reset(c->txn_stmt[k]);
    if (c->db && !sqlite3_get_autocommit(c->db))
        sqlite3_exec(c->db, "ROLLBACK", NULL, NULL, NULL);
}

static void conn_end(ab_conn *c, ab_step *st)
{
    (void)st;
    sqlite3_finalize(c->prepared);
    c->prepared = NULL;
}

static void step_end(ab_step *st)
{
    (void)st;
}

static int64_t server_pid(ab_conn *c)
{
    (void)c;
    return 0;
}

const ab_driver ab_driver_sqlite = {
    .base = "c-sqlite",
    .driver = "SQLite C API",
    .dbms = {"sqlite", NULL},
    .batch_style_default = "BEGIN, one prepared statement (prepared in the first group) stepped per row, COMMIT",
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
    .query_words = "sqlite3_prepare_v2 + bind (as 'parameters' says, each value as its row decoded it) + step every row "
                   "+ finalize, per statement, as extended runs one; every value decoded as a scan decodes it",
};
