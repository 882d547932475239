/* abworker-c: the C worker of accessbench (protocol/PROTOCOL.md, version 1).
 *
 * parse message → the op's handler → answer; a step is parsed and checked (parse_step), its
 * arguments generated before the clock (generate_params), then run (run_parsed) by the driver
 * the method names in the registry (DRIVERS). One JSON object per line each way; stdout carries
 * nothing else (every library's output goes to stderr). Steps under load (several clients,
 * duration, rate, connection policy) run in load.c. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "assoc.h"
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

int ab_ep_read_only(json_t *endpoint)
{
    return json_is_true(json_object_get(endpoint, "read_only"));
}

int ab_ep_pg_options(json_t *endpoint, char *buf, size_t len)
{
    const char *schema = ab_ep_str(endpoint, "schema");
    int has_schema = schema && *schema, ro = ab_ep_read_only(endpoint);
    if (!has_schema && !ro)
        return 0;
    int n = snprintf(buf, len, "%s%s%s%s", has_schema ? "-c search_path=" : "", has_schema ? schema : "",
                     has_schema && ro ? " " : "", ro ? "-c default_transaction_read_only=on" : "");
    if (n < 0 || (size_t)n >= len) /* never cut off: it could drop read_only */
        return ab_fail("protocol", NULL, "endpoint schema: %zu bytes, too long for the startup options",
                       strlen(schema));
    return 1;
}

/* ---- the session ------------------------------------------------------------------------- */

static const ab_driver *drv;
static const char *method_name;
static char unsupported_why[4096]; /* non-empty: every message is answered unsupported */
static json_t *endpoint;           /* the endpoint of the open connection, NULL when closed */
static ab_conn *session;           /* the worker's own connection (open's), NULL when closed */
static FILE *out;

/* The registry: every driver of this worker, named by its method base (ab_driver.base). The
 * methods the worker knows are these and no others; a new driver is one line here and one
 * entry in DRIVERS. */
extern const ab_driver ab_driver_libpq, ab_driver_odbc, ab_driver_sqlite, ab_driver_libmariadb;
static const ab_driver *const DRIVERS[] = {&ab_driver_libpq, &ab_driver_odbc, &ab_driver_sqlite, &ab_driver_libmariadb};
#define NDRIVERS (sizeof DRIVERS / sizeof *DRIVERS)

/* the names of the step kinds and modes, by their K_ and M_ numbers */
static const char *const STEP_KINDS[] = {[K_CONNECT] = "connect", [K_SCAN] = "scan", [K_EXEC] = "exec",
                                          [K_BATCH] = "batch", [K_LOAD] = "load"};
static const char *const MODES[] = {[M_NONE] = NULL, [M_LITERAL] = "literal", [M_EXTENDED] = "extended",
                                    [M_PREPARED] = "prepared", [M_RECORD] = "record"};
#define NKINDS ((int)(sizeof STEP_KINDS / sizeof *STEP_KINDS))
#define NMODES ((int)(sizeof MODES / sizeof *MODES))

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
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

static int by_name(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Every method of this worker: the registry's bases, sorted, each once. */
static json_t *hello_methods(void)
{
    const char *names[NDRIVERS];
    for (size_t k = 0; k < NDRIVERS; k++)
        names[k] = DRIVERS[k]->base;
    qsort(names, NDRIVERS, sizeof *names, by_name);
    json_t *methods = json_array();
    for (size_t k = 0; k < NDRIVERS; k++)
        if (!k || strcmp(names[k], names[k - 1]))
            json_array_append_new(methods, json_string(names[k]));
    return methods;
}

/* What the worker can do with this driver (the driver adds its batch style). */
static json_t *hello_capabilities(void)
{
    json_t *caps = json_object(), *dbms = json_array(), *kinds = json_array(), *modes = json_array();
    for (int k = 0; k < 3 && drv->dbms[k]; k++)
        json_array_append_new(dbms, json_string(drv->dbms[k]));
    for (int k = 0; k < NKINDS; k++) /* load: with a driver that runs its statements (query) */
        if (k != K_LOAD || drv->query)
            json_array_append_new(kinds, json_string(STEP_KINDS[k]));
    for (int m = M_LITERAL; m <= M_PREPARED; m++)
        json_array_append_new(modes, json_string(MODES[m]));
    if (drv->record)
        json_array_append_new(modes, json_string(MODES[M_RECORD]));
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
    return caps;
}

/* The settings the host pins for every driver: how clients, per-request and open loops run. */
static void hello_host_settings(json_t *settings)
{
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
}

/* How load steps run, when the method has them (a driver's variant may leave them out). */
static void hello_load_settings(json_t *settings, json_t *caps)
{
    json_t *kinds = json_object_get(caps, "kinds");
    for (size_t k = 0; k < json_array_size(kinds); k++)
        if (!strcmp(json_string_value(json_array_get(kinds, k)), STEP_KINDS[K_LOAD])) {
            json_object_set_new(settings, "load", json_string(AB_ASSOC_WORDS));
            json_object_set_new(settings, "load statements", json_string(drv->query_words));
        }
}

static json_t *on_hello(json_t *msg)
{
    (void)msg;
    json_t *a = json_object(), *settings = json_object(), *caps = hello_capabilities();
    json_object_set_new(a, "protocol", json_integer(PROTOCOL_VERSION));
    json_object_set_new(a, "name", json_string(method_name));
    json_object_set_new(a, "language", json_string("c"));
    json_object_set_new(a, "runtime", json_string(AB_RUNTIME));
    json_object_set_new(a, "driver", json_string(drv->driver));
    drv->hello(a, settings, caps); /* adds driver_version; methods comes right after it */
    json_object_set_new(a, "methods", hello_methods());
    hello_host_settings(settings);
    hello_load_settings(settings, caps);
    json_object_set_new(a, "settings", settings);
    json_object_set_new(a, "capabilities", caps);
    return a;
}

static int reaches(const char *dbms)
{
    for (int k = 0; k < 3 && drv->dbms[k]; k++)
        if (dbms && !strcmp(dbms, drv->dbms[k]))
            return 1;
    return 0;
}

/* Closes the worker's own connection, if open. */
static void close_session(void)
{
    if (!endpoint)
        return;
    drv->conn_free(session);
    session = NULL;
    json_decref(endpoint);
    endpoint = NULL;
}

/* The endpoint of an open message, checked; NULL with ab_err set. */
static json_t *parse_endpoint(json_t *msg)
{
    json_t *ep = json_object_get(msg, "endpoint");
    if (!json_is_object(ep)) {
        proto_err("open needs an endpoint object%s", "");
        return NULL;
    }
    const char *dbms = ab_ep_str(ep, "dbms");
    if (!reaches(dbms)) {
        ab_fail("unsupported", NULL, "%s does not reach dbms '%s'", method_name, dbms ? dbms : "(none)");
        return NULL;
    }
    json_t *ro = json_object_get(ep, "read_only");
    if (ro && !json_is_boolean(ro) && !json_is_null(ro)) {
        proto_err("endpoint read_only: expected true or false%s", "");
        return NULL;
    }
    return ep;
}

static json_t *on_open(json_t *msg)
{
    json_t *ep = parse_endpoint(msg);
    if (!ep)
        return NULL;
    close_session(); /* a second open replaces the first connection */
    if (!(session = drv->conn_new())) {
        ab_fail("internal", NULL, "out of memory");
        return NULL;
    }
    json_t *a = json_object();
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

static json_t *on_close(json_t *msg)
{
    (void)msg;
    close_session();
    return json_object();
}

static json_t *on_generate(json_t *msg)
{
    int64_t count;
    ab_arena arena = {0};
    ab_gen g;
    char err[256];
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
        ab_gen_next(&g, i, &p, &arena);
        json_array_append_new(values, ab_param_json(&p));
    }
    ab_arena_free(&arena);
    json_t *a = json_object();
    json_object_set_new(a, "values", values);
    return a;
}

static int typed_float(json_t *val, ab_value *v)
{
    const char *hex = json_string_value(val);
    if (!hex || strlen(hex) != 16)
        return proto_err("a float value is 16 hex digits%s", "");
    uint64_t bits = strtoull(hex, NULL, 16);
    v->type = AB_FLOAT;
    memcpy(&v->u.f, &bits, 8);
    return 0;
}

static int typed_decimal(json_t *val, ab_value *v, ab_arena *arena)
{
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
    return 0;
}

static int typed_bytes(json_t *val, ab_value *v, ab_arena *arena)
{
    const char *hex = json_string_value(val);
    size_t n = hex ? strlen(hex) : 1;
    unsigned char *b = ab_arena_alloc(arena, n / 2 + 1);
    if (!hex || ab_unhex(hex, n, b))
        return proto_err("a bytes value is an even number of hex digits%s", "");
    v->type = AB_BYTES;
    v->u.s.p = (const char *)b;
    v->u.s.n = n / 2;
    return 0;
}

/* the typed values whose value is an integer */
static const struct {
    const char *name;
    ab_type type;
} INT_TYPES[] = {{"int", AB_INT}, {"timestamp", AB_TIMESTAMP}, {"date", AB_DATE}, {"time", AB_TIME}};

/* A typed conformance value → the native value the drivers produce. */
static int typed_value(json_t *t, ab_value *v, ab_arena *arena)
{
    const char *type = json_string_value(json_object_get(t, "type"));
    json_t *val = json_object_get(t, "value");
    if (!type)
        return proto_err("a typed value needs a type%s", "");
    for (size_t k = 0; k < sizeof INT_TYPES / sizeof *INT_TYPES; k++) {
        if (strcmp(type, INT_TYPES[k].name))
            continue;
        if (!json_is_integer(val))
            return proto_err("a %s value must be an integer", type);
        v->type = INT_TYPES[k].type;
        v->u.i = (int64_t)json_integer_value(val);
        return 0;
    }
    if (!strcmp(type, "null")) {
        v->type = AB_NULL;
    } else if (!strcmp(type, "bool")) {
        v->type = AB_BOOL;
        v->u.i = json_is_true(val);
    } else if (!strcmp(type, "text")) {
        if (!json_is_string(val))
            return proto_err("a text value is a string%s", "");
        v->type = AB_TEXT;
        v->u.s.p = json_string_value(val);
        v->u.s.n = json_string_length(val);
    } else if (!strcmp(type, "float")) {
        return typed_float(val, v);
    } else if (!strcmp(type, "decimal")) {
        return typed_decimal(val, v, arena);
    } else if (!strcmp(type, "bytes")) {
        return typed_bytes(val, v, arena);
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

/* A schedule message's rate, count, arrival and seed, checked. */
static int parse_schedule(json_t *msg, double *rate, int64_t *count, int *poisson, uint64_t *seed)
{
    const char *arrival = json_string_value(json_object_get(msg, "arrival"));
    const char *hex = json_string_value(json_object_get(msg, "seed"));
    if (get_num(msg, "rate", 0, rate) || get_int(msg, "count", 0, count))
        return -1;
    if (!(*rate > 0))
        return proto_err("schedule: rate must be positive%s", "");
    if (arrival && strcmp(arrival, "poisson") && strcmp(arrival, "uniform"))
        return proto_err("schedule: unknown arrival '%s'", arrival);
    char *end = NULL;
    *seed = hex ? strtoull(hex, &end, 16) : 0;
    if (!hex || !*hex || *end)
        return proto_err("schedule: the seed is 16 hex digits%s", "");
    *poisson = !arrival || !strcmp(arrival, "poisson");
    return 0;
}

/* The first count intended start offsets of an arrival schedule (conformance: schedule.py). */
static json_t *on_schedule(json_t *msg)
{
    double rate;
    int64_t count;
    int poisson = 1;
    uint64_t seed = 0;
    if (parse_schedule(msg, &rate, &count, &poisson, &seed))
        return NULL;
    ab_schedule sched;
    ab_schedule_init(&sched, rate, poisson, seed);
    json_t *offsets = json_array();
    for (int64_t i = 0; i < count; i++)
        json_array_append_new(offsets, json_integer(ab_schedule_next(&sched)));
    json_t *a = json_object();
    json_object_set_new(a, "offsets", offsets);
    return a;
}

/* ---- steps: the plain passes ------------------------------------------------------------ */

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

/* The statements a verification pass's operations sent, as the worker counts them: a load's
 * (assoc.c counts each it sends), one per operation of a scan or an exec step that sends no
 * BEGIN/COMMIT and no HANDLER reads; -1 where the worker does not count (batches: a driver's
 * batch style decides its round trips). */
static int64_t statements_sent(const ab_step *st)
{
    if (st->kind == K_LOAD)
        return ab_assoc_statements(st);
    if ((st->kind == K_SCAN || st->kind == K_EXEC) && !st->commit_every && st->mode != M_RECORD)
        return st->nops;
    return -1;
}

/* The verification pass on connection c: every row checksummed, first_op_ns the cold start,
 * and with dump the first rows read as typed values (ab_emit writes them beside the checksum).
 * per_request: each operation connects, prepares, runs and disconnects on its own. */
static json_t *verify_pass(ab_step *st, ab_conn *c, int per_request)
{
    int64_t nops = st->nops, rows = 0, count;
    int reads = ab_step_reads(st) || st->kind == K_LOAD;
    int dumps = st->dump > 0 && reads; /* statements that read no rows dump nothing */
    ab_sink sink = {{0, 0}, 0, 0, dumps ? json_array() : NULL, st->dump};
    st->sink = &sink;
    int64_t start = now_ns(), first = 0;
    for (int64_t i = 0; i < nops; i++) {
        count = 0;
        if (ab_client_op(drv, c, per_request, st, i, i, &count)) {
            json_decref(sink.dump);
            return NULL;
        }
        if (i == 0) /* the cold start: the first operation, its rows checksummed */
            first = now_ns() - start;
        rows += count;
    }
    char hex[17];
    ab_checksum_hex(&sink.sum, hex);
    json_t *a = json_object();
    json_object_set_new(a, "n", json_integer(nops));
    json_object_set_new(a, "rows", json_integer(rows));
    /* a load's entities are rows of their tables, of several widths */
    json_object_set_new(a, "values", json_integer(st->kind == K_LOAD ? sink.values : reads ? rows * sink.width : 0));
    json_object_set_new(a, "checksum", json_string(hex));
    int64_t sent = statements_sent(st);
    if (sent >= 0)
        json_object_set_new(a, "statements", json_integer(sent));
    json_object_set_new(a, "first_op_ns", json_integer(first));
    if (sink.dump)
        json_object_set_new(a, "dump", sink.dump);
    int64_t bytes = st->size && drv->result_bytes ? drv->result_bytes(c) : -1;
    if (bytes >= 0)
        json_object_set_new(a, "result_bytes", json_integer(bytes));
    return a;
}

/* The timed pass on connection c: operation i runs from the end of i−1 to its own end, one
 * clock read per operation; the latencies go to latency_file when it is given. */
static json_t *timed_pass(ab_step *st, ab_conn *c, const char *latency_file)
{
    int64_t nops = st->nops, rows = 0, count;
    json_t *a = json_object();
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
    ab_timed_fields(a, st, nops, prev - start, rows, st->ncols, &before, &after);
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

/* ---- steps: a step message parsed and checked ----------------------------------------------- */

/* A step as its message asks for it, checked: parse_step fills it (every protocol error of a
 * step is found there), generate_params makes its arguments, run_parsed runs it, step_free
 * frees what it owns. */
typedef struct {
    ab_step st;
    ab_load load;
    int loaded;               /* histogram, clients, duration, rate or policy: a step under load */
    const char *latency_file; /* the plain timed pass writes its latencies here */
    ab_gen *gens;             /* exec, batch: one generator per '?' marker */
    size_t *marks;            /* the markers' offsets in sql */
    ab_arena arena;           /* the step's memory: arguments, statement texts */
} parsed_step;

static int parse_kind(const char *kind, ab_step *st)
{
    if (!kind)
        return proto_err("a step needs a kind%s", "");
    for (int k = 0; k < NKINDS; k++)
        if (!strcmp(kind, STEP_KINDS[k])) {
            st->kind = k;
            return 0;
        }
    return proto_err("unknown step kind '%s'", kind);
}

/* The names of a shape's list (columns, where) into the step's arena; -1 when it is not a list
 * of strings. */
static int shape_names(json_t *shape, const char *key, ab_arena *arena, const char ***names)
{
    json_t *list = json_object_get(shape, key), *name;
    size_t k;
    if (!json_is_array(list))
        return -1;
    *names = ab_arena_alloc(arena, (json_array_size(list) + 1) * sizeof **names);
    json_array_foreach(list, k, name)
    {
        if (!((*names)[k] = json_string_value(name)))
            return -1;
    }
    return (int)json_array_size(list);
}

/* The statement's shape (PROTOCOL.md, `shape`): kind NULL for null, and for a shape without a
 * kind, a table or its lists of names, which the driver then treats as none. */
static void parse_shape(json_t *msg, ab_step *st)
{
    json_t *shape = json_object_get(msg, "shape");
    ab_shape *sh = &st->shape;
    sh->kind = json_string_value(json_object_get(shape, "kind"));
    sh->table = json_string_value(json_object_get(shape, "table"));
    sh->ncolumns = shape_names(shape, "columns", st->arena, &sh->columns);
    sh->nwhere = shape_names(shape, "where", st->arena, &sh->where);
    if (!sh->kind || !sh->table || !*sh->table || sh->ncolumns < 0 || sh->nwhere < 0)
        *sh = (ab_shape){0};
}

/* iterations, commit_every (exec only), batch, verify, fetch, and sql and its shape (all but
 * connect). */
static int parse_fields(json_t *msg, ab_step *st, const char *kind)
{
    if (get_int(msg, "iterations", -1, &st->n) || get_int(msg, "commit_every", 0, &st->commit_every) ||
        get_int(msg, "batch", 0, &st->batch) || get_int(msg, "dump", 0, &st->dump))
        return -1;
    if (st->n < 0)
        return proto_err("a step needs iterations >= 0%s", "");
    if (st->kind != K_EXEC || st->commit_every < 0)
        st->commit_every = 0;
    st->verify = truthy(json_object_get(msg, "verify"));
    st->size = truthy(json_object_get(msg, "size"));
    json_t *fetch = json_object_get(msg, "fetch");
    st->fetch = st->kind == K_SCAN || st->kind == K_LOAD || (st->kind == K_EXEC && (fetch ? truthy(fetch) : 0));
    if (st->kind != K_CONNECT && !(st->sql = json_string_value(json_object_get(msg, "sql"))))
        return proto_err("a %s step needs sql", kind);
    if (st->sql)
        parse_shape(msg, st);
    return 0;
}

/* Record-level access: the table it reads (and for an exec step the index whose key the
 * parameters are). */
static int parse_record(json_t *msg, ab_step *st)
{
    json_t *record = json_object_get(msg, "record");
    st->record_table = json_string_value(json_object_get(record, "table"));
    st->record_index = json_string_value(json_object_get(record, "index"));
    if (!drv->record)
        return ab_fail("unsupported", NULL, "%s has no record-level access (mode record)", method_name);
    if (!st->record_table || (st->kind == K_EXEC && !st->record_index))
        return proto_err("mode record needs record.table (and record.index for an exec step)%s", "");
    return 0;
}

/* An exec step needs a mode; a scan step may ask for record. */
static int parse_mode(json_t *msg, ab_step *st)
{
    const char *mode = json_string_value(json_object_get(msg, "mode"));
    if (st->kind == K_EXEC) {
        if (!mode)
            return proto_err("an exec step needs a mode%s", "");
        for (int m = M_NONE + 1; m < NMODES && st->mode == M_NONE; m++)
            if (!strcmp(mode, MODES[m]))
                st->mode = m;
        if (st->mode == M_NONE)
            return proto_err("unknown mode '%s'", mode);
    } else if (st->kind == K_SCAN && mode && !strcmp(mode, "record")) {
        st->mode = M_RECORD;
    }
    return st->mode == M_RECORD ? parse_record(msg, st) : 0;
}

/* The connection policy: persistent (the default) or per-request. */
static int parse_policy(json_t *msg, const ab_step *st, ab_load *load)
{
    const char *policy = json_string_value(json_object_get(msg, "policy"));
    if (policy && !strcmp(policy, "per-request"))
        load->per_request = 1;
    else if (policy && strcmp(policy, "persistent"))
        return ab_fail("unsupported", NULL, "%s has no %s connection policy (it has persistent and per-request)",
                       method_name, policy);
    if (load->per_request && st->commit_every > 1)
        return ab_fail("unsupported", NULL,
                       "commit_every %lld with a connection per request: a transaction cannot span requests",
                       (long long)st->commit_every);
    return 0;
}

/* Steps under load: clients, duration, open loop, connection policy. */
static int parse_load(json_t *msg, const ab_step *st, ab_load *load, int *loaded)
{
    int64_t clients, seed, skip, start_at;
    double duration_ms, rate;
    *load = (ab_load){.clients = 1, .skip_ns = -1};
    if (get_int(msg, "clients", 1, &clients) || get_num(msg, "duration_ms", 0, &duration_ms) ||
        get_num(msg, "rate", 0, &rate) || get_int(msg, "schedule_seed", 0, &seed) ||
        get_int(msg, "phase_ns", 0, &load->phase_ns) || get_int(msg, "late_ns", 1000000, &load->late_ns) ||
        get_int(msg, "skip_ns", 0, &skip) || get_int(msg, "start_at_unix_ns", 0, &start_at))
        return -1;
    if (clients < 1 || clients > 100000 || duration_ms < 0 || rate < 0 || load->phase_ns < 0)
        return proto_err("a step needs 1 <= clients <= 100000, duration_ms >= 0, rate >= 0 and phase_ns >= 0%s", "");
    const char *arrival = json_string_value(json_object_get(msg, "arrival"));
    if (arrival && strcmp(arrival, "poisson") && strcmp(arrival, "uniform"))
        return proto_err("unknown arrival '%s' (poisson, uniform)", arrival);
    if (parse_policy(msg, st, load))
        return -1;
    load->clients = (int)clients;
    load->duration_ns = (int64_t)(duration_ms * 1e6);
    load->rate = rate;
    load->poisson = !arrival || !strcmp(arrival, "poisson");
    load->seed = (uint64_t)seed;
    load->skip_ns = skip > 0 ? skip : -1;
    load->start_at_unix_ns = start_at > 0 ? start_at : 0;
    *loaded = truthy(json_object_get(msg, "histogram")) || load->clients != 1 || load->duration_ns || load->rate ||
              load->per_request;
    if (*loaded && load->duration_ns && !st->nops)
        return proto_err("a step by duration needs iterations >= 1 to cycle through%s", "");
    return 0;
}

/* The markers of sql, and for exec and batch one generator per marker; a scan has none. */
static int parse_params(json_t *msg, parsed_step *p)
{
    ab_step *st = &p->st;
    json_t *specs = json_object_get(msg, "params");
    int nspecs = json_is_array(specs) ? (int)json_array_size(specs) : 0;
    if (st->sql) {
        st->nparams = ab_sql_markers(st->sql, &p->marks);
        st->marks = p->marks;
    }
    if (st->kind == K_SCAN && st->nparams)
        return ab_fail("protocol", NULL, "a scan runs one query without params, but the sql has %d markers",
                       st->nparams);
    if (st->kind != K_EXEC && st->kind != K_BATCH && st->kind != K_LOAD)
        return 0;
    if (nspecs != st->nparams)
        return ab_fail("protocol", NULL, "%d markers but %d params", st->nparams, nspecs);
    p->gens = calloc((size_t)(nspecs ? nspecs : 1), sizeof *p->gens);
    char err[256];
    ab_type *types = ab_arena_alloc(&p->arena, (size_t)(nspecs + 1) * sizeof *types);
    for (int k = 0; k < nspecs; k++) {
        if (ab_gen_init(&p->gens[k], json_array_get(specs, (size_t)k), &p->arena, err, sizeof err))
            return proto_err("%s", err);
        types[k] = p->gens[k].type;
    }
    st->param_types = types;
    return 0;
}

/* A load step: the driver must run statements for it (query); the association's statements
 * with their markers as the driver writes them. */
static int parse_association(json_t *msg, ab_step *st)
{
    if (!drv->query)
        return ab_fail("unsupported", NULL, "%s has no load steps", method_name);
    return ab_assoc_parse(msg, st, drv->mark);
}

/* Parses and checks a step message into p (which step_free frees, whatever this returns). */
static int parse_step(json_t *msg, parsed_step *p)
{
    ab_step *st = &p->st;
    memset(p, 0, sizeof *p);
    st->arena = &p->arena;
    st->endpoint = endpoint;
    if (!endpoint)
        return proto_err("step before open%s", "");
    const char *kind = json_string_value(json_object_get(msg, "kind"));
    if (parse_kind(kind, st) || parse_fields(msg, st, kind) || parse_mode(msg, st))
        return -1;
    if (st->kind == K_BATCH && st->batch < 1)
        return proto_err("a batch step needs batch >= 1%s", "");
    st->nops = st->kind == K_BATCH ? (st->n + st->batch - 1) / st->batch : st->n;
    p->latency_file = json_string_value(json_object_get(msg, "latency_file"));
    if (parse_load(msg, st, &p->load, &p->loaded) || parse_params(msg, p))
        return -1;
    return st->kind == K_LOAD ? parse_association(msg, st) : 0;
}

static void step_free(parsed_step *p)
{
    ab_assoc_free(&p->st);
    free(p->st.row);
    free(p->gens);
    free(p->marks);
    ab_arena_free(&p->arena);
}

/* ---- steps: arguments, before the clock ------------------------------------------------------ */

static int endpoint_dialect(json_t *ep)
{
    const char *dbms = ab_ep_str(ep, "dbms");
    return !strcmp(dbms, "sqlite") ? AB_DIALECT_SQLITE : !strcmp(dbms, "mariadb") ? AB_DIALECT_MARIADB
                                                                                   : AB_DIALECT_POSTGRESQL;
}

/* literal: each operation's statement with its values inlined; record (exec): each key's
 * values as literals. */
static void render_texts(ab_step *st)
{
    int dialect = endpoint_dialect(st->endpoint);
    st->texts = ab_arena_alloc(st->arena, (size_t)(st->n + 1) * sizeof *st->texts);
    st->text_lens = ab_arena_alloc(st->arena, (size_t)(st->n + 1) * sizeof *st->text_lens);
    for (int64_t i = 0; i < st->n; i++) {
        const ab_param *row = &st->params[i * st->nparams];
        st->texts[i] = st->mode == M_LITERAL
                           ? ab_sql_inline(st->sql, st->marks, st->nparams, row, dialect, st->arena, &st->text_lens[i])
                           : key_literals(row, st->nparams, dialect, st->arena, &st->text_lens[i]);
    }
}

/* The arguments of every operation (n rows × nparams), generated before the clock. */
static void generate_params(parsed_step *p)
{
    ab_step *st = &p->st;
    int k = st->nparams;
    if (!p->gens)
        return;
    ab_param *params = ab_arena_alloc(&p->arena, (size_t)(st->n * k + 1) * sizeof *params);
    for (int64_t i = 0; i < st->n; i++)
        for (int j = 0; j < k; j++)
            ab_gen_next(&p->gens[j], i, &params[i * k + j], &p->arena);
    st->params = params;
    if (st->kind == K_EXEC && (st->mode == M_LITERAL || st->mode == M_RECORD))
        render_texts(st);
}

/* ---- steps: running a parsed step ------------------------------------------------------------ */

static json_t *run_pass(ab_step *st, ab_conn *c, int per_request, const char *latency_file)
{
    return st->verify ? verify_pass(st, c, per_request) : timed_pass(st, c, latency_file);
}

/* The verification pass of a per-request step: one client, a connection per operation. */
static json_t *run_per_request(ab_step *st)
{
    ab_conn *c = drv->conn_new();
    json_t *answer = c ? run_pass(st, c, 1, NULL) : NULL;
    if (!c)
        ab_fail("internal", NULL, "out of memory");
    drv->conn_free(c);
    return answer;
}

/* A plain pass on the worker's own connection. */
static json_t *run_on_session(ab_step *st, const char *latency_file)
{
    json_t *answer = NULL;
    if (!drv->conn_begin(session, st))
        answer = run_pass(st, session, 0, latency_file);
    if (!answer) { /* leave the connection usable; the first error is the one answered */
        ab_error saved = ab_err;
        drv->recover(session, st);
        ab_err = saved;
    }
    drv->conn_end(session, st);
    return answer;
}

/* step_begin, the pass the step asks for, step_end. */
static json_t *run_parsed(parsed_step *p)
{
    ab_step *st = &p->st;
    json_t *answer = NULL;
    ab_row_grow(st, 64);
    if (!drv->step_begin(st)) {
        if (p->loaded && !st->verify) /* every client leaves its own connection usable */
            answer = ab_run_loaded(drv, session, st, &p->load);
        else if (p->load.per_request)
            answer = run_per_request(st);
        else
            answer = run_on_session(st, p->loaded ? NULL : p->latency_file);
    }
    if (!answer)
        fprintf(stderr, "abworker-c: step failed (%s): %s\n", ab_err.kind, ab_err.message);
    ab_error saved = ab_err;
    drv->step_end(st);
    ab_err = saved;
    return answer;
}

static json_t *on_step(json_t *msg)
{
    parsed_step p;
    json_t *answer = NULL;
    if (!parse_step(msg, &p)) {
        generate_params(&p);
        answer = run_parsed(&p);
    }
    step_free(&p);
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

/* The registry's base names, "c-libpq, c-odbc, …". */
static const char *known_methods(void)
{
    static char names[512];
    if (!names[0])
        for (size_t k = 0; k < NDRIVERS; k++)
            snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", k ? ", " : "", DRIVERS[k]->base);
    return names;
}

static const ab_driver *driver_named(const char *base)
{
    for (size_t k = 0; k < NDRIVERS; k++)
        if (!strcmp(DRIVERS[k]->base, base))
            return DRIVERS[k];
    return NULL;
}

/* Hands each key=value of "format=binary,scan=singlerow" to the driver. */
static void configure_driver(const char *name, const char *settings)
{
    char *copy = strdup(settings), *save = NULL;
    for (char *kv = strtok_r(copy, ",", &save); kv; kv = strtok_r(NULL, ",", &save)) {
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
    free(copy);
}

/* Splits "c-libpq/format=binary,scan=singlerow": the driver from the registry, then its settings;
 * an unknown one makes every message answered unsupported. */
static void choose_method(const char *name)
{
    char base[128];
    const char *slash = strchr(name, '/');
    size_t bl = slash ? (size_t)(slash - name) : strlen(name);
    snprintf(base, sizeof base, "%.*s", (int)bl, name);
    if (!(drv = driver_named(base)))
        snprintf(unsupported_why, sizeof unsupported_why, "unknown method '%s' (abworker-c knows %s)", base,
                 known_methods());
    else if (slash)
        configure_driver(name, slash + 1);
}

/* The ops of the protocol, and what answers each. */
static const struct {
    const char *op;
    json_t *(*answer)(json_t *msg);
} HANDLERS[] = {
    {"hello", on_hello},       {"open", on_open},         {"step", on_step},
    {"close", on_close},       {"bye", on_close},         {"generate", on_generate},
    {"checksum", on_checksum}, {"histogram", on_histogram}, {"schedule", on_schedule},
};

/* The answer to one message (msg NULL: the line was not JSON, jerr says why), or NULL with
 * ab_err set. */
static json_t *answer_to(json_t *msg, const json_error_t *jerr)
{
    const char *op = json_string_value(json_object_get(msg, "op"));
    if (!msg || !json_is_object(msg))
        ab_fail("protocol", NULL, "not a JSON object: %s", msg ? "wrong type" : jerr->text);
    else if (unsupported_why[0])
        ab_fail("unsupported", NULL, "%s", unsupported_why);
    else if (!op)
        ab_fail("protocol", NULL, "a message needs an op");
    else {
        for (size_t k = 0; k < sizeof HANDLERS / sizeof *HANDLERS; k++)
            if (!strcmp(op, HANDLERS[k].op))
                return HANDLERS[k].answer(msg);
        ab_fail("protocol", NULL, "unknown op '%s'", op);
    }
    return NULL;
}

static int blank(const char *line, size_t len)
{
    size_t k = 0;
    while (k < len && (line[k] == ' ' || line[k] == '\t' || line[k] == '\r' || line[k] == '\n'))
        k++;
    return k == len;
}

/* One input line as JSON, u64 seeds rewritten; NULL (jerr says why) when it is not JSON. */
static json_t *parse_line(const char *line, size_t len, json_error_t *jerr)
{
    char *fixed = rewrite_big_ints(line, len);
    json_t *msg = json_loads(fixed, JSON_DECODE_ANY, jerr);
    free(fixed);
    return msg;
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
        fprintf(stderr, "usage: abworker-c METHOD[/key=value,...]  (%s)\n", known_methods());
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
        if (blank(line, (size_t)len))
            continue;
        memset(&ab_err, 0, sizeof ab_err);
        json_error_t jerr;
        json_t *msg = parse_line(line, (size_t)len, &jerr);
        const char *op = json_string_value(json_object_get(msg, "op"));
        int bye = op && !strcmp(op, "bye");
        json_t *a = answer_to(msg, &jerr);
        if (a)
            answer_ok(a);
        else
            answer_error();
        json_decref(msg);
        if (bye)
            break;
    }
    free(line);
    close_session();
    return 0;
}
