/* c-libpq: PostgreSQL's C client library.
 *
 * Settings (part of the method name): format=text|binary (result format of the extended
 * protocol), scan=buffered|singlerow|copy-binary|copy-text (how rows are read: a scan by
 * COPY (query) TO STDOUT in that format, every value decoded by its column's type),
 * batch=pipeline|copy. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libpq-fe.h>

#include "driver.h"
#include "tls.h"

/* type OIDs (catalog/pg_type_d.h) */
#define BOOLOID 16
#define BYTEAOID 17
#define CHAROID 18
#define NAMEOID 19
#define INT8OID 20
#define INT2OID 21
#define INT4OID 23
#define TEXTOID 25
#define OIDOID 26
#define XIDOID 28
#define CIDOID 29
#define FLOAT4OID 700
#define FLOAT8OID 701
#define BPCHAROID 1042
#define VARCHAROID 1043
#define DATEOID 1082
#define TIMEOID 1083
#define TIMESTAMPOID 1114
#define TIMESTAMPTZOID 1184
#define NUMERICOID 1700

#define PG_EPOCH_DAYS 10957             /* 2000-01-01 − 1970-01-01 */
#define PG_EPOCH_US 946684800000000LL

static int opt_binary, opt_singlerow, opt_copy;
static int opt_copyout; /* scan=copy-binary (1) or copy-text (2): scans read by COPY … TO STDOUT */

/* per step, shared by every connection (made in step_begin, only read afterwards) */
static char *sql_dollar;          /* the statement with $n markers */
static const char **values;       /* n × nparams parameters as sent (NULL = SQL NULL) */
static int *lengths;              /* n × nparams: their lengths (read for binary ones) */
static Oid *types;                /* nparams: the type OID bound (0: the server infers it) */
static int *formats;              /* nparams: 0 text, 1 binary */
static char *copy_sql;            /* batch=copy: COPY t (cols) FROM STDIN */
static char *copy_data;           /* every row in COPY text format */
static size_t *copy_off;          /* row r's data starts at copy_off[r] */
static char *copy_out_sql;        /* scan=copy-…: COPY (query) TO STDOUT (FORMAT …) */

struct ab_conn {
    PGconn *pg;
    int stmt_counter;
    char prepared_name[32]; /* non-empty once prepared in this step */
    ab_buf scratch;         /* decoded bytea / numeric text of one row */
    Oid *out_types;         /* scan=copy-…: the result's column types, described untimed */
    int out_nc;
    int64_t largest;        /* the step's largest buffered result (PQresultMemorySize), -1: none */
    /* a load step's statement: its parameters as sent (grown, never shrunk; reused per call) */
    const char **qvalues;
    int *qlengths, *qformats;
    Oid *qtypes;
    int qcap;
    ab_arena qarena;        /* binary and \x forms of its values; freed after the step */
};

/* ---- connection ------------------------------------------------------------------------------ */

typedef struct {
    const char *kw[10 + AB_PG_TLS_MAX], *val[10 + AB_PG_TLS_MAX];
    char port[32], options[600];
} conninfo;

/* The endpoint as libpq's keywords, its TLS keys as tls.c maps them; -1 with ab_err set when
 * this libpq cannot do what they ask. */
static int conninfo_from(json_t *ep, conninfo *ci)
{
    int k = 0;
    const char *s;
    ab_tls tls;
    memset(ci, 0, sizeof *ci);
    if (ab_tls_read(ep, &tls) || ab_pg_tls_check(&tls, "c-libpq"))
        return -1;
#define ADD(K, V)                                                                                                      \
    do {                                                                                                               \
        ci->kw[k] = (K);                                                                                               \
        ci->val[k++] = (V);                                                                                            \
    } while (0)
    if ((s = ab_ep_str(ep, "host")))
        ADD("host", s);
    if (ab_ep_port(ep, ci->port, sizeof ci->port))
        ADD("port", ci->port);
    if ((s = ab_ep_str(ep, "database")))
        ADD("dbname", s);
    if ((s = ab_ep_str(ep, "user")))
        ADD("user", s);
    if ((s = ab_ep_str(ep, "password")) && *s)
        ADD("password", s);
    k += ab_pg_tls_params(&tls, &ci->kw[k], &ci->val[k]);
    int opts = ab_ep_pg_options(ep, ci->options, sizeof ci->options);
    if (opts < 0)
        return -1;
    if (opts)
        ADD("options", ci->options);
#undef ADD
    return 0;
}

static int fail_conn(PGconn *c)
{
    const char *m = c ? PQerrorMessage(c) : "out of memory";
    return ab_fail("db", NULL, "%s", m && *m ? m : "connection failed");
}

static int fail_result(ab_conn *c, PGresult *r)
{
    if (!r)
        return fail_conn(c->pg);
    const char *state = PQresultErrorField(r, PG_DIAG_SQLSTATE);
    const char *sev = PQresultErrorField(r, PG_DIAG_SEVERITY_NONLOCALIZED);
    const char *primary = PQresultErrorField(r, PG_DIAG_MESSAGE_PRIMARY);
    if (primary)
        ab_fail("db", state, "%s: %s", sev ? sev : "ERROR", primary);
    else {
        const char *m = PQresultErrorMessage(r);
        ab_fail("db", state, "%s", m && *m ? m : PQresStatus(PQresultStatus(r)));
    }
    return -1;
}

static int configure(const char *key, const char *value)
{
    if (!strcmp(key, "format") && (!strcmp(value, "text") || !strcmp(value, "binary")))
        opt_binary = value[0] == 'b';
    else if (!strcmp(key, "scan") && (!strcmp(value, "buffered") || !strcmp(value, "singlerow")))
        opt_singlerow = value[0] == 's';
    else if (!strcmp(key, "scan") && (!strcmp(value, "copy-binary") || !strcmp(value, "copy-text")))
        opt_copyout = value[5] == 'b' ? 1 : 2;
    else if (!strcmp(key, "batch") && (!strcmp(value, "pipeline") || !strcmp(value, "copy")))
        opt_copy = value[0] == 'c';
#ifndef LIBPQ_HAS_CHUNK_MODE
    else if (!strcmp(key, "scan") && !strncmp(value, "chunked", 7))
        return ab_fail("unsupported", NULL,
                       "scan=chunked needs PQsetChunkedRowsMode (libpq 17 or later); this worker was built "
                       "against an older libpq");
#endif
    else
        return ab_fail("unsupported", NULL,
                       "c-libpq has no setting %s=%s (format=text|binary, scan=buffered|singlerow|copy-binary|copy-text, "
                       "batch=pipeline|copy)",
                       key, value);
    return 0;
}

static const char *batch_style(void)
{
    return opt_copy ? "COPY t (cols) FROM STDIN (text format: booleans t/f, floats in shortest round-trip text, decimals "
                      "and dates as text, bytea as \\x hex) inside BEGIN/COMMIT, one COPY per group"
                    : "pipeline mode: BEGIN, PQsendQueryPrepared per row (prepared once, in the first group), COMMIT, "
                      "one PQpipelineSync per group, then every result read";
}

static void hello(json_t *a, json_t *s, json_t *caps)
{
    char v[32];
    int lv = PQlibVersion();
    snprintf(v, sizeof v, "%d.%d", lv / 10000, lv % 10000);
    json_object_set_new(a, "driver_version", json_string(v));
    json_object_set_new(caps, "batch", json_string(batch_style()));
    json_object_set_new(s, "format", json_string(opt_binary ? "binary" : "text"));
    json_object_set_new(s, "scan", json_string(opt_copyout == 1 ? "copy-binary" : opt_copyout == 2 ? "copy-text"
                                               : opt_singlerow ? "singlerow" : "buffered"));
    json_object_set_new(s, "batch", json_string(opt_copy ? "copy" : "pipeline"));
    json_object_set_new(s, "tls", json_string(AB_PG_TLS_WORDS));
    json_object_set_new(s, "search_path", json_string("options=-c search_path=<schema> in the startup packet"));
    json_object_set_new(s, "read_only", json_string("endpoint read_only: options=-c default_transaction_read_only=on in "
                                                    "the startup packet (after -c search_path=<schema> when there is one)"));
    json_object_set_new(s, "autocommit", json_string("yes (BEGIN/COMMIT explicit)"));
    json_object_set_new(s, "pooled", json_string("not built: libpq has no connection pool"));
    json_object_set_new(s, "literal", json_string("PQexec of the text with values inlined: simple query protocol, so text "
                                                  "results whatever format says"));
    json_object_set_new(s, "extended", json_string(opt_binary ? "PQexecParams: unnamed statement parsed every time, parameters as 'parameters' says, binary results"
                                                              : "PQexecParams: unnamed statement parsed every time, parameters as 'parameters' says, text results"));
    json_object_set_new(s, "parameters",
                        json_string(opt_binary ? "integers, text and timestamps as text of unspecified type (the server infers it from "
                                                 "the statement); booleans, floats, decimals, dates and bytes with their type OIDs "
                                                 "(bool 16, float8 701, numeric 1700, date 1082, bytea 17) in binary format (bool 1 "
                                                 "byte, float8 big-endian IEEE, numeric base-10000 digits, date int32 days since "
                                                 "2000-01-01, bytea its bytes); a NULL with its type's OID"
                                               : "integers, text and timestamps as text of unspecified type (the server infers it from "
                                                 "the statement); booleans, floats, decimals, dates and bytes as text with their type "
                                                 "OIDs (bool 16, float8 701, numeric 1700, date 1082, bytea 17; floats in shortest "
                                                 "round-trip text, bytea as \\x hex); a NULL with its type's OID"));
    json_object_set_new(s, "prepared", json_string(opt_binary ? "PQprepare once (inside the first operation), PQexecPrepared with binary results; DEALLOCATE after the step (untimed)"
                                                              : "PQprepare once (inside the first operation), PQexecPrepared with text results; DEALLOCATE after the step (untimed)"));
    json_object_set_new(s, "reading",
                        json_string(opt_singlerow
                                        ? "every statement that returns rows is sent with PQsendQuery/PQsendQueryParams/PQsendQueryPrepared and read "
                                          "row by row (PQsetSingleRowMode + PQgetResult)"
                                        : "whole result buffered by libpq (PQexec, or PQexecParams/PQexecPrepared)"));
    json_object_set_new(s, "scan step", json_string(
        opt_copyout ? (opt_copyout == 1 ? "PQexec of COPY (query) TO STDOUT (FORMAT binary), each row taken with PQgetCopyData "
                                          "(blocking) and every field decoded by the column's type OID, described before the "
                                          "clock; statements with parameters that read rows: unsupported (COPY takes none)"
                                        : "PQexec of COPY (query) TO STDOUT (FORMAT text), each row taken with PQgetCopyData "
                                          "(blocking), unescaped and every field decoded by the column's type OID, described "
                                          "before the clock; statements with parameters that read rows: unsupported")
        : opt_binary ? "PQexecParams with 0 parameters and binary results" : "PQexec (simple protocol, text results)"));
    json_object_set_new(s, "decoding", json_string("every value decoded by type OID: int2/4/8 → int64, float4/8 → double, numeric → "
                                                   "text (binary numeric converted to PostgreSQL's text form), bool, text types → "
                                                   "bytes in place, timestamp → µs, date → days, bytea → bytes"));
    if (opt_copyout) { /* a scan variant: its statements are c-libpq's */
        json_object_set_new(caps, "modes", json_array());
        const char *why = opt_copyout == 1 ? "unsupported: c-libpq/scan=copy-binary measures scans; its statements are c-libpq's"
                                           : "unsupported: c-libpq/scan=copy-text measures scans; its statements are c-libpq's";
        json_object_set_new(s, "literal", json_string(why));
        json_object_set_new(s, "extended", json_string(why));
        json_object_set_new(s, "prepared", json_string(why));
        /* nor its load steps: every statement's rows are read by c-libpq's own settings */
        json_t *kinds = json_object_get(caps, "kinds");
        for (size_t k = json_array_size(kinds); k-- > 0;)
            if (!strcmp(json_string_value(json_array_get(kinds, k)), "load"))
                json_array_remove(kinds, k);
    }
}

static ab_conn *conn_new(void)
{
    return calloc(1, sizeof(ab_conn));
}

static void close_(ab_conn *c)
{
    PQfinish(c->pg);
    c->pg = NULL;
}

static void conn_free(ab_conn *c)
{
    if (!c)
        return;
    close_(c);
    free(c->scratch.p);
    free(c->out_types);
    free(c->qvalues);
    free(c->qlengths);
    free(c->qformats);
    free(c->qtypes);
    ab_arena_free(&c->qarena);
    free(c);
}

/* A new connection to the endpoint (a connect step's operation, and open's); NULL with ab_err
 * set. */
static PGconn *connect_pg(json_t *ep)
{
    conninfo ci;
    if (conninfo_from(ep, &ci))
        return NULL;
    PGconn *pg = PQconnectdbParams(ci.kw, ci.val, 0);
    if (!pg || PQstatus(pg) != CONNECTION_OK) {
        fail_conn(pg);
        PQfinish(pg);
        return NULL;
    }
    return pg;
}

static int open_(ab_conn *c, json_t *ep, json_t *a)
{
    if (!(c->pg = connect_pg(ep)))
        return -1;
    /* text timestamps are parsed in the ISO form (the server's default: nothing is sent) */
    const char *ds = PQparameterStatus(c->pg, "DateStyle");
    if (!ds || strncmp(ds, "ISO", 3)) {
        PGresult *r = PQexec(c->pg, "SET DateStyle = ISO");
        PQclear(r);
    }
    if (a) {
        json_object_set_new(a, "server_pid", json_integer(PQbackendPID(c->pg)));
        const char *sv = PQparameterStatus(c->pg, "server_version");
        if (sv)
            json_object_set_new(a, "server_version", json_string(sv));
    }
    return 0;
}

static int64_t server_pid(ab_conn *c)
{
    return c->pg ? PQbackendPID(c->pg) : 0;
}

static int exec_simple(ab_conn *c, const char *sql)
{
    PGresult *r = PQexec(c->pg, sql);
    int ok = r && PQresultStatus(r) == PGRES_COMMAND_OK;
    if (!ok)
        fail_result(c, r);
    PQclear(r);
    return ok ? 0 : -1;
}

static int txn_begin(ab_conn *c, ab_step *st)
{
    (void)st;
    return exec_simple(c, "BEGIN");
}

static int txn_commit(ab_conn *c, ab_step *st)
{
    (void)st;
    return exec_simple(c, "COMMIT");
}

/* ---- decoding ---------------------------------------------------------------------------------- */

static inline uint16_t be16(const char *p)
{
    const unsigned char *u = (const unsigned char *)p;
    return (uint16_t)(u[0] << 8 | u[1]);
}

static inline uint32_t be32(const char *p)
{
    const unsigned char *u = (const unsigned char *)p;
    return (uint32_t)u[0] << 24 | (uint32_t)u[1] << 16 | (uint32_t)u[2] << 8 | u[3];
}

static inline uint64_t be64(const char *p)
{
    return (uint64_t)be32(p) << 32 | be32(p + 4);
}


static int64_t parse_timestamp(const char *p, const char *end, int tz)
{
    if (*p == 'i')
        return INT64_MAX; /* infinity */
    if (*p == '-' && p[1] == 'i')
        return INT64_MIN;
    int64_t y;
    int m, d;
    ab_parse_ymd(&p, &y, &m, &d);
    p++;
    int64_t us = ab_parse_time_us(&p);
    if (tz && (*p == '+' || *p == '-')) {
        int sign = *p++ == '-' ? -1 : 1;
        int64_t off = ab_digits(&p, 2) * 3600;
        if (*p == ':') {
            p++;
            off += ab_digits(&p, 2) * 60;
            if (*p == ':') {
                p++;
                off += ab_digits(&p, 2);
            }
        }
        us -= sign * off * 1000000LL;
    }
    if (memmem(p, (size_t)(end - p), "BC", 2))
        y = 1 - y;
    return ab_days_from_civil(y, (unsigned)m, (unsigned)d) * 86400000000LL + us;
}

static int64_t parse_date_text(const char *p, const char *end)
{
    if (*p == 'i')
        return INT32_MAX; /* infinity */
    if (*p == '-' && p[1] == 'i')
        return INT32_MIN;
    int64_t y;
    int m, d;
    ab_parse_ymd(&p, &y, &m, &d);
    if (memmem(p, (size_t)(end - p), "BC", 2))
        y = 1 - y;
    return ab_days_from_civil(y, (unsigned)m, (unsigned)d);
}

static int hexv(int c)
{
    return c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10;
}

/* PostgreSQL's binary numeric → the text numeric_out prints (get_str_from_var). */
static size_t numeric_text(const char *p, int len, char *out)
{
    if (len < 8)
        return 0;
    int ndigits = (int16_t)be16(p), weight = (int16_t)be16(p + 2), dscale = (int16_t)be16(p + 6);
    uint16_t sign = be16(p + 4);
    if (sign == 0xC000)
        return (size_t)sprintf(out, "NaN");
    if (sign == 0xD000)
        return (size_t)sprintf(out, "Infinity");
    if (sign == 0xF000)
        return (size_t)sprintf(out, "-Infinity");
    const char *dg = p + 8;
    char *o = out;
    if (sign == 0x4000)
        *o++ = '-';
    if (weight < 0) {
        *o++ = '0';
    } else {
        for (int d = 0; d <= weight; d++) {
            int dig = d < ndigits ? (int16_t)be16(dg + 2 * d) : 0;
            if (d == 0)
                o += sprintf(o, "%d", dig);
            else
                o += sprintf(o, "%04d", dig);
        }
    }
    if (dscale > 0) {
        *o++ = '.';
        char *end = o + dscale;
        for (int d = weight + 1; o < end; d++) {
            int dig = d >= 0 && d < ndigits ? (int16_t)be16(dg + 2 * d) : 0;
            char four[8];
            sprintf(four, "%04d", dig);
            for (int k = 0; k < 4 && o < end; k++)
                *o++ = four[k];
        }
    }
    return (size_t)(o - out);
}

static size_t numeric_text_need(const char *p, int len)
{
    if (len < 8)
        return 16;
    int weight = (int16_t)be16(p + 2), dscale = (int16_t)be16(p + 6);
    return (size_t)((weight >= 0 ? (weight + 1) * 4 : 1) + (dscale > 0 ? dscale : 0) + 16);
}

/* float4 as psycopg reads it: PostgreSQL prints the shortest text that round-trips as a float4
 * and Python parses that text as a double. */
static double float4_as_text(float f)
{
    /* PostgreSQL prints a real as the shortest decimal that reads back as the same float
     * (and of those, the closest to the exact value); the canonical value is that text read
     * as a double. The nearest p-digit rounding is not always it (2^-96 prints as
     * 1.2621775e-29, not 1.2621774e-29), so its two decimal neighbours are tried too. */
    if (isnan(f) || isinf(f) || f == 0)
        return (double)f;
    char buf[48], cand[48];
    for (int prec = 1; prec <= 9; prec++) {
        snprintf(buf, sizeof buf, "%.*e", prec - 1, (double)f);
        char *e = strchr(buf, 'e');
        int neg = buf[0] == '-', exp10 = atoi(e + 1);
        long long mant = 0;
        for (const char *q = buf + neg; q < e; q++)
            if (*q >= '0' && *q <= '9')
                mant = mant * 10 + (*q - '0');
        int found = 0;
        double best = 0, best_dist = INFINITY;
        for (int d = -1; d <= 1; d++) {
            if (mant + d <= 0)
                continue;
            snprintf(cand, sizeof cand, "%s%llde%d", neg ? "-" : "", mant + d, exp10 - (prec - 1));
            if (strtof(cand, NULL) != f)
                continue;
            double v = strtod(cand, NULL), dist = fabs(v - (double)f);
            if (dist < best_dist) {
                best_dist = dist;
                best = v;
                found = 1;
            }
        }
        if (found)
            return best;
    }
    return (double)f;
}

/* Bytes of scratch that decoding row r of res may need. */
static size_t scratch_need(const PGresult *res, int r, int nc, const Oid *types, int binary)
{
    size_t need = 0;
    for (int c = 0; c < nc; c++) {
        if (types[c] == BYTEAOID && !binary)
            need += (size_t)PQgetlength(res, r, c) / 2 + 1;
        else if (types[c] == NUMERICOID && binary)
            need += numeric_text_need(PQgetvalue(res, r, c), PQgetlength(res, r, c));
    }
    return need;
}

/* Decodes one value of type OID `type` (binary or text form, len bytes at p; text NUL-ended),
 * writing what it decodes into *sp (bytea from hex, binary numeric as text) and moving it on. */
static void decode_value(ab_value *v, const char *p, int len, Oid type, int binary, char **spp)
{
    char *sp = *spp;
    switch (type) {
    case BOOLOID:
        v->type = AB_BOOL;
        v->u.i = binary ? p[0] != 0 : p[0] == 't';
        break;
    case INT2OID:
        v->type = AB_INT;
        v->u.i = binary ? (int16_t)be16(p) : ab_parse_int(p);
        break;
    case INT4OID:
        v->type = AB_INT;
        v->u.i = binary ? (int32_t)be32(p) : ab_parse_int(p);
        break;
    case INT8OID:
        v->type = AB_INT;
        v->u.i = binary ? (int64_t)be64(p) : ab_parse_int(p);
        break;
    case OIDOID:
    case XIDOID:
    case CIDOID:
        v->type = AB_INT;
        v->u.i = binary ? (int64_t)be32(p) : ab_parse_int(p);
        break;
    case FLOAT4OID:
        v->type = AB_FLOAT;
        if (binary) {
            uint32_t bits = be32(p);
            float f;
            memcpy(&f, &bits, 4);
            v->u.f = float4_as_text(f);
        } else {
            v->u.f = strtod(p, NULL);
        }
        break;
    case FLOAT8OID:
        v->type = AB_FLOAT;
        if (binary) {
            uint64_t bits = be64(p);
            memcpy(&v->u.f, &bits, 8);
        } else {
            v->u.f = strtod(p, NULL);
        }
        break;
    case NUMERICOID:
        v->type = AB_DECIMAL;
        if (binary) {
            v->u.s.n = numeric_text(p, len, sp);
            v->u.s.p = sp;
            sp += v->u.s.n;
        } else {
            v->u.s.p = p;
            v->u.s.n = (size_t)len;
        }
        break;
    case TIMESTAMPOID:
    case TIMESTAMPTZOID:
        v->type = AB_TIMESTAMP;
        if (binary) {
            int64_t t = (int64_t)be64(p);
            v->u.i = t == INT64_MAX || t == INT64_MIN ? t : t + PG_EPOCH_US;
        } else {
            v->u.i = parse_timestamp(p, p + len, type == TIMESTAMPTZOID);
        }
        break;
    case DATEOID:
        v->type = AB_DATE;
        if (binary) {
            int32_t d = (int32_t)be32(p);
            v->u.i = d == INT32_MAX || d == INT32_MIN ? d : (int64_t)d + PG_EPOCH_DAYS;
        } else {
            v->u.i = parse_date_text(p, p + len);
        }
        break;
    case TIMEOID:
        v->type = AB_TIME;
        if (binary) {
            v->u.i = (int64_t)be64(p);
        } else {
            const char *q = p;
            v->u.i = ab_parse_time_us(&q);
        }
        break;
    case BYTEAOID:
        v->type = AB_BYTES;
        if (binary) {
            v->u.s.p = p;
            v->u.s.n = (size_t)len;
        } else if (len >= 2 && p[0] == '\\' && p[1] == 'x') {
            size_t n = (size_t)(len - 2) / 2;
            for (size_t k = 0; k < n; k++)
                sp[k] = (char)(hexv(p[2 + 2 * k]) << 4 | hexv(p[3 + 2 * k]));
            v->u.s.p = sp;
            v->u.s.n = n;
            sp += n;
        } else { /* bytea_output = escape: not decoded */
            v->u.s.p = p;
            v->u.s.n = (size_t)len;
        }
        break;
    default: /* char, name, text, bpchar, varchar, and anything else: the text as sent */
        v->type = AB_TEXT;
        v->u.s.p = p;
        v->u.s.n = (size_t)len;
    }
    *spp = sp;
}

/* Decodes row r of res into st's row buffer and hands it on. */
static void decode_row(ab_conn *cn, ab_step *st, const PGresult *res, int r, int nc, const Oid *types, int binary)
{
    ab_value *row = ab_row(st, nc);
    size_t need = scratch_need(res, r, nc, types, binary);
    if (need)
        ab_buf_reserve(&cn->scratch, need);
    char *sp = cn->scratch.p;
    for (int c = 0; c < nc; c++) {
        if (PQgetisnull(res, r, c))
            row[c].type = AB_NULL;
        else
            decode_value(&row[c], PQgetvalue(res, r, c), PQgetlength(res, r, c), types[c], binary, &sp);
    }
    ab_emit(st, row, nc);
}

/* Reads a buffered result: rows decoded (reads) or the command's row count. */
static int take_result(ab_conn *c, ab_step *st, PGresult *res, int reads, int64_t *count)
{
    ExecStatusType status = res ? PQresultStatus(res) : PGRES_FATAL_ERROR;
    if (status == PGRES_TUPLES_OK && reads) {
        int nr = PQntuples(res), nc = PQnfields(res), binary = nc && PQfformat(res, 0) == 1;
        if (st->size && (int64_t)PQresultMemorySize(res) > c->largest)
            c->largest = (int64_t)PQresultMemorySize(res);
        Oid types[nc > 0 ? nc : 1];
        for (int c = 0; c < nc; c++)
            types[c] = PQftype(res, c);
        for (int r = 0; r < nr; r++)
            decode_row(c, st, res, r, nc, types, binary);
        st->ncols = nc;
        *count = nr;
    } else if (status == PGRES_TUPLES_OK || status == PGRES_COMMAND_OK) {
        *count = reads ? 0 : ab_parse_int(PQcmdTuples(res));
    } else {
        fail_result(c, res);
        PQclear(res);
        return -1;
    }
    PQclear(res);
    return 0;
}

/* After PQsendQuery*: single-row mode, every row decoded as it arrives. */
static int take_single_rows(ab_conn *c, ab_step *st, int64_t *count)
{
    PGresult *res;
    int64_t rows = 0;
    int failed = 0;
    if (!PQsetSingleRowMode(c->pg))
        fprintf(stderr, "abworker-c: PQsetSingleRowMode refused\n");
    while ((res = PQgetResult(c->pg))) {
        ExecStatusType status = PQresultStatus(res);
        if (status == PGRES_SINGLE_TUPLE) {
            int nc = PQnfields(res);
            Oid types[nc > 0 ? nc : 1];
            for (int c = 0; c < nc; c++)
                types[c] = PQftype(res, c);
            decode_row(c, st, res, 0, nc, types, nc && PQfformat(res, 0) == 1);
            st->ncols = nc;
            rows++;
        } else if (status == PGRES_TUPLES_OK) {
            st->ncols = PQnfields(res);
        } else if (status != PGRES_COMMAND_OK && !failed) {
            failed = 1;
            fail_result(c, res);
        }
        PQclear(res);
    }
    *count = rows;
    return failed ? -1 : 0;
}

/* ---- scan=copy-…: COPY (query) TO STDOUT, each row decoded as it arrives -------------------------- */

/* COPY text: the field at p..end unescaped (\N is NULL: -1) into out, NUL-ended; its length. */
static int copy_text_field(const char *p, const char *end, char *out)
{
    if (end - p == 2 && p[0] == '\\' && p[1] == 'N')
        return -1;
    char *o = out;
    while (p < end) {
        char ch = *p++;
        if (ch == '\\' && p < end) {
            ch = *p++;
            switch (ch) {
            case 'b': ch = '\b'; break;
            case 'f': ch = '\f'; break;
            case 'n': ch = '\n'; break;
            case 'r': ch = '\r'; break;
            case 't': ch = '\t'; break;
            case 'v': ch = '\v'; break;
            default: break; /* \\ and any other escaped character: itself */
            }
        }
        *o++ = ch;
    }
    *o = '\0';
    return (int)(o - out);
}

/* One row of COPY text (its trailing newline dropped): fields split on tabs, unescaped, decoded. */
static void copy_text_row(ab_conn *c, ab_step *st, const char *p, const char *end)
{
    int nc = c->out_nc;
    ab_value *row = ab_row(st, nc);
    ab_buf_reserve(&c->scratch, 2 * (size_t)(end - p) + 2 * (size_t)nc + 64); /* unescaped, then bytea */
    char *sp = c->scratch.p;
    for (int k = 0; k < nc; k++) {
        const char *tab = memchr(p, '\t', (size_t)(end - p));
        const char *stop = tab ? tab : end;
        /* a field with nothing escaped is decoded where it lies, ended by its tab, the row's
         * newline or the NUL libpq puts after every CopyData (the parsers stop at any of them) */
        const char *text = p;
        int len = (int)(stop - p);
        if (memchr(p, '\\', (size_t)len)) {
            len = copy_text_field(p, stop, sp);
            text = sp;
            if (len >= 0)
                sp += len + 1;
        }
        if (len < 0)
            row[k].type = AB_NULL;
        else
            decode_value(&row[k], text, len, c->out_types[k], 0, &sp);
        p = tab ? tab + 1 : end;
    }
    ab_emit(st, row, nc);
}

/* The tuples of one CopyData message of COPY binary (after the file header, which comes with the
 * first): each decoded; the trailer (-1) ends it. The number of tuples. */
static int64_t copy_binary_rows(ab_conn *c, ab_step *st, const char *p, const char *end)
{
    int64_t rows = 0;
    while (end - p >= 2) {
        int16_t fields = (int16_t)be16(p);
        p += 2;
        if (fields < 0)
            break; /* the trailer */
        ab_value *row = ab_row(st, fields);
        size_t need = 0;
        const char *q = p;
        for (int k = 0; k < fields; k++) { /* numeric as text: sized before decoding */
            int32_t len = (int32_t)be32(q);
            q += 4;
            if (len > 0 && c->out_types[k] == NUMERICOID)
                need += numeric_text_need(q, len);
            q += len > 0 ? len : 0;
        }
        if (need)
            ab_buf_reserve(&c->scratch, need);
        char *sp = c->scratch.p;
        for (int k = 0; k < fields; k++) {
            int32_t len = (int32_t)be32(p);
            p += 4;
            if (len < 0) {
                row[k].type = AB_NULL;
                continue;
            }
            decode_value(&row[k], p, len, c->out_types[k], 1, &sp);
            p += len;
        }
        ab_emit(st, row, fields);
        rows++;
    }
    return rows;
}

static const char COPY_SIGNATURE[] = "PGCOPY\n\377\r\n";

static int copy_out(ab_conn *c, ab_step *st, int64_t *count)
{
    PGconn *conn = c->pg;
    PGresult *res = PQexec(conn, copy_out_sql);
    if (PQresultStatus(res) != PGRES_COPY_OUT) {
        fail_result(c, res);
        PQclear(res);
        return -1;
    }
    PQclear(res);
    int64_t rows = 0;
    int first = 1, n;
    char *buf;
    while ((n = PQgetCopyData(conn, &buf, 0)) > 0) {
        const char *p = buf, *end = buf + n;
        if (opt_copyout == 1) {
            if (first && n >= 19 && !memcmp(p, COPY_SIGNATURE, 11)) /* signature, flags, extension */
                p += 19 + be32(p + 15);
            rows += copy_binary_rows(c, st, p, end);
        } else {
            copy_text_row(c, st, p, end[-1] == '\n' ? end - 1 : end);
            rows++;
        }
        first = 0;
        PQfreemem(buf);
    }
    int failed = n == -2 ? fail_conn(conn) : 0;
    while ((res = PQgetResult(conn))) {
        if (!failed && PQresultStatus(res) != PGRES_COMMAND_OK)
            failed = fail_result(c, res);
        PQclear(res);
    }
    st->ncols = c->out_nc;
    *count = rows;
    return failed ? -1 : 0;
}

/* ---- operations -------------------------------------------------------------------------------- */

static int run_read(ab_conn *c, ab_step *st, int64_t i, int reads, int64_t *count)
{
    PGconn *conn = c->pg;
    int fmt = opt_binary;
    const char *const *pv = st->nparams ? &values[i * st->nparams] : NULL;
    const int *pl = st->nparams ? &lengths[i * st->nparams] : NULL;
    int single = opt_singlerow && reads;
    char *prepared_name = c->prepared_name;
    if (st->kind == K_EXEC && st->mode == M_PREPARED && !prepared_name[0]) {
        /* parsed once, inside the first operation's time */
        char name[32];
        snprintf(name, sizeof name, "abw_%d", ++c->stmt_counter);
        PGresult *r = PQprepare(conn, name, sql_dollar, st->nparams, types);
        if (!r || PQresultStatus(r) != PGRES_COMMAND_OK) {
            fail_result(c, r);
            PQclear(r);
            return -1;
        }
        PQclear(r);
        memcpy(prepared_name, name, sizeof name);
    }
    if (single) {
        int sent;
        if (st->kind == K_SCAN)
            sent = fmt ? PQsendQueryParams(conn, sql_dollar, 0, NULL, NULL, NULL, NULL, 1) : PQsendQuery(conn, sql_dollar);
        else if (st->mode == M_LITERAL)
            sent = PQsendQuery(conn, st->texts[i]);
        else if (st->mode == M_EXTENDED)
            sent = PQsendQueryParams(conn, sql_dollar, st->nparams, types, pv, pl, formats, fmt);
        else
            sent = PQsendQueryPrepared(conn, prepared_name, st->nparams, pv, pl, formats, fmt);
        if (!sent)
            return fail_conn(conn);
        return take_single_rows(c, st, count);
    }
    PGresult *res;
    if (st->kind == K_SCAN)
        res = fmt ? PQexecParams(conn, sql_dollar, 0, NULL, NULL, NULL, NULL, 1) : PQexec(conn, sql_dollar);
    else if (st->mode == M_LITERAL)
        res = PQexec(conn, st->texts[i]);
    else if (st->mode == M_EXTENDED)
        res = PQexecParams(conn, sql_dollar, st->nparams, types, pv, pl, formats, fmt);
    else
        res = PQexecPrepared(conn, prepared_name, st->nparams, pv, pl, formats, fmt);
    return take_result(c, st, res, reads, count);
}

/* Reads the results of `queries` pipelined queries and the sync; *prep_ok tells whether query
 * number prep_at (the statement's Parse, or -1) succeeded. */
static int drain_pipeline_results(ab_conn *c, int queries, int prep_at, int *prep_ok)
{
    PGconn *conn = c->pg;
    int failed = 0;
    for (int q = 0; q < queries; q++) {
        PGresult *res = PQgetResult(conn);
        if (!res) {
            if (!failed)
                fail_conn(conn);
            return -1;
        }
        ExecStatusType status = PQresultStatus(res);
        if (q == prep_at)
            *prep_ok = status == PGRES_COMMAND_OK;
        if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK && !failed) {
            if (status != PGRES_PIPELINE_ABORTED) {
                failed = 1;
                fail_result(c, res);
            }
        }
        PQclear(res);
        while ((res = PQgetResult(conn))) /* the NULL after each query's results */
            PQclear(res);
    }
    PGresult *sync = PQgetResult(conn);
    if (!sync || PQresultStatus(sync) != PGRES_PIPELINE_SYNC) {
        if (!failed)
            ab_fail("db", NULL, "pipeline: expected the sync result, got %s",
                    sync ? PQresStatus(PQresultStatus(sync)) : "nothing");
        failed = 1;
    }
    PQclear(sync);
    return failed ? -1 : 0;
}

static int batch_pipeline(ab_conn *c, ab_step *st, int64_t first, int64_t last)
{
    PGconn *conn = c->pg;
    int queries = 0, prepare = !c->prepared_name[0];
    char name[32];
    if (prepare)
        snprintf(name, sizeof name, "abw_%d", ++c->stmt_counter);
    else
        memcpy(name, c->prepared_name, sizeof name);
    if (!PQenterPipelineMode(conn))
        return fail_conn(conn);
    int ok = PQsendQueryParams(conn, "BEGIN", 0, NULL, NULL, NULL, NULL, 0);
    queries++;
    if (ok && prepare) {
        ok = PQsendPrepare(conn, name, sql_dollar, st->nparams, types);
        queries++;
    }
    for (int64_t r = first; ok && r < last; r++, queries++)
        ok = PQsendQueryPrepared(conn, name, st->nparams, &values[r * st->nparams], &lengths[r * st->nparams], formats, 0);
    if (ok) {
        ok = PQsendQueryParams(conn, "COMMIT", 0, NULL, NULL, NULL, NULL, 0);
        queries++;
    }
    if (!ok || !PQpipelineSync(conn)) {
        fail_conn(conn);
        return -1; /* recover() leaves pipeline mode */
    }
    int prep_ok = 0, rc = drain_pipeline_results(c, queries, prepare ? 1 : -1, &prep_ok);
    if (prepare && prep_ok) /* deallocated after the step */
        memcpy(c->prepared_name, name, sizeof name);
    if (rc)
        return -1;
    if (!PQexitPipelineMode(conn))
        return fail_conn(conn);
    return 0;
}

static int batch_copy(ab_conn *c, ab_step *st, int64_t first, int64_t last)
{
    (void)st;
    PGconn *conn = c->pg;
    if (exec_simple(c, "BEGIN"))
        return -1;
    PGresult *res = PQexec(conn, copy_sql);
    if (!res || PQresultStatus(res) != PGRES_COPY_IN) {
        fail_result(c, res);
        PQclear(res);
        return -1;
    }
    PQclear(res);
    size_t off = copy_off[first], len = copy_off[last] - off;
    if (PQputCopyData(conn, copy_data + off, (int)len) != 1 || PQputCopyEnd(conn, NULL) != 1)
        return fail_conn(conn);
    int failed = 0;
    while ((res = PQgetResult(conn))) {
        if (PQresultStatus(res) != PGRES_COMMAND_OK && !failed) {
            failed = 1;
            fail_result(c, res);
        }
        PQclear(res);
    }
    if (failed)
        return -1;
    return exec_simple(c, "COMMIT");
}

static int op(ab_conn *c, ab_step *st, int64_t i, int64_t *count)
{
    switch (st->kind) {
    case K_CONNECT: {
        PGconn *pg = connect_pg(st->endpoint);
        if (!pg)
            return -1;
        PQfinish(pg);
        *count = 0;
        return 0;
    }
    case K_SCAN:
        return opt_copyout ? copy_out(c, st, count) : run_read(c, st, i, 1, count);
    case K_EXEC:
        return run_read(c, st, i, st->fetch, count);
    case K_BATCH: {
        int64_t first, last;
        ab_batch_group(st, i, &first, &last);
        if (opt_copy ? batch_copy(c, st, first, last) : batch_pipeline(c, st, first, last))
            return -1;
        *count = last - first;
        return 0;
    }
    }
    return ab_fail("internal", NULL, "unknown step kind");
}

/* ---- parameters: each type bound by its OID, in text or (format=binary) binary form ------------- */

/* The type OID a parameter of type t is bound with: integers, text and timestamps 0 (unspecified:
 * the server infers the type from the statement, as before types travelled); the others their
 * own (a NULL too, so that it is a NULL of its type). */
static Oid param_oid(ab_type t)
{
    switch (t) {
    case AB_BOOL: return BOOLOID;
    case AB_FLOAT: return FLOAT8OID;
    case AB_DECIMAL: return NUMERICOID;
    case AB_DATE: return DATEOID;
    case AB_BYTES: return BYTEAOID;
    default: return 0;
    }
}

/* v (not NULL) as PostgreSQL's text input reads it: t/f, bytea as \x hex, the rest their text. */
static const char *pg_text(const ab_param *v, ab_arena *arena, int *len)
{
    if (v->type == AB_BOOL) {
        *len = 1;
        return v->i ? "t" : "f";
    }
    if (v->type == AB_BYTES) {
        char *t = ab_arena_alloc(arena, 2 * v->len + 3);
        t[0] = '\\', t[1] = 'x';
        *len = 2 + (int)ab_hex(v->text, v->len, t + 2);
        return t;
    }
    *len = (int)v->len;
    return v->text;
}

static inline void put_be16(unsigned char *p, uint16_t v)
{
    p[0] = (unsigned char)(v >> 8), p[1] = (unsigned char)v;
}

static inline void put_be32(unsigned char *p, uint32_t v)
{
    put_be16(p, (uint16_t)(v >> 16)), put_be16(p + 2, (uint16_t)v);
}

/* Plain decimal text ("-12.34") → PostgreSQL's binary numeric (numeric_send): ndigits, weight,
 * sign, dscale, then the base-10000 digits, leading and trailing zero digits left out. */
static const char *numeric_binary(const char *s, size_t n, ab_arena *arena, int *len)
{
    int neg = n && s[0] == '-';
    const char *ip = s + neg, *end = s + n, *dot = memchr(ip, '.', (size_t)(end - ip));
    const char *iend = dot ? dot : end, *fp = dot ? dot + 1 : end;
    while (ip < iend && *ip == '0')
        ip++;
    int ni = (int)(iend - ip), nf = (int)(end - fp), gi = (ni + 3) / 4, gf = (nf + 3) / 4;
    int ng = gi + gf, first = 0, weight = gi - 1;
    uint16_t *dig = ab_arena_alloc(arena, (size_t)(ng + 1) * sizeof *dig);
    for (int g = 0; g < ng; g++) { /* integer digits right-aligned on the point, fraction left-aligned */
        int v = 0;
        for (int k = g * 4; k < g * 4 + 4; k++) {
            int at = g < gi ? k - (gi * 4 - ni) : k - gi * 4;
            const char *src = g < gi ? ip : fp;
            int lim = g < gi ? ni : nf;
            v = v * 10 + (at >= 0 && at < lim ? src[at] - '0' : 0);
        }
        dig[g] = (uint16_t)v;
    }
    while (first < ng && !dig[first])
        first++, weight--;
    while (ng > first && !dig[ng - 1])
        ng--;
    int nd = ng - first;
    unsigned char *b = ab_arena_alloc(arena, 8 + 2 * (size_t)nd);
    put_be16(b, (uint16_t)nd);
    put_be16(b + 2, (uint16_t)(int16_t)(nd ? weight : 0));
    put_be16(b + 4, nd && neg ? 0x4000 : 0x0000);
    put_be16(b + 6, (uint16_t)nf);
    for (int k = 0; k < nd; k++)
        put_be16(b + 8 + 2 * k, dig[first + k]);
    *len = 8 + 2 * nd;
    return (const char *)b;
}

/* v (not NULL) in PostgreSQL's binary format (the type's send function). */
static const char *pg_binary(const ab_param *v, ab_arena *arena, int *len)
{
    unsigned char *b;
    switch (v->type) {
    case AB_BOOL:
        *len = 1;
        return v->i ? "\1" : "\0";
    case AB_FLOAT: {
        uint64_t bits;
        memcpy(&bits, &v->f, 8);
        b = ab_arena_alloc(arena, 8);
        put_be32(b, (uint32_t)(bits >> 32)), put_be32(b + 4, (uint32_t)bits);
        *len = 8;
        return (const char *)b;
    }
    case AB_DATE:
        b = ab_arena_alloc(arena, 4);
        put_be32(b, (uint32_t)(int32_t)(v->i - PG_EPOCH_DAYS));
        *len = 4;
        return (const char *)b;
    case AB_DECIMAL:
        return numeric_binary(v->text, v->len, arena, len);
    default: /* bytea: its bytes */
        *len = (int)v->len;
        return v->text;
    }
}

/* Every operation's parameters as sent (before the clock), with each column's OID and format. */
static void make_params(ab_step *st)
{
    int k = st->nparams;
    values = malloc((size_t)(st->n * k) * sizeof *values);
    lengths = ab_arena_alloc(st->arena, (size_t)(st->n * k) * sizeof *lengths);
    types = ab_arena_alloc(st->arena, (size_t)k * sizeof *types);
    formats = ab_arena_alloc(st->arena, (size_t)k * sizeof *formats);
    for (int j = 0; j < k; j++) {
        types[j] = param_oid(st->param_types[j]);
        formats[j] = opt_binary && types[j] != 0;
    }
    for (int64_t i = 0; i < st->n * k; i++) {
        const ab_param *v = &st->params[i];
        int j = (int)(i % k);
        lengths[i] = 0;
        values[i] = v->type == AB_NULL ? NULL
                    : formats[j]       ? pg_binary(v, st->arena, &lengths[i])
                                       : pg_text(v, st->arena, &lengths[i]);
    }
}

/* ---- load steps: one statement with its parameters bound, as the extended mode runs it ---------- */

/* sql ($n markers) with params bound as make_params binds each type (a NULL: type unspecified),
 * PQexecParams — or, with scan=singlerow, PQsendQueryParams read row by row — every row decoded
 * and handed on (assoc.c keeps the entities). */
static int load_query(ab_conn *c, ab_step *st, const char *sql, const ab_param *params, int n, int64_t *count)
{
    if (n > c->qcap) {
        int cap = n > 2 * c->qcap ? n : 2 * c->qcap;
        c->qvalues = realloc(c->qvalues, (size_t)cap * sizeof *c->qvalues);
        c->qlengths = realloc(c->qlengths, (size_t)cap * sizeof *c->qlengths);
        c->qformats = realloc(c->qformats, (size_t)cap * sizeof *c->qformats);
        c->qtypes = realloc(c->qtypes, (size_t)cap * sizeof *c->qtypes);
        if (!c->qvalues || !c->qlengths || !c->qformats || !c->qtypes)
            return ab_fail("internal", NULL, "cannot allocate %d parameters", n);
        c->qcap = cap;
    }
    for (int j = 0; j < n; j++) {
        const ab_param *v = &params[j];
        c->qtypes[j] = param_oid(v->type);
        c->qformats[j] = opt_binary && c->qtypes[j] != 0;
        c->qlengths[j] = 0;
        c->qvalues[j] = v->type == AB_NULL ? NULL
                        : c->qformats[j]   ? pg_binary(v, &c->qarena, &c->qlengths[j])
                                           : pg_text(v, &c->qarena, &c->qlengths[j]);
    }
    if (opt_singlerow) {
        if (!PQsendQueryParams(c->pg, sql, n, c->qtypes, c->qvalues, c->qlengths, c->qformats, opt_binary))
            return fail_conn(c->pg);
        return take_single_rows(c, st, count);
    }
    PGresult *res = PQexecParams(c->pg, sql, n, c->qtypes, c->qvalues, c->qlengths, c->qformats, opt_binary);
    return take_result(c, st, res, 1, count);
}

/* ---- COPY: INSERT INTO t (cols) VALUES (?, …) → COPY t (cols) FROM STDIN ---------------------------- */

/* name double-quoted with every '"' doubled (as PQescapeIdentifier quotes, which needs a
 * connection), appended at o; returns the end. The shape gives names as the statement spells
 * them, unquoted; quoted, they are read as spelled (the workers of every language agree). */
static char *pg_ident(char *o, const char *name)
{
    *o++ = '"';
    for (const char *p = name; *p; p++) {
        if (*p == '"')
            *o++ = '"';
        *o++ = *p;
    }
    *o++ = '"';
    return o;
}

/* The COPY that writes what the statement does, from the step's shape (PROTOCOL.md): an insert
 * of one row of markers, one per column. */
static int copy_statement(const ab_step *st)
{
    const ab_shape *sh = &st->shape;
    const char *only = "batch=copy writes only INSERT INTO t (cols) VALUES (?, …) statements";
    if (!sh->kind)
        return ab_fail("unsupported", NULL, "%s: this one has no plain shape (the step's shape is null)", only);
    if (strcmp(sh->kind, "insert"))
        return ab_fail("unsupported", NULL, "%s: its shape is \"%s\", not \"insert\"", only, sh->kind);
    if (sh->ncolumns != st->nparams)
        return ab_fail("unsupported", NULL, "%s: %d columns but %d markers", only, sh->ncolumns, st->nparams);
    size_t n = 2 * strlen(sh->table) + 32;
    for (int k = 0; k < sh->ncolumns; k++)
        n += 2 * strlen(sh->columns[k]) + 4;
    char *o = copy_sql = malloc(n);
    o = pg_ident(stpcpy(o, "COPY "), sh->table);
    o = stpcpy(o, " (");
    for (int k = 0; k < sh->ncolumns; k++)
        o = pg_ident(k ? stpcpy(o, ", ") : o, sh->columns[k]);
    strcpy(o, ") FROM STDIN");
    return 0;
}

/* The rows in COPY's text format (rendered before the clock, like literal texts): each value's
 * text form, with backslash, tab, newline and CR escaped; NULL as \\N. */
static void copy_render(ab_step *st)
{
    size_t total = 0;
    int k = st->nparams;
    for (int64_t i = 0; i < st->n * k; i++)
        total += st->params[i].len * 4 + 8; /* escaped, bytea's hex doubled */
    copy_data = malloc(total + 1);
    copy_off = malloc((size_t)(st->n + 1) * sizeof *copy_off);
    char *o = copy_data;
    for (int64_t r = 0; r < st->n; r++) {
        copy_off[r] = (size_t)(o - copy_data);
        for (int c = 0; c < k; c++) {
            const ab_param *p = &st->params[r * k + c];
            if (c)
                *o++ = '\t';
            if (p->type == AB_NULL) {
                *o++ = '\\';
                *o++ = 'N';
                continue;
            }
            int len;
            const char *text = pg_text(p, st->arena, &len);
            for (int j = 0; j < len; j++) {
                char ch = text[j];
                switch (ch) {
                case '\\': *o++ = '\\'; *o++ = '\\'; break;
                case '\t': *o++ = '\\'; *o++ = 't'; break;
                case '\n': *o++ = '\\'; *o++ = 'n'; break;
                case '\r': *o++ = '\\'; *o++ = 'r'; break;
                default: *o++ = ch;
                }
            }
        }
        *o++ = '\n';
    }
    copy_off[st->n] = (size_t)(o - copy_data);
}

static int step_begin(ab_step *st)
{
    if (st->sql)
        sql_dollar = ab_sql_convert(st->sql, AB_MARK_DOLLAR);
    if (st->kind == K_LOAD && opt_copyout)
        return ab_fail("unsupported", NULL, "c-libpq/scan=%s reads whole results by COPY in scans; a load step runs "
                       "on c-libpq", opt_copyout == 1 ? "copy-binary" : "copy-text");
    if (st->params && st->nparams && st->kind != K_LOAD) /* a load binds per statement (query) */
        make_params(st);
    if (st->kind == K_BATCH && opt_copy) {
        if (copy_statement(st))
            return -1;
        copy_render(st);
    }
    if (opt_copyout && st->kind == K_EXEC && st->fetch)
        return ab_fail("unsupported", NULL, "c-libpq/scan=%s reads whole results by COPY in scans; a statement that "
                       "reads rows runs on c-libpq", opt_copyout == 1 ? "copy-binary" : "copy-text");
    if (opt_copyout && st->kind == K_SCAN) {
        size_t n = strlen(st->sql) + 64;
        copy_out_sql = malloc(n);
        snprintf(copy_out_sql, n, "COPY (%s) TO STDOUT (FORMAT %s)", st->sql, opt_copyout == 1 ? "binary" : "text");
    }
    return 0;
}

static int conn_begin(ab_conn *c, ab_step *st)
{
    c->prepared_name[0] = '\0';
    c->largest = -1;
    ab_buf_reserve(&c->scratch, 1 << 16); /* once per client: kept across its connections */
    if (opt_copyout && st->kind == K_SCAN) { /* the result's column types, untimed: an application knows them */
        size_t n = strlen(st->sql) + 64;
        char *describe = malloc(n);
        snprintf(describe, n, "SELECT * FROM (%s) AS q LIMIT 0", st->sql);
        PGresult *res = PQexec(c->pg, describe);
        free(describe);
        if (PQresultStatus(res) != PGRES_TUPLES_OK) {
            fail_result(c, res);
            PQclear(res);
            return -1;
        }
        c->out_nc = PQnfields(res);
        free(c->out_types);
        c->out_types = malloc(sizeof(Oid) * (size_t)(c->out_nc > 0 ? c->out_nc : 1));
        for (int k = 0; k < c->out_nc; k++)
            c->out_types[k] = PQftype(res, k);
        PQclear(res);
    }
    return 0;
}

static void recover(ab_conn *c, ab_step *st)
{
    (void)st;
    PGconn *conn = c->pg;
    if (!conn)
        return;
    if (PQpipelineStatus(conn) != PQ_PIPELINE_OFF) {
        PGresult *res;
        for (int guard = 0; guard < 1000000; guard++) {
            res = PQgetResult(conn);
            if (!res) {
                if (PQexitPipelineMode(conn) || PQstatus(conn) != CONNECTION_OK)
                    break;
                continue;
            }
            PQclear(res);
        }
    }
    PGresult *res;
    while ((res = PQgetResult(conn))) {
        if (PQresultStatus(res) == PGRES_COPY_IN)
            PQputCopyEnd(conn, "aborted by the worker");
        if (PQresultStatus(res) == PGRES_COPY_OUT) { /* the rest of a COPY TO STDOUT, read and dropped */
            char *buf;
            while (PQgetCopyData(conn, &buf, 0) > 0)
                PQfreemem(buf);
        }
        PQclear(res);
    }
    PGTransactionStatusType ts = PQtransactionStatus(conn);
    if (ts == PQTRANS_INTRANS || ts == PQTRANS_INERROR) {
        res = PQexec(conn, "ROLLBACK");
        PQclear(res);
    }
}

static void conn_end(ab_conn *c, ab_step *st)
{
    (void)st;
    if (c->prepared_name[0] && c->pg && PQpipelineStatus(c->pg) == PQ_PIPELINE_OFF) {
        char sql[64];
        snprintf(sql, sizeof sql, "DEALLOCATE %s", c->prepared_name);
        PGresult *res = PQexec(c->pg, sql);
        if (PQresultStatus(res) != PGRES_COMMAND_OK)
            fprintf(stderr, "abworker-c: %s: %s", sql, PQerrorMessage(c->pg));
        PQclear(res);
    }
    c->prepared_name[0] = '\0';
    ab_arena_free(&c->qarena);
}

static void step_end(ab_step *st)
{
    (void)st;
    free(sql_dollar);
    sql_dollar = NULL;
    free(values); /* lengths, types, formats: in the step's arena */
    values = NULL;
    free(copy_sql);
    copy_sql = NULL;
    free(copy_data);
    copy_data = NULL;
    free(copy_off);
    copy_off = NULL;
    free(copy_out_sql);
    copy_out_sql = NULL;
}

/* The whole result as libpq buffers it; row by row (singlerow, COPY) nothing is held to size. */
static int64_t result_bytes(ab_conn *c)
{
    return c->largest;
}

const ab_driver ab_driver_libpq = {
    .base = "c-libpq",
    .driver = "libpq",
    .dbms = {"postgresql", NULL},
    .batch_style_default = "pipeline mode",
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
    .result_bytes = result_bytes,
    .query = load_query,
    .mark = AB_MARK_DOLLAR,
    .query_words = "PQexecParams of the statement ($n markers): the unnamed statement parsed every time, parameters as "
                   "'parameters' says (each value read as its row decoded it), results as 'format' says (with "
                   "scan=singlerow: PQsendQueryParams read row by row), every value decoded as a scan decodes it",
};
