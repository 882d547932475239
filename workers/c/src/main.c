/* abworker-c: the C worker of accessbench (protocol/PROTOCOL.md, version 1).
 *
 * parse message → dispatch on op / step kind → timed loop → answer. One JSON object per
 * line each way; stdout carries nothing else (every library's output goes to stderr). Steps
 * under load (several clients, duration, rate, connection policy) run in load.c. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "driver.h"
#include "load.h"
#include "protocol.h"

#define PROTOCOL_VERSION 1

#if defined(__clang__)
#define AB_RUNTIME "clang " __clang_version__
#elif defined(__GNUC__)
#define AB_RUNTIME "gcc " __VERSION__
#else
#define AB_RUNTIME "C"
#endif

_Thread_local ab_error ab_err;

int ab_fail(const char *kind, const char *sqlstate, const char *fmt, ...)
{
    va_list ap;
    ab_err.kind = kind;
    va_start(ap, fmt);
    vsnprintf(ab_err.message, sizeof ab_err.message, fmt, ap);
    va_end(ap);
    snprintf(ab_err.sqlstate, sizeof ab_err.sqlstate, "%s", sqlstate ? sqlstate : "");
    return -1;
}

void ab_buf_reserve(ab_buf *b, size_t n)
{
    if (n <= b->cap)
        return;
    size_t cap = b->cap ? b->cap : 4096;
    while (cap < n)
        cap *= 2;
    char *p = realloc(b->p, cap);
    if (!p) {
        fprintf(stderr, "abworker-c: out of memory\n");
        abort();
    }
    b->p = p;
    b->cap = cap;
}

ab_value *ab_row_grow(ab_step *st, int ncols)
{
    int cap = st->rowcap ? st->rowcap : 64;
    while (cap < ncols)
        cap *= 2;
    ab_value *row = realloc(st->row, (size_t)cap * sizeof *row);
    if (!row) {
        fprintf(stderr, "abworker-c: out of memory\n");
        abort();
    }
    st->row = row;
    st->rowcap = cap;
    return row;
}

const char *ab_ep_str(json_t *endpoint, const char *key)
{
    return json_string_value(json_object_get(endpoint, key));
}

const char *ab_ep_port(json_t *endpoint, char *buf, size_t len)
{
    json_t *port = json_object_get(endpoint, "port");
    if (json_is_integer(port)) {
        snprintf(buf, len, "%lld", (long long)json_integer_value(port));
        return buf;
    }
    if (json_is_string(port)) {
        snprintf(buf, len, "%s", json_string_value(port));
        return buf;
    }
    return NULL;
}

/* ---- the session ------------------------------------------------------------------------- */

static const ab_driver *drv;
static const char *method_name;
static char unsupported_why[4096]; /* non-empty: every message is answered unsupported */
static json_t *endpoint;           /* the endpoint of the open connection, NULL when closed */
static ab_conn *session;           /* the worker's own connection (open's), NULL when closed */
static FILE *out;

static const ab_driver *const DRIVERS[] = {&ab_driver_libpq, &ab_driver_odbc, &ab_driver_sqlite, &ab_driver_libmariadb};

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int64_t tv_ns(struct timeval tv)
{
    return (int64_t)tv.tv_sec * 1000000000LL + (int64_t)tv.tv_usec * 1000LL;
}

static int proto_err(const char *fmt, const char *arg)
{
    return ab_fail("protocol", NULL, fmt, arg);
}

/* Number field (integer or real); -1 with a protocol error when present but not a number. */
static int get_num(json_t *msg, const char *key, double dflt, double *out)
{
    json_t *v = json_object_get(msg, key);
    if (!v || json_is_null(v)) {
        *out = dflt;
        return 0;
    }
    if (json_is_number(v)) {
        *out = json_number_value(v);
        return 0;
    }
    return proto_err("field '%s' must be a number", key);
}

/* Integer field; -1 with a protocol error when present but not an integer. */
static int get_int(json_t *msg, const char *key, int64_t dflt, int64_t *out)
{
    json_t *v = json_object_get(msg, key);
    if (!v || json_is_null(v)) {
        *out = dflt;
        return 0;
    }
    if (json_is_integer(v)) {
        *out = (int64_t)json_integer_value(v);
        return 0;
    }
    if (json_is_real(v) && (double)(int64_t)json_real_value(v) == json_real_value(v)) {
        *out = (int64_t)json_real_value(v);
        return 0;
    }
    if (json_is_string(v)) {
        char *end;
        errno = 0;
        long long x = strtoll(json_string_value(v), &end, 10);
        if (!errno && end != json_string_value(v) && !*end) {
            *out = x;
            return 0;
        }
    }
    return proto_err("field '%s' must be an integer", key);
}

static int truthy(json_t *v)
{
    if (!v || json_is_null(v) || json_is_false(v))
        return 0;
    if (json_is_integer(v))
        return json_integer_value(v) != 0;
    if (json_is_real(v))
        return json_real_value(v) != 0;
    if (json_is_string(v))
        return json_string_length(v) != 0;
    if (json_is_array(v))
        return json_array_size(v) != 0;
    if (json_is_object(v))
        return json_object_size(v) != 0;
    return 1;
}

static json_t *on_hello(void)
{
    json_t *a = json_object(), *settings = json_object(), *caps = json_object(), *dbms = json_array(),
           *kinds = json_array(), *modes = json_array();
    json_object_set_new(a, "protocol", json_integer(PROTOCOL_VERSION));
    json_object_set_new(a, "name", json_string(method_name));
    json_object_set_new(a, "language", json_string("c"));
    json_object_set_new(a, "runtime", json_string(AB_RUNTIME));
    json_object_set_new(a, "driver", json_string(drv->driver));
    for (int k = 0; k < 3 && drv->dbms[k]; k++)
        json_array_append_new(dbms, json_string(drv->dbms[k]));
    const char *kk[] = {"connect", "scan", "exec", "batch"}, *mm[] = {"literal", "extended", "prepared"};
    for (int k = 0; k < 4; k++)
        json_array_append_new(kinds, json_string(kk[k]));
    for (int k = 0; k < 3; k++)
        json_array_append_new(modes, json_string(mm[k]));
    if (drv->record)
        json_array_append_new(modes, json_string("record"));
    json_object_set_new(caps, "dbms", dbms);
    json_object_set_new(caps, "kinds", kinds);
    json_object_set_new(caps, "modes", modes);
    json_object_set_new(caps, "batch", json_string(drv->batch_style_default));
    json_object_set_new(caps, "concurrency",
                        json_string("threads (one POSIX thread per client, each with its own connection)"));
    /* steps under load: by duration, open loop at a rate, latency histograms, and the connection
     * policies built — no pooled: none of these drivers has a pool of pool_size connections of
     * its own (each driver says why in settings) */
    json_t *load = json_object(), *policies = json_array();
    json_array_append_new(policies, json_string("persistent"));
    json_array_append_new(policies, json_string("per-request"));
    json_object_set_new(load, "policies", policies);
    json_object_set_new(caps, "load", load);
    drv->hello(a, settings, caps);
    json_object_set_new(settings, "clients",
                        json_string("one POSIX thread per client in this process; persistent: each client its own connection, "
                                    "client 0 the worker's own, the others opened (and prepared for the step) before the "
                                    "barrier, untimed, and closed after the trial"));
    json_object_set_new(settings, "per-request",
                        json_string("connect (as open does, without asking for the backend pid or version), prepare what the "
                                    "operation needs, run it, disconnect: all inside the operation's time"));
    json_object_set_new(settings, "open loop",
                        json_string("client k: its own arrival stream at rate / clients seeded schedule_seed + k (uniform: "
                                    "offset by phase_ns + k / rate, so the worker's arrivals are evenly spaced); starts "
                                    "no arrival at or after the duration, then waits (untimed, asleep) for its end; one still "
                                    "behind schedule when the duration has passed stops there and counts the arrivals due "
                                    "before the end that it had not started as skipped; sleep (clock_nanosleep), then spin "
                                    "the last 100 µs to each intended start"));
    json_object_set_new(a, "settings", settings);
    json_object_set_new(a, "capabilities", caps);
    return a;
}

static json_t *on_open(json_t *msg)
{
    json_t *ep = json_object_get(msg, "endpoint");
    if (!json_is_object(ep)) {
        proto_err("open needs an endpoint object%s", "");
        return NULL;
    }
    const char *dbms = ab_ep_str(ep, "dbms");
    int known = 0;
    for (int k = 0; k < 3 && drv->dbms[k]; k++)
        known |= dbms && !strcmp(dbms, drv->dbms[k]);
    if (!known) {
        ab_fail("unsupported", NULL, "%s does not reach dbms '%s'", method_name, dbms ? dbms : "(none)");
        return NULL;
    }
    if (endpoint) { /* a second open replaces the first connection */
        drv->conn_free(session);
        session = NULL;
        json_decref(endpoint);
        endpoint = NULL;
    }
    json_t *a = json_object();
    if (!(session = drv->conn_new())) {
        json_decref(a);
        ab_fail("internal", NULL, "out of memory");
        return NULL;
    }
    int64_t start = now_ns();
    if (drv->open(session, ep, a)) {
        drv->conn_free(session);
        session = NULL;
        json_decref(a);
        return NULL;
    }
    json_object_set_new(a, "connect_ns", json_integer(now_ns() - start));
    endpoint = json_deep_copy(ep);
    return a;
}

static json_t *on_close(void)
{
    if (endpoint) {
        drv->conn_free(session);
        session = NULL;
        json_decref(endpoint);
        endpoint = NULL;
    }
    return json_object();
}

static json_t *on_generate(json_t *msg)
{
    int64_t count;
    ab_arena arena = {0};
    ab_gen g;
    char err[256], ts[40];
    if (get_int(msg, "count", 0, &count))
        return NULL;
    if (ab_gen_init(&g, json_object_get(msg, "spec"), &arena, err, sizeof err)) {
        ab_arena_free(&arena);
        proto_err("%s", err);
        return NULL;
    }
    json_t *values = json_array();
    for (int64_t i = 0; i < count; i++) {
        ab_param p;
        json_t *src;
        ab_gen_next(&g, i, &p, &arena, &src);
        if (src)
            json_array_append(values, src);
        else if (p.type == AB_NULL)
            json_array_append_new(values, json_null());
        else if (p.type == AB_INT)
            json_array_append_new(values, json_integer(p.i));
        else if (p.type == AB_TIMESTAMP)
            json_array_append_new(values, json_stringn(ts, ab_format_timestamp(p.i, ts, 1)));
        else
            json_array_append_new(values, json_stringn(p.text, p.len));
    }
    ab_arena_free(&arena);
    json_t *a = json_object();
    json_object_set_new(a, "values", values);
    return a;
}

static int hexval(int c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* A typed conformance value → the native value the drivers produce. */
static int typed_value(json_t *t, ab_value *v, ab_arena *arena)
{
    const char *type = json_string_value(json_object_get(t, "type"));
    json_t *val = json_object_get(t, "value");
    if (!type)
        return proto_err("a typed value needs a type%s", "");
    if (!strcmp(type, "null")) {
        v->type = AB_NULL;
    } else if (!strcmp(type, "bool")) {
        v->type = AB_BOOL;
        v->u.i = json_is_true(val);
    } else if (!strcmp(type, "int") || !strcmp(type, "timestamp") || !strcmp(type, "date") ||
               !strcmp(type, "time")) {
        if (!json_is_integer(val))
            return proto_err("a %s value must be an integer", type);
        v->type = !strcmp(type, "int") ? AB_INT : !strcmp(type, "timestamp") ? AB_TIMESTAMP
                  : !strcmp(type, "date") ? AB_DATE : AB_TIME;
        v->u.i = (int64_t)json_integer_value(val);
    } else if (!strcmp(type, "float")) {
        const char *hex = json_string_value(val);
        if (!hex || strlen(hex) != 16)
            return proto_err("a float value is 16 hex digits%s", "");
        uint64_t bits = strtoull(hex, NULL, 16);
        v->type = AB_FLOAT;
        memcpy(&v->u.f, &bits, 8);
    } else if (!strcmp(type, "decimal")) {
        const char *text = json_string_value(val);
        if (!text)
            return proto_err("a decimal value is text%s", "");
        size_t cap = strlen(text) + 64;
        char *buf = ab_arena_alloc(arena, cap);
        size_t n = ab_decimal_plain(text, buf, cap);
        if (!n)
            return proto_err("not a decimal: %s", text);
        v->type = AB_DECIMAL;
        v->u.s.p = buf;
        v->u.s.n = n;
    } else if (!strcmp(type, "text")) {
        if (!json_is_string(val))
            return proto_err("a text value is a string%s", "");
        v->type = AB_TEXT;
        v->u.s.p = json_string_value(val);
        v->u.s.n = json_string_length(val);
    } else if (!strcmp(type, "bytes")) {
        const char *hex = json_string_value(val);
        size_t n = hex ? strlen(hex) : 1;
        if (n % 2)
            return proto_err("a bytes value is an even number of hex digits%s", "");
        unsigned char *b = ab_arena_alloc(arena, n / 2 + 1);
        for (size_t k = 0; k < n / 2; k++) {
            int hi = hexval(hex[2 * k]), lo = hexval(hex[2 * k + 1]);
            if (hi < 0 || lo < 0)
                return proto_err("bad hex in a bytes value%s", "");
            b[k] = (unsigned char)(hi * 16 + lo);
        }
        v->type = AB_BYTES;
        v->u.s.p = (const char *)b;
        v->u.s.n = n / 2;
    } else {
        return proto_err("unknown value type '%s'", type);
    }
    return 0;
}

static json_t *on_checksum(json_t *msg)
{
    json_t *rows = json_object_get(msg, "rows");
    if (!json_is_array(rows)) {
        proto_err("checksum needs rows%s", "");
        return NULL;
    }
    ab_checksum sum = {0, 0};
    ab_arena arena = {0};
    size_t r;
    json_t *row;
    json_array_foreach(rows, r, row)
    {
        if (!json_is_array(row)) {
            ab_arena_free(&arena);
            proto_err("a row is a list%s", "");
            return NULL;
        }
        size_t nc = json_array_size(row);
        ab_value *vals = ab_arena_alloc(&arena, (nc ? nc : 1) * sizeof *vals);
        for (size_t c = 0; c < nc; c++) {
            if (typed_value(json_array_get(row, c), &vals[c], &arena)) {
                ab_arena_free(&arena);
                return NULL;
            }
        }
        ab_checksum_add(&sum, vals, (int)nc);
    }
    ab_arena_free(&arena);
    char hex[17];
    ab_checksum_hex(&sum, hex);
    json_t *a = json_object();
    json_object_set_new(a, "checksum", json_string(hex));
    json_object_set_new(a, "rows", json_integer((json_int_t)sum.rows));
    return a;
}

/* The worker's own histogram of the given values (conformance: histogram.py's buckets). */
static json_t *on_histogram(json_t *msg)
{
    json_t *values = json_object_get(msg, "values"), *v;
    if (!json_is_array(values)) {
        proto_err("histogram needs values%s", "");
        return NULL;
    }
    ab_histogram *h = calloc(1, sizeof *h);
    size_t k;
    json_array_foreach(values, k, v)
    {
        if (!json_is_integer(v) || json_integer_value(v) < 0) {
            free(h);
            proto_err("histogram values are integers >= 0%s", "");
            return NULL;
        }
        ab_hist_record(h, (uint64_t)json_integer_value(v));
    }
    json_t *a = json_object();
    json_object_set_new(a, "histogram", ab_hist_json(h));
    free(h);
    return a;
}

/* The first count intended start offsets of an arrival schedule (conformance: schedule.py). */
static json_t *on_schedule(json_t *msg)
{
    double rate;
    int64_t count;
    const char *arrival = json_string_value(json_object_get(msg, "arrival"));
    const char *seed = json_string_value(json_object_get(msg, "seed"));
    if (get_num(msg, "rate", 0, &rate) || get_int(msg, "count", 0, &count))
        return NULL;
    if (!(rate > 0)) {
        proto_err("schedule: rate must be positive%s", "");
        return NULL;
    }
    if (arrival && strcmp(arrival, "poisson") && strcmp(arrival, "uniform")) {
        proto_err("schedule: unknown arrival '%s'", arrival);
        return NULL;
    }
    char *end = NULL;
    uint64_t s = seed ? strtoull(seed, &end, 16) : 0;
    if (!seed || !*seed || *end) {
        proto_err("schedule: the seed is 16 hex digits%s", "");
        return NULL;
    }
    ab_schedule sched;
    ab_schedule_init(&sched, rate, !arrival || !strcmp(arrival, "poisson"), s);
    json_t *offsets = json_array();
    for (int64_t i = 0; i < count; i++)
        json_array_append_new(offsets, json_integer(ab_schedule_next(&sched)));
    json_t *a = json_object();
    json_object_set_new(a, "offsets", offsets);
    return a;
}

/* ---- steps --------------------------------------------------------------------------------- */

/* A record-level key: its values as literals separated by ", " (HANDLER … READ index = (…)). */
static char *key_literals(const ab_param *values, int n, int dialect, ab_arena *arena, size_t *len)
{
    size_t total = 1;
    for (int k = 0; k < n; k++)
        total += ab_literal(&values[k], dialect, NULL) + 2;
    char *out = ab_arena_alloc(arena, total), *o = out;
    for (int k = 0; k < n; k++) {
        if (k) {
            memcpy(o, ", ", 2);
            o += 2;
        }
        o += ab_literal(&values[k], dialect, o);
    }
    *o = '\0';
    *len = (size_t)(o - out);
    return out;
}

static int write_latencies(const char *path, const uint64_t *lat, int64_t n)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return ab_fail("internal", NULL, "latency_file %s: %s", path, strerror(errno));
    unsigned char b[8];
    for (int64_t i = 0; i < n; i++) {
        for (int k = 0; k < 8; k++)
            b[k] = (unsigned char)(lat[i] >> (8 * k));
        if (fwrite(b, 1, 8, f) != 8) {
            fclose(f);
            return ab_fail("internal", NULL, "latency_file %s: %s", path, strerror(errno));
        }
    }
    if (fclose(f))
        return ab_fail("internal", NULL, "latency_file %s: %s", path, strerror(errno));
    return 0;
}

/* The plain loops, timed or verified, on connection c. per_request (verification only): each
 * operation connects, prepares, runs and disconnects on its own. */
static json_t *run_step(ab_step *st, ab_conn *c, int per_request, const char *latency_file)
{
    int64_t nops = st->nops, rows = 0, count;
    json_t *a = json_object();
    if (st->verify) {
        ab_sink sink = {{0, 0}, 0};
        st->sink = &sink;
        int64_t start = now_ns(), first = 0;
        for (int64_t i = 0; i < nops; i++) {
            count = 0;
            if (ab_client_op(drv, c, per_request, st, i, i, &count))
                goto fail;
            if (i == 0) /* the cold start: the first operation, its rows checksummed */
                first = now_ns() - start;
            rows += count;
        }
        char hex[17];
        ab_checksum_hex(&sink.sum, hex);
        int reads = st->fetch && (st->kind == K_SCAN || st->kind == K_EXEC);
        json_object_set_new(a, "n", json_integer(nops));
        json_object_set_new(a, "rows", json_integer(rows));
        json_object_set_new(a, "values", json_integer(reads ? rows * sink.width : 0));
        json_object_set_new(a, "checksum", json_string(hex));
        json_object_set_new(a, "first_op_ns", json_integer(first));
        return a;
    }
    /* timed: everything is allocated before the clock */
    uint64_t *lat = calloc(nops ? (size_t)nops : 1, sizeof *lat);
    if (!lat) {
        ab_fail("internal", NULL, "cannot allocate %lld latencies", (long long)nops);
        goto fail;
    }
    struct rusage before, after;
    getrusage(RUSAGE_SELF, &before);
    int64_t start = now_ns(), prev = start;
    for (int64_t i = 0; i < nops; i++) {
        count = 0;
        if (ab_run_op(drv, c, st, i, i, &count)) {
            free(lat);
            goto fail;
        }
        int64_t now = now_ns();
        lat[i] = (uint64_t)(now - prev);
        prev = now;
        rows += count;
    }
    getrusage(RUSAGE_SELF, &after);
    if (latency_file && write_latencies(latency_file, lat, nops)) {
        free(lat);
        goto fail;
    }
    json_object_set_new(a, "n", json_integer(nops));
    json_object_set_new(a, "elapsed_ns", json_integer(prev - start));
    json_object_set_new(a, "rows", json_integer(rows));
    if (st->fetch && (st->kind == K_SCAN || st->kind == K_EXEC) && st->ncols)
        json_object_set_new(a, "values", json_integer(rows * st->ncols));
    json_object_set_new(a, "user_ns", json_integer(tv_ns(after.ru_utime) - tv_ns(before.ru_utime)));
    json_object_set_new(a, "sys_ns", json_integer(tv_ns(after.ru_stime) - tv_ns(before.ru_stime)));
    json_object_set_new(a, "first_op_ns", json_integer(nops ? (json_int_t)lat[0] : 0));
    int64_t pid = drv->server_pid(c);
    if (pid) {
        json_t *pids = json_array();
        json_array_append_new(pids, json_integer(pid));
        json_object_set_new(a, "server_pids", pids);
    }
    free(lat);
    return a;
fail:
    json_decref(a);
    return NULL;
}

static json_t *on_step(json_t *msg)
{
    if (!endpoint) {
        proto_err("step before open%s", "");
        return NULL;
    }
    const char *kind = json_string_value(json_object_get(msg, "kind"));
    ab_step st;
    memset(&st, 0, sizeof st);
    if (!kind) {
        proto_err("a step needs a kind%s", "");
        return NULL;
    }
    if (!strcmp(kind, "connect"))
        st.kind = K_CONNECT;
    else if (!strcmp(kind, "scan"))
        st.kind = K_SCAN;
    else if (!strcmp(kind, "exec"))
        st.kind = K_EXEC;
    else if (!strcmp(kind, "batch"))
        st.kind = K_BATCH;
    else {
        proto_err("unknown step kind '%s'", kind);
        return NULL;
    }
    if (get_int(msg, "iterations", -1, &st.n) || get_int(msg, "commit_every", 0, &st.commit_every) ||
        get_int(msg, "batch", 0, &st.batch))
        return NULL;
    if (st.n < 0) {
        proto_err("a step needs iterations >= 0%s", "");
        return NULL;
    }
    if (st.kind != K_EXEC || st.commit_every < 0)
        st.commit_every = 0;
    st.verify = truthy(json_object_get(msg, "verify"));
    json_t *fetch = json_object_get(msg, "fetch");
    st.fetch = st.kind == K_SCAN || (st.kind == K_EXEC && (fetch ? truthy(fetch) : 0));
    st.endpoint = endpoint;
    const char *latency_file = json_string_value(json_object_get(msg, "latency_file"));
    if (st.kind != K_CONNECT) {
        st.sql = json_string_value(json_object_get(msg, "sql"));
        if (!st.sql) {
            proto_err("a %s step needs sql", kind);
            return NULL;
        }
    }
    const char *mode = json_string_value(json_object_get(msg, "mode"));
    if (st.kind == K_EXEC) {
        if (!mode) {
            proto_err("an exec step needs a mode%s", "");
            return NULL;
        }
        st.mode = !strcmp(mode, "literal") ? M_LITERAL : !strcmp(mode, "extended") ? M_EXTENDED
                  : !strcmp(mode, "prepared") ? M_PREPARED : !strcmp(mode, "record") ? M_RECORD : M_NONE;
        if (st.mode == M_NONE) {
            proto_err("unknown mode '%s'", mode);
            return NULL;
        }
    } else if (st.kind == K_SCAN && mode && !strcmp(mode, "record")) {
        st.mode = M_RECORD;
    }
    if (st.mode == M_RECORD) { /* record-level access: the table (and the key's index) it reads */
        json_t *record = json_object_get(msg, "record");
        st.record_table = json_string_value(json_object_get(record, "table"));
        st.record_index = json_string_value(json_object_get(record, "index"));
        if (!drv->record) {
            ab_fail("unsupported", NULL, "%s has no record-level access (mode record)", method_name);
            return NULL;
        }
        if (!st.record_table || (st.kind == K_EXEC && !st.record_index)) {
            proto_err("mode record needs record.table (and record.index for an exec step)%s", "");
            return NULL;
        }
    }
    if (st.kind == K_BATCH && st.batch < 1) {
        proto_err("a batch step needs batch >= 1%s", "");
        return NULL;
    }
    st.nops = st.kind == K_BATCH ? (st.n + st.batch - 1) / st.batch : st.n;

    /* steps under load: clients, duration, open loop, connection policy */
    ab_load load = {.clients = 1, .skip_ns = -1};
    int64_t clients, seed, skip, start_at;
    double duration_ms, rate;
    if (get_int(msg, "clients", 1, &clients) || get_num(msg, "duration_ms", 0, &duration_ms) ||
        get_num(msg, "rate", 0, &rate) || get_int(msg, "schedule_seed", 0, &seed) ||
        get_int(msg, "phase_ns", 0, &load.phase_ns) || get_int(msg, "late_ns", 1000000, &load.late_ns) ||
        get_int(msg, "skip_ns", 0, &skip) || get_int(msg, "start_at_unix_ns", 0, &start_at))
        return NULL;
    if (clients < 1 || clients > 100000 || duration_ms < 0 || rate < 0 || load.phase_ns < 0) {
        proto_err("a step needs 1 <= clients <= 100000, duration_ms >= 0, rate >= 0 and phase_ns >= 0%s", "");
        return NULL;
    }
    const char *arrival = json_string_value(json_object_get(msg, "arrival"));
    if (arrival && strcmp(arrival, "poisson") && strcmp(arrival, "uniform")) {
        proto_err("unknown arrival '%s' (poisson, uniform)", arrival);
        return NULL;
    }
    const char *policy = json_string_value(json_object_get(msg, "policy"));
    if (policy && !strcmp(policy, "per-request")) {
        load.per_request = 1;
    } else if (policy && strcmp(policy, "persistent")) {
        ab_fail("unsupported", NULL, "%s has no %s connection policy (it has persistent and per-request)", method_name,
                policy);
        return NULL;
    }
    if (load.per_request && st.commit_every > 1) {
        ab_fail("unsupported", NULL, "commit_every %lld with a connection per request: a transaction cannot span requests",
                (long long)st.commit_every);
        return NULL;
    }
    load.clients = (int)clients;
    load.duration_ns = (int64_t)(duration_ms * 1e6);
    load.rate = rate;
    load.poisson = !arrival || !strcmp(arrival, "poisson");
    load.seed = (uint64_t)seed;
    load.skip_ns = skip > 0 ? skip : -1;
    load.start_at_unix_ns = start_at > 0 ? start_at : 0;
    int loaded = truthy(json_object_get(msg, "histogram")) || load.clients != 1 || load.duration_ns || load.rate ||
                 load.per_request;
    if (loaded && load.duration_ns && !st.nops) {
        proto_err("a step by duration needs iterations >= 1 to cycle through%s", "");
        return NULL;
    }

    /* parameters, generated (and for literal, inlined) before the clock */
    ab_arena arena = {0};
    size_t *marks = NULL;
    json_t *answer = NULL;
    json_t *specs = json_object_get(msg, "params");
    int nspecs = json_is_array(specs) ? (int)json_array_size(specs) : 0;
    ab_gen *gens = NULL;
    st.arena = &arena;
    if (st.sql) {
        st.nparams = ab_sql_markers(st.sql, &marks);
        st.marks = marks;
    }
    if (st.kind == K_EXEC || st.kind == K_BATCH) {
        if (nspecs != st.nparams) {
            ab_fail("protocol", NULL, "%d markers but %d params", st.nparams, nspecs);
            goto done;
        }
        gens = calloc((size_t)(nspecs ? nspecs : 1), sizeof *gens);
        char err[256];
        for (int k = 0; k < nspecs; k++) {
            if (ab_gen_init(&gens[k], json_array_get(specs, (size_t)k), &arena, err, sizeof err)) {
                proto_err("%s", err);
                goto done;
            }
        }
        ab_param *params = ab_arena_alloc(&arena, (size_t)(st.n * nspecs + 1) * sizeof *params);
        for (int64_t i = 0; i < st.n; i++)
            for (int k = 0; k < nspecs; k++)
                ab_gen_next(&gens[k], i, &params[i * nspecs + k], &arena, NULL);
        st.params = params;
        if (st.kind == K_EXEC && (st.mode == M_LITERAL || st.mode == M_RECORD)) {
            const char *dbms = ab_ep_str(endpoint, "dbms");
            int dialect = !strcmp(dbms, "sqlite") ? AB_DIALECT_SQLITE : !strcmp(dbms, "mariadb") ? AB_DIALECT_MARIADB
                                                                                                 : AB_DIALECT_POSTGRESQL;
            st.texts = ab_arena_alloc(&arena, (size_t)(st.n + 1) * sizeof *st.texts);
            st.text_lens = ab_arena_alloc(&arena, (size_t)(st.n + 1) * sizeof *st.text_lens);
            for (int64_t i = 0; i < st.n; i++)
                st.texts[i] = st.mode == M_LITERAL
                                  ? ab_sql_inline(st.sql, marks, st.nparams, &params[i * nspecs], dialect, &arena,
                                                  &st.text_lens[i])
                                  : key_literals(&params[i * nspecs], st.nparams, dialect, &arena, &st.text_lens[i]);
        }
    } else if (st.kind == K_SCAN && st.nparams) {
        ab_fail("protocol", NULL, "a scan runs one query without params, but the sql has %d markers", st.nparams);
        goto done;
    }
    ab_row_grow(&st, 64);
    if (!drv->step_begin(&st)) {
        if (loaded && !st.verify) {
            /* every client leaves its own connection usable */
            answer = ab_run_loaded(drv, session, &st, &load);
        } else if (load.per_request) { /* verification: one client, a connection per operation */
            ab_conn *c = drv->conn_new();
            answer = c ? run_step(&st, c, 1, NULL) : NULL;
            if (!c)
                ab_fail("internal", NULL, "out of memory");
            drv->conn_free(c);
        } else {
            if (!drv->conn_begin(session, &st))
                answer = run_step(&st, session, 0, loaded ? NULL : latency_file);
            if (!answer) { /* leave the connection usable; the first error is the one answered */
                ab_error saved = ab_err;
                drv->recover(session, &st);
                ab_err = saved;
            }
            drv->conn_end(session, &st);
        }
    }
    if (!answer)
        fprintf(stderr, "abworker-c: step failed (%s): %s\n", ab_err.kind, ab_err.message);
    {
        ab_error saved = ab_err;
        drv->step_end(&st);
        ab_err = saved;
    }
done:
    free(st.row);
    free(gens);
    free(marks);
    ab_arena_free(&arena);
    return answer;
}

/* ---- the loop --------------------------------------------------------------------------------- */

/* JSON integers above INT64_MAX (u64 seeds) are rewritten as their two's-complement int64, which
 * jansson can hold and which becomes the same u64 again when cast (Python masks seeds the same
 * way: seed & (2^64 - 1)). */
static char *rewrite_big_ints(const char *line, size_t len)
{
    char *o = malloc(len * 2 + 32), *w = o;
    size_t i = 0;
    int in_str = 0;
    while (i < len) {
        char c = line[i];
        if (in_str) {
            *w++ = c;
            if (c == '\\' && i + 1 < len)
                *w++ = line[++i];
            else if (c == '"')
                in_str = 0;
            i++;
        } else if (c == '"') {
            in_str = 1;
            *w++ = c;
            i++;
        } else if (c >= '0' && c <= '9' && (i == 0 || !strchr("-.eE+0123456789", line[i - 1]))) {
            size_t j = i;
            while (j < len && line[j] >= '0' && line[j] <= '9')
                j++;
            int plain = j >= len || !strchr(".eE", line[j]);
            char num[32];
            if (plain && j - i >= 19 && j - i < sizeof num) {
                memcpy(num, line + i, j - i);
                num[j - i] = '\0';
                errno = 0;
                unsigned long long u = strtoull(num, NULL, 10);
                if (!errno && u > (unsigned long long)INT64_MAX) {
                    w += sprintf(w, "%lld", (long long)(int64_t)u);
                    i = j;
                    continue;
                }
            }
            memcpy(w, line + i, j - i);
            w += j - i;
            i = j;
        } else {
            *w++ = c;
            i++;
        }
    }
    *w = '\0';
    return o;
}

static void answer_error(void)
{
    json_t *a = json_object(), *e = json_object();
    /* one line, as the Python worker does */
    char *nl = strchr(ab_err.message, '\n');
    if (nl)
        *nl = '\0';
    size_t n = strlen(ab_err.message);
    while (n && (ab_err.message[n - 1] == ' ' || ab_err.message[n - 1] == '\r'))
        ab_err.message[--n] = '\0';
    json_object_set_new(e, "kind", json_string(ab_err.kind ? ab_err.kind : "internal"));
    json_object_set_new(e, "message", json_string(ab_err.message[0] ? ab_err.message : ab_err.kind));
    if (ab_err.sqlstate[0])
        json_object_set_new(e, "sqlstate", json_string(ab_err.sqlstate));
    json_object_set_new(a, "ok", json_false());
    json_object_set_new(a, "error", e);
    char *text = json_dumps(a, JSON_COMPACT | JSON_ENSURE_ASCII);
    if (!text) /* a message jansson will not encode (invalid UTF-8 from a server or driver) */
        text = strdup("{\"ok\": false, \"error\": {\"kind\": \"internal\", \"message\": \"unencodable error message\"}}");
    fprintf(out, "%s\n", text);
    fflush(out);
    free(text);
    json_decref(a);
}

static void answer_ok(json_t *fields)
{
    json_t *a = json_object(); /* "ok" first, for a reader of the log */
    json_object_set_new(a, "ok", json_true());
    json_object_update(a, fields);
    json_decref(fields);
    char *text = json_dumps(a, JSON_COMPACT | JSON_ENSURE_ASCII);
    fprintf(out, "%s\n", text);
    fflush(out);
    free(text);
    json_decref(a);
}

/* Splits "c-libpq/format=binary,scan=singlerow" and configures the driver. */
static void choose_method(const char *name)
{
    char base[128];
    const char *slash = strchr(name, '/');
    size_t bl = slash ? (size_t)(slash - name) : strlen(name);
    snprintf(base, sizeof base, "%.*s", (int)bl, name);
    drv = NULL;
    for (size_t k = 0; k < sizeof DRIVERS / sizeof *DRIVERS; k++)
        if (!strcmp(DRIVERS[k]->base, base))
            drv = DRIVERS[k];
    if (!drv) {
        snprintf(unsupported_why, sizeof unsupported_why, "unknown method '%s' (abworker-c knows c-libpq, c-odbc, c-sqlite, c-libmariadb)",
                 base);
        return;
    }
    if (!slash)
        return;
    char *settings = strdup(slash + 1), *save = NULL;
    for (char *kv = strtok_r(settings, ",", &save); kv; kv = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(kv, '=');
        if (!eq) {
            snprintf(unsupported_why, sizeof unsupported_why, "%.1000s: setting '%.1000s' is not key=value", name, kv);
            break;
        }
        *eq = '\0';
        if (drv->configure(kv, eq + 1)) {
            snprintf(unsupported_why, sizeof unsupported_why, "%.1000s: %s", name, ab_err.message);
            break;
        }
    }
    free(settings);
}

int main(int argc, char **argv)
{
    /* stdout belongs to the protocol: keep a private copy of it and send everything else any
     * library prints to stderr, the worker's log. */
    int fd = dup(1);
    if (fd < 0 || dup2(2, 1) < 0 || !(out = fdopen(fd, "w"))) {
        perror("abworker-c: stdout");
        return 2;
    }
    if (argc != 2) {
        fprintf(stderr, "usage: abworker-c METHOD[/key=value,...]  (c-libpq, c-odbc, c-sqlite, c-libmariadb)\n");
        return 2;
    }
    method_name = argv[1];
    choose_method(method_name);
    if (unsupported_why[0])
        fprintf(stderr, "abworker-c: %s\n", unsupported_why);

    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    while ((len = getline(&line, &cap, stdin)) >= 0) {
        size_t k = 0;
        while (k < (size_t)len && (line[k] == ' ' || line[k] == '\t' || line[k] == '\r' || line[k] == '\n'))
            k++;
        if (k == (size_t)len)
            continue;
        memset(&ab_err, 0, sizeof ab_err);
        char *fixed = rewrite_big_ints(line, (size_t)len);
        json_error_t jerr;
        json_t *msg = json_loads(fixed, JSON_DECODE_ANY, &jerr);
        free(fixed);
        const char *op = json_string_value(json_object_get(msg, "op"));
        int bye = op && !strcmp(op, "bye");
        json_t *a = NULL;
        if (!msg || !json_is_object(msg)) {
            ab_fail("protocol", NULL, "not a JSON object: %s", msg ? "wrong type" : jerr.text);
        } else if (unsupported_why[0]) {
            ab_fail("unsupported", NULL, "%s", unsupported_why);
        } else if (!op) {
            ab_fail("protocol", NULL, "a message needs an op");
        } else if (!strcmp(op, "hello")) {
            a = on_hello();
        } else if (!strcmp(op, "open")) {
            a = on_open(msg);
        } else if (!strcmp(op, "step")) {
            a = on_step(msg);
        } else if (!strcmp(op, "close") || bye) {
            a = on_close();
        } else if (!strcmp(op, "generate")) {
            a = on_generate(msg);
        } else if (!strcmp(op, "checksum")) {
            a = on_checksum(msg);
        } else if (!strcmp(op, "histogram")) {
            a = on_histogram(msg);
        } else if (!strcmp(op, "schedule")) {
            a = on_schedule(msg);
        } else {
            ab_fail("protocol", NULL, "unknown op '%s'", op);
        }
        if (a)
            answer_ok(a);
        else
            answer_error();
        json_decref(msg);
        if (bye)
            break;
    }
    free(line);
    if (session && drv)
        drv->conn_free(session);
    return 0;
}
