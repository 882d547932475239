/* One interface for every C driver: the message loop (main.c) parses a step, generates its
 * parameters, then calls step_begin (untimed), op once per operation (timed or verified),
 * and step_end (untimed). */
#ifndef AB_DRIVER_H
#define AB_DRIVER_H

#include <stdint.h>

#include <jansson.h>

#include "protocol.h"

enum { K_CONNECT, K_SCAN, K_EXEC, K_BATCH };
enum { M_NONE, M_LITERAL, M_EXTENDED, M_PREPARED };

/* ---- errors ------------------------------------------------------------------------------ */

typedef struct {
    const char *kind; /* "db", "unsupported", "protocol", "internal" */
    char message[2048];
    char sqlstate[64];
} ab_error;

extern ab_error ab_err;

/* Records an error and returns -1. sqlstate may be NULL. */
int ab_fail(const char *kind, const char *sqlstate, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* ---- rows -------------------------------------------------------------------------------- */

typedef struct ab_sink {
    ab_checksum sum;
    int width; /* columns of the first row seen */
} ab_sink;

/* A growable byte buffer for decoded values (bytea hex, numeric text). */
typedef struct {
    char *p;
    size_t len, cap;
} ab_buf;

void ab_buf_reserve(ab_buf *b, size_t n);

/* ---- one step ---------------------------------------------------------------------------- */

typedef struct {
    int kind, mode;
    const char *sql;      /* neutral form ('?' markers); NULL for connect */
    const size_t *marks;  /* byte offsets of the markers in sql */
    int nparams;          /* markers = parameters per row */
    int64_t n;            /* iterations: rows for batch, operations otherwise */
    int64_t batch;        /* rows per group (batch) */
    int64_t nops;         /* operations: n, or groups for batch */
    int64_t commit_every; /* exec: operations per transaction, 0 = autocommit */
    int fetch;            /* the statement returns rows to read */
    int verify;
    const ab_param *params; /* n rows × nparams, generated before the clock */
    char **texts;           /* literal mode: n statements with values inlined */
    size_t *text_lens;
    json_t *endpoint;
    ab_arena *arena;  /* the step's memory, for anything a driver prepares before the clock */
    ab_sink *sink;    /* verification: every decoded row goes here; NULL when timed */
    int ncols;        /* set by the driver: columns of the rows it read */
    ab_value *row;    /* a row buffer of rowcap values, allocated before the loop */
    int rowcap;
} ab_step;

/* The row buffer with room for ncols values (grows only if a result is wider than any
 * before). */
static inline ab_value *ab_row(ab_step *st, int ncols)
{
    extern ab_value *ab_row_grow(ab_step * st, int ncols);
    return ncols <= st->rowcap ? st->row : ab_row_grow(st, ncols);
}

/* Hands one decoded row to the verification sink (no-op when timed). */
static inline void ab_emit(ab_step *st, const ab_value *row, int ncols)
{
    st->ncols = ncols;
    if (st->sink) {
        if (!st->sink->sum.rows)
            st->sink->width = ncols;
        ab_checksum_add(&st->sink->sum, row, ncols);
    }
}

/* ---- the driver interface ------------------------------------------------------------------ */

typedef struct {
    const char *base;   /* method base name, e.g. "c-libpq" */
    const char *driver; /* what is reported as driver */
    const char *dbms[2];
    const char *batch_style_default;
    /* a key=value setting from the method name; 0, or -1 with ab_err set */
    int (*configure)(const char *key, const char *value);
    /* adds driver_version, settings (object) and capabilities.batch to the hello answer */
    void (*hello)(json_t *answer, json_t *settings, json_t *caps);
    int (*open)(json_t *endpoint, json_t *answer);
    void (*close)(void);
    int (*step_begin)(ab_step *st);
    /* operation i: *count = rows read, or rows changed/written */
    int (*op)(ab_step *st, int64_t i, int64_t *count);
    int (*txn_begin)(ab_step *st);
    int (*txn_commit)(ab_step *st);
    void (*recover)(ab_step *st);
    void (*step_end)(ab_step *st);
    int64_t (*server_pid)(void); /* 0 when unknown */
} ab_driver;

extern const ab_driver ab_driver_libpq;
extern const ab_driver ab_driver_odbc;
extern const ab_driver ab_driver_sqlite;

/* Endpoint helpers */
const char *ab_ep_str(json_t *endpoint, const char *key); /* NULL when absent or null */
/* the endpoint's port as text (number or string) into buf; NULL when absent */
const char *ab_ep_port(json_t *endpoint, char *buf, size_t len);

#endif
