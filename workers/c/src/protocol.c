/* See protocol.h. Reference: src/accessbench/protocol/{prng,generators,checksum,sqltext,histogram,schedule}.py */
#include "protocol.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---- PRNG -------------------------------------------------------------------------------- */

uint64_t ab_splitmix64_next(uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

double ab_unit(uint64_t *state)
{
    return (double)(ab_splitmix64_next(state) >> 11) * (1.0 / 9007199254740992.0);
}

uint64_t ab_fnv1a64(const void *data, size_t len, uint64_t h)
{
    const unsigned char *p = data;
    for (size_t k = 0; k < len; k++)
        h = (h ^ p[k]) * AB_FNV_PRIME;
    return h;
}

/* ---- checksum ---------------------------------------------------------------------------- */

static inline uint64_t fnv_byte(uint64_t h, unsigned char b)
{
    return (h ^ b) * AB_FNV_PRIME;
}

static inline uint64_t fnv_le(uint64_t h, uint64_t v, int bytes)
{
    for (int k = 0; k < bytes; k++)
        h = fnv_byte(h, (unsigned char)(v >> (8 * k)));
    return h;
}

uint64_t ab_row_hash(const ab_value *row, int ncols)
{
    uint64_t h = AB_FNV_OFFSET;
    for (int c = 0; c < ncols; c++) {
        const ab_value *v = &row[c];
        switch (v->type) {
        case AB_NULL:
            h = fnv_byte(h, 'N');
            break;
        case AB_BOOL:
            h = fnv_byte(fnv_byte(h, 'B'), v->u.i ? 1 : 0);
            break;
        case AB_INT:
            h = fnv_le(fnv_byte(h, 'I'), (uint64_t)v->u.i, 8);
            break;
        case AB_FLOAT: {
            uint64_t bits;
            memcpy(&bits, &v->u.f, 8);
            h = fnv_le(fnv_byte(h, 'F'), bits, 8);
            break;
        }
        case AB_DECIMAL:
        case AB_TEXT:
        case AB_BYTES: {
            char tag = v->type == AB_DECIMAL ? 'D' : v->type == AB_TEXT ? 'S' : 'X';
            h = fnv_le(fnv_byte(h, (unsigned char)tag), (uint64_t)(uint32_t)v->u.s.n, 4);
            h = ab_fnv1a64(v->u.s.p, v->u.s.n, h);
            break;
        }
        case AB_TIMESTAMP:
            h = fnv_le(fnv_byte(h, 'T'), (uint64_t)v->u.i, 8);
            break;
        case AB_DATE:
            h = fnv_le(fnv_byte(h, 'd'), (uint64_t)(uint32_t)(int32_t)v->u.i, 4);
            break;
        case AB_TIME:
            h = fnv_le(fnv_byte(h, 't'), (uint64_t)v->u.i, 8);
            break;
        }
    }
    return h;
}

void ab_checksum_hex(const ab_checksum *c, char out[17])
{
    snprintf(out, 17, "%016llx", (unsigned long long)c->total);
}

/* A float as the protocol writes it: its IEEE-754 bits, 16 hex digits, big-endian (exact in
 * every language's JSON). */
static json_t *float_json(double f)
{
    char buf[17];
    uint64_t bits;
    memcpy(&bits, &f, 8);
    return json_stringn(buf, (size_t)snprintf(buf, sizeof buf, "%016llx", (unsigned long long)bits));
}

/* Bytes as the protocol writes them: lower-case hex. */
static json_t *bytes_json(const void *p, size_t n)
{
    char *hex = malloc(2 * n + 1);
    json_t *j = json_stringn(hex, ab_hex(p, n, hex));
    free(hex);
    return j;
}

/* One value as ab_row_hash encodes it, typed: the integer of an int, timestamp, date (as its
 * i32) or time; a float's bits; decimal text as read; text; bytes in hex; a NULL has no value. */
static json_t *value_json(const ab_value *v)
{
    ab_type type = v->type;
    json_t *value = NULL;
    switch (type) {
    case AB_NULL:
        break;
    case AB_BOOL:
        value = json_boolean(v->u.i);
        break;
    case AB_INT:
    case AB_TIMESTAMP:
    case AB_TIME:
        value = json_integer(v->u.i);
        break;
    case AB_DATE:
        value = json_integer((int32_t)v->u.i);
        break;
    case AB_FLOAT:
        value = float_json(v->u.f);
        break;
    case AB_DECIMAL:
    case AB_TEXT:
        if ((value = json_stringn(v->u.s.p, v->u.s.n)))
            break;
        /* text that is not UTF-8 cannot be a JSON string: its bytes then, so that the dump still
         * shows what was read (the checksum hashed those bytes as text) */
        type = AB_BYTES;
        /* fall through */
    case AB_BYTES:
        value = bytes_json(v->u.s.p, v->u.s.n);
        break;
    }
    json_t *typed = json_object();
    json_object_set_new(typed, "type", json_string(ab_type_name(type)));
    if (value)
        json_object_set_new(typed, "value", value);
    return typed;
}

json_t *ab_row_json(const ab_value *row, int ncols)
{
    json_t *out = json_array();
    for (int c = 0; c < ncols; c++)
        json_array_append_new(out, value_json(&row[c]));
    return out;
}

/* ---- latency histogram ------------------------------------------------------------------- */

void ab_hist_merge(ab_histogram *into, const ab_histogram *h)
{
    if (!h->n)
        return;
    for (int b = 0; b < AB_HIST_BUCKETS; b++)
        into->counts[b] += h->counts[b];
    if (!into->n || h->min < into->min)
        into->min = h->min;
    if (h->max > into->max)
        into->max = h->max;
    into->overflow += h->overflow;
    into->sum += h->sum;
    into->n += h->n;
}

json_t *ab_hist_json(const ab_histogram *h)
{
    json_t *o = json_object(), *buckets = json_array();
    for (int b = 0; b < AB_HIST_BUCKETS; b++) {
        if (!h->counts[b])
            continue;
        json_t *pair = json_array();
        json_array_append_new(pair, json_integer(b));
        json_array_append_new(pair, json_integer((json_int_t)h->counts[b]));
        json_array_append_new(buckets, pair);
    }
    json_object_set_new(o, "buckets", buckets);
    json_object_set_new(o, "overflow", json_integer((json_int_t)h->overflow));
    json_object_set_new(o, "min", json_integer(h->n ? (json_int_t)h->min : 0));
    json_object_set_new(o, "max", json_integer((json_int_t)h->max));
    json_object_set_new(o, "sum", json_integer((json_int_t)h->sum));
    return o;
}

/* ---- arrival schedule -------------------------------------------------------------------- */

void ab_schedule_init(ab_schedule *s, double rate_per_s, int poisson, uint64_t seed)
{
    s->mean_gap_ns = 1e9 / rate_per_s;
    s->at = 0.0;
    s->poisson = poisson;
    s->state = seed;
}

int64_t ab_schedule_next(ab_schedule *s)
{
    double offset = s->at;
    /* as schedule.py: -log(1 - u) * mean gap, in that order, so the doubles agree */
    double gap = s->poisson ? -log(1.0 - ab_unit(&s->state)) * s->mean_gap_ns : s->mean_gap_ns;
    s->at += gap;
    return (int64_t)offset;
}

/* ---- arena ------------------------------------------------------------------------------- */

struct ab_chunk {
    ab_chunk *next;
    size_t used, cap;
    _Alignas(16) unsigned char data[];
};

void *ab_arena_alloc(ab_arena *a, size_t n)
{
    n = (n + 15) & ~(size_t)15;
    if (!a->head || a->head->used + n > a->head->cap) {
        size_t cap = n > (1u << 20) ? n : (1u << 20);
        ab_chunk *c = malloc(sizeof *c + cap);
        if (!c) {
            fprintf(stderr, "abworker-c: out of memory\n");
            abort();
        }
        c->next = a->head;
        c->used = 0;
        c->cap = cap;
        a->head = c;
    }
    void *p = a->head->data + a->head->used;
    a->head->used += n;
    return p;
}

char *ab_arena_strndup(ab_arena *a, const char *s, size_t n)
{
    char *p = ab_arena_alloc(a, n + 1);
    memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

void ab_arena_free(ab_arena *a)
{
    while (a->head) {
        ab_chunk *next = a->head->next;
        free(a->head);
        a->head = next;
    }
}

/* ---- time -------------------------------------------------------------------------------- */

int64_t ab_floordiv(int64_t a, int64_t b)
{
    int64_t q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0)))
        q--;
    return q;
}

int64_t ab_floormod(int64_t a, int64_t b)
{
    int64_t m = a % b;
    if (m != 0 && ((m < 0) != (b < 0)))
        m += b;
    return m;
}

/* Howard Hinnant's days_from_civil / civil_from_days (proleptic Gregorian). */
int64_t ab_days_from_civil(int64_t y, unsigned m, unsigned d)
{
    y -= m <= 2;
    const int64_t era = (y >= 0 ? y : y - 399) / 400;
    const unsigned yoe = (unsigned)(y - era * 400);
    const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + (int64_t)doe - 719468;
}

void ab_civil_from_days(int64_t z, int64_t *y, unsigned *m, unsigned *d)
{
    z += 719468;
    const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    const unsigned doe = (unsigned)(z - era * 146097);
    const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    const int64_t yy = (int64_t)yoe + era * 400;
    const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    const unsigned mp = (5 * doy + 2) / 153;
    *d = doy - (153 * mp + 2) / 5 + 1;
    *m = mp < 10 ? mp + 3 : mp - 9;
    *y = yy + (*m <= 2);
}

void ab_civil_from_us(int64_t us, ab_civil *t)
{
    int64_t days = ab_floordiv(us, 86400000000LL), rem = us - days * 86400000000LL;
    ab_civil_from_days(days, &t->year, &t->month, &t->day);
    t->hour = (unsigned)(rem / 3600000000LL);
    t->minute = (unsigned)(rem / 60000000LL % 60);
    t->second = (unsigned)(rem / 1000000 % 60);
    t->micro = (unsigned)(rem % 1000000);
}

size_t ab_format_timestamp(int64_t us, char *out, int generate_form)
{
    ab_civil t;
    ab_civil_from_us(us, &t);
    int n;
    if (generate_form)
        n = sprintf(out, "%04lld-%02u-%02uT%02u:%02u:%02u.%06u", (long long)t.year, t.month, t.day, t.hour, t.minute,
                    t.second, t.micro);
    else if (t.micro)
        n = sprintf(out, "%04lld-%02u-%02u %02u:%02u:%02u.%06u", (long long)t.year, t.month, t.day, t.hour, t.minute,
                    t.second, t.micro);
    else
        n = sprintf(out, "%04lld-%02u-%02u %02u:%02u:%02u", (long long)t.year, t.month, t.day, t.hour, t.minute,
                    t.second);
    return (size_t)n;
}

static int digits(const char **s, int n, int *out)
{
    int v = 0;
    for (int k = 0; k < n; k++) {
        if (!isdigit((unsigned char)(*s)[k]))
            return -1;
        v = v * 10 + ((*s)[k] - '0');
    }
    *s += n;
    *out = v;
    return 0;
}

static int days_in_month(int y, int m)
{
    static const int dm[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    if (m == 2 && ((y % 4 == 0 && y % 100 != 0) || y % 400 == 0))
        return 29;
    return dm[m - 1];
}

/* date.fromisoformat's YYYY-MM-DD or YYYYMMDD at *p, advancing *p past it. */
static int iso_date(const char **p, int *y, int *mo, int *d)
{
    if (digits(p, 4, y))
        return -1;
    if (**p == '-') {
        (*p)++;
        if (digits(p, 2, mo) || *(*p)++ != '-' || digits(p, 2, d))
            return -1;
    } else if (digits(p, 2, mo) || digits(p, 2, d)) {
        return -1;
    }
    return *y < 1 || *mo < 1 || *mo > 12 || *d < 1 || *d > days_in_month(*y, *mo) ? -1 : 0;
}

/* A date as date.fromisoformat takes it: days since 1970. */
static int parse_iso_date(const char *s, int64_t *days)
{
    int y, mo, d;
    if (iso_date(&s, &y, &mo, &d) || *s)
        return -1;
    *days = ab_days_from_civil(y, (unsigned)mo, (unsigned)d);
    return 0;
}

size_t ab_format_date(int64_t days, char *out)
{
    int64_t y;
    unsigned m, d;
    ab_civil_from_days(days, &y, &m, &d);
    return (size_t)sprintf(out, "%04lld-%02u-%02u", (long long)y, m, d);
}

/* datetime.fromisoformat (3.11) for naive values: YYYY-MM-DD or YYYYMMDD, then optionally one
 * separator character and HH[:MM[:SS[.f…]]] (or the compact HHMMSS forms). */
int ab_parse_iso_timestamp(const char *s, int64_t *us)
{
    int y, mo, d, h = 0, mi = 0, se = 0, frac = 0;
    const char *p = s;
    if (iso_date(&p, &y, &mo, &d))
        return -1;
    if (*p) {
        p++; /* any one separator character */
        if (digits(&p, 2, &h))
            return -1;
        int colon = *p == ':';
        if (*p) {
            if (colon)
                p++;
            if (digits(&p, 2, &mi))
                return -1;
            if (*p && (!colon || *p == ':')) {
                if (colon)
                    p++;
                if (digits(&p, 2, &se))
                    return -1;
                if (*p == '.' || *p == ',') {
                    p++;
                    int nd = 0;
                    while (isdigit((unsigned char)*p)) {
                        if (nd < 6)
                            frac = frac * 10 + (*p - '0');
                        nd++;
                        p++;
                    }
                    if (nd == 0)
                        return -1;
                    for (; nd < 6; nd++)
                        frac *= 10;
                }
            }
        }
        if (*p) /* a time zone, or junk: only naive timestamps are supported */
            return -1;
        if (h > 23 || mi > 59 || se > 59)
            return -1;
    }
    *us = ab_us_from_civil(y, (unsigned)mo, (unsigned)d, h, mi, se, frac);
    return 0;
}

/* ---- float and decimal text ---------------------------------------------------------------- */

size_t ab_float_repr(double x, char *out)
{
    if (isnan(x))
        return (size_t)sprintf(out, "nan");
    if (isinf(x))
        return (size_t)sprintf(out, x < 0 ? "-inf" : "inf");
    if (x == 0)
        return (size_t)sprintf(out, signbit(x) ? "-0.0" : "0.0");
    char buf[40];
    int p;
    for (p = 1; p <= 17; p++) {
        snprintf(buf, sizeof buf, "%.*e", p - 1, x);
        if (strtod(buf, NULL) == x)
            break;
    }
    /* buf: [-]d[.ddd]e±XX → digits and decimal exponent */
    char dig[20];
    int nd = 0, neg = 0;
    const char *q = buf;
    if (*q == '-') {
        neg = 1;
        q++;
    }
    for (; *q && *q != 'e'; q++)
        if (isdigit((unsigned char)*q))
            dig[nd++] = *q;
    int exp10 = atoi(q + 1);
    while (nd > 1 && dig[nd - 1] == '0')
        nd--;
    char *o = out;
    if (neg)
        *o++ = '-';
    if (exp10 >= -4 && exp10 < 16) {
        if (exp10 >= 0) {
            for (int k = 0; k <= exp10; k++)
                *o++ = k < nd ? dig[k] : '0';
            *o++ = '.';
            if (nd > exp10 + 1)
                for (int k = exp10 + 1; k < nd; k++)
                    *o++ = dig[k];
            else
                *o++ = '0';
        } else {
            *o++ = '0';
            *o++ = '.';
            for (int k = 0; k < -exp10 - 1; k++)
                *o++ = '0';
            for (int k = 0; k < nd; k++)
                *o++ = dig[k];
        }
    } else {
        *o++ = dig[0];
        if (nd > 1) {
            *o++ = '.';
            for (int k = 1; k < nd; k++)
                *o++ = dig[k];
        }
        o += sprintf(o, "e%c%02d", exp10 < 0 ? '-' : '+', exp10 < 0 ? -exp10 : exp10);
    }
    *o = '\0';
    return (size_t)(o - out);
}

size_t ab_decimal_plain(const char *in, char *out, size_t outlen)
{
    const char *p = in;
    int neg = 0;
    while (isspace((unsigned char)*p))
        p++;
    if (*p == '+' || *p == '-')
        neg = *p++ == '-';
    const char *special = NULL;
    if (!strncasecmp(p, "nan", 3) && !p[3])
        special = "NaN";
    else if (!strncasecmp(p, "snan", 4) && !p[4])
        special = "sNaN";
    else if ((!strcasecmp(p, "inf") || !strcasecmp(p, "infinity")))
        special = "Infinity";
    if (special) {
        int n = snprintf(out, outlen, "%s%s", neg ? "-" : "", special);
        return n > 0 && (size_t)n < outlen ? (size_t)n : 0;
    }
    /* coefficient digits and exponent */
    size_t cap = strlen(p) + 2;
    char *coef = malloc(cap);
    size_t nc = 0;
    long long exp = 0;
    int seen = 0, dot = 0;
    for (; *p && *p != 'e' && *p != 'E'; p++) {
        if (*p == '.') {
            if (dot) {
                free(coef);
                return 0;
            }
            dot = 1;
        } else if (isdigit((unsigned char)*p)) {
            seen = 1;
            if (nc || *p != '0')
                coef[nc++] = *p;
            if (dot)
                exp--;
        } else {
            free(coef);
            return 0;
        }
    }
    if (*p) {
        char *end;
        long long e = strtoll(p + 1, &end, 10);
        if (end == p + 1 || *end) {
            free(coef);
            return 0;
        }
        exp += e;
    }
    if (!seen) {
        free(coef);
        return 0;
    }
    if (!nc) {
        coef[nc++] = '0';
        if (exp > 0)
            exp = 0;
    }
    size_t need = nc + (size_t)(exp < 0 ? -exp : exp) + 4;
    if (need >= outlen) {
        free(coef);
        return 0;
    }
    char *o = out;
    if (neg)
        *o++ = '-';
    if (exp >= 0) {
        memcpy(o, coef, nc);
        o += nc;
        for (long long k = 0; k < exp; k++)
            *o++ = '0';
    } else {
        long long k = (long long)nc + exp;
        if (k > 0) {
            memcpy(o, coef, (size_t)k);
            o += k;
            *o++ = '.';
            memcpy(o, coef + k, nc - (size_t)k);
            o += nc - (size_t)k;
        } else {
            *o++ = '0';
            *o++ = '.';
            for (long long z = 0; z < -k; z++)
                *o++ = '0';
            memcpy(o, coef, nc);
            o += nc;
        }
    }
    *o = '\0';
    free(coef);
    return (size_t)(o - out);
}

double ab_mariadb_float(float f, unsigned decimals)
{
    if (isnan(f) || isinf(f))
        return (double)f;
    char buf[64];
    if (decimals < AB_MARIADB_NOT_FIXED_DEC)
        snprintf(buf, sizeof buf, "%.*f", (int)decimals, (double)f);
    else
        snprintf(buf, sizeof buf, "%.6g", (double)f);
    return strtod(buf, NULL);
}

/* ---- generators ---------------------------------------------------------------------------- */

enum { G_SEQ, G_UNIFORM, G_CHOICE, G_TEXT, G_TIMESTAMP, G_CONST, G_FLOAT, G_DECIMAL, G_DATE, G_BYTES };

/* Each kind by name, and the type its values have (choice and const: their spec's). */
static const struct {
    const char *name;
    ab_type type;
} KINDS[] = {[G_SEQ] = {"seq", AB_INT},           [G_UNIFORM] = {"uniform", AB_INT},
             [G_CHOICE] = {"choice", AB_NULL},    [G_TEXT] = {"text", AB_TEXT},
             [G_TIMESTAMP] = {"timestamp", AB_TIMESTAMP}, [G_CONST] = {"const", AB_NULL},
             [G_FLOAT] = {"float", AB_FLOAT},     [G_DECIMAL] = {"decimal", AB_DECIMAL},
             [G_DATE] = {"date", AB_DATE},        [G_BYTES] = {"bytes", AB_BYTES}};

/* The types a spec's "type" names (protocol/PROTOCOL.md, Types). */
static const struct {
    const char *name;
    ab_type type;
} TYPES[] = {{"int", AB_INT},         {"bool", AB_BOOL},   {"float", AB_FLOAT},         {"decimal", AB_DECIMAL},
             {"text", AB_TEXT},       {"date", AB_DATE},   {"timestamp", AB_TIMESTAMP}, {"bytes", AB_BYTES}};

const char *ab_type_name(ab_type t)
{
    for (size_t k = 0; k < sizeof TYPES / sizeof *TYPES; k++)
        if (TYPES[k].type == t)
            return TYPES[k].name;
    return t == AB_NULL ? "null" : t == AB_TIME ? "time" : "?";
}

static int json_i64(json_t *spec, const char *key, int64_t dflt, int64_t *out, int *present)
{
    json_t *v = json_object_get(spec, key);
    if (present)
        *present = v != NULL && !json_is_null(v);
    if (!v || json_is_null(v)) {
        *out = dflt;
        return 0;
    }
    if (json_is_integer(v)) {
        *out = (int64_t)json_integer_value(v);
        return 0;
    }
    if (json_is_real(v) && json_real_value(v) == floor(json_real_value(v))) {
        *out = (int64_t)json_real_value(v);
        return 0;
    }
    return -1;
}

static int hexdigit(int c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

int ab_unhex(const char *hex, size_t n, void *out)
{
    unsigned char *b = out;
    if (n % 2)
        return -1;
    for (size_t k = 0; k < n; k += 2) {
        int hi = hexdigit(hex[k]), lo = hexdigit(hex[k + 1]);
        if (hi < 0 || lo < 0)
            return -1;
        b[k / 2] = (unsigned char)(hi * 16 + lo);
    }
    return 0;
}

size_t ab_hex(const void *bytes, size_t n, char *out)
{
    static const char digits16[] = "0123456789abcdef";
    const unsigned char *b = bytes;
    for (size_t k = 0; k < n; k++) {
        out[2 * k] = digits16[b[k] >> 4];
        out[2 * k + 1] = digits16[b[k] & 15];
    }
    out[2 * n] = '\0';
    return 2 * n;
}

/* The text form of a value whose type and native value are set (ab_param.text); bytes and
 * text already hold theirs. */
static void set_text(ab_param *p, ab_arena *arena)
{
    char buf[64];
    size_t n;
    switch (p->type) {
    case AB_NULL:
        p->text = "", p->len = 0;
        return;
    case AB_BOOL:
        p->text = p->i ? "true" : "false", p->len = p->i ? 4 : 5;
        return;
    case AB_INT:
        n = (size_t)sprintf(buf, "%lld", (long long)p->i);
        break;
    case AB_FLOAT:
        n = ab_float_repr(p->f, buf);
        break;
    case AB_TIMESTAMP:
        n = ab_format_timestamp(p->i, buf, 0);
        break;
    case AB_DATE:
        n = ab_format_date(p->i, buf);
        break;
    default: /* decimal, text, bytes: made with their text */
        return;
    }
    p->text = ab_arena_strndup(arena, buf, n);
    p->len = n;
}

/* A string of a choice's or const's type (decimal digits, YYYY-MM-DD, ISO 8601, hex) → out. */
static int param_from_text(const char *s, size_t n, ab_type type, ab_param *out, ab_arena *arena)
{
    switch (type) {
    case AB_TEXT:
        out->text = ab_arena_strndup(arena, s, n), out->len = n;
        return 0;
    case AB_DECIMAL: {
        char *t = ab_arena_alloc(arena, n + 64);
        out->len = ab_decimal_plain(s, t, n + 64);
        out->text = t;
        return out->len ? 0 : -1;
    }
    case AB_DATE:
        return parse_iso_date(s, &out->i);
    case AB_TIMESTAMP:
        return ab_parse_iso_timestamp(s, &out->i);
    case AB_BYTES: {
        unsigned char *b = ab_arena_alloc(arena, n / 2 + 1);
        out->text = (const char *)b, out->len = n / 2;
        return ab_unhex(s, n, b);
    }
    default:
        return -1;
    }
}

/* A JSON value of a choice list or const, of the spec's type, as a parameter: JSON booleans
 * (bool), integers (int), numbers (float), strings (text, and the text forms of the others). */
static int param_from_json(json_t *v, ab_type type, ab_param *out, ab_arena *arena)
{
    memset(out, 0, sizeof *out);
    out->type = type;
    if (json_is_null(v))
        out->type = AB_NULL;
    else if (type == AB_BOOL && json_is_boolean(v))
        out->i = json_is_true(v);
    else if (type == AB_INT && json_is_integer(v))
        out->i = (int64_t)json_integer_value(v);
    else if (type == AB_FLOAT && json_is_number(v))
        out->f = json_number_value(v);
    else if (!json_is_string(v) || param_from_text(json_string_value(v), json_string_length(v), type, out, arena))
        return -1;
    set_text(out, arena);
    return 0;
}

/* The spec's type: declared, its kind's, or (choice, const without one) its first value's. */
static int spec_type(json_t *spec, int kind, json_t *first, ab_type *type)
{
    const char *name = json_string_value(json_object_get(spec, "type"));
    if (name) {
        for (size_t k = 0; k < sizeof TYPES / sizeof *TYPES; k++)
            if (!strcmp(name, TYPES[k].name)) {
                *type = TYPES[k].type;
                /* a kind that makes values of its own type makes no other */
                return KINDS[kind].type == AB_NULL || KINDS[kind].type == *type ? 0 : -1;
            }
        return -1;
    }
    *type = KINDS[kind].type != AB_NULL ? KINDS[kind].type
            : json_is_boolean(first)     ? AB_BOOL
            : json_is_integer(first)     ? AB_INT
            : json_is_real(first)        ? AB_FLOAT
                                         : AB_TEXT;
    return 0;
}

int ab_gen_init(ab_gen *g, json_t *spec, ab_arena *arena, char *err, size_t errlen)
{
    memset(g, 0, sizeof *g);
    if (!json_is_object(spec)) {
        snprintf(err, errlen, "a generator spec must be an object");
        return -1;
    }
    const char *kind = json_string_value(json_object_get(spec, "kind"));
    if (!kind) {
        snprintf(err, errlen, "generator spec without kind");
        return -1;
    }
    g->kind = -1;
    for (int k = 0; k < (int)(sizeof KINDS / sizeof *KINDS); k++)
        if (!strcmp(kind, KINDS[k].name))
            g->kind = k;
    if (g->kind < 0) {
        snprintf(err, errlen, "unknown generator kind '%s'", kind);
        return -1;
    }
    int64_t seed;
    if (json_i64(spec, "seed", 0, &seed, NULL)) {
        snprintf(err, errlen, "generator seed must be an integer");
        return -1;
    }
    g->state = (uint64_t)seed;
    json_t *null = json_object_get(spec, "null");
    g->null = json_is_number(null) ? json_number_value(null) : 0.0;
    json_t *vals = json_object_get(spec, g->kind == G_CHOICE ? "values" : "value");
    if (spec_type(spec, g->kind, g->kind == G_CHOICE ? json_array_get(vals, 0) : vals, &g->type)) {
        snprintf(err, errlen, "%s: unknown type or not one this kind makes", kind);
        return -1;
    }
    switch (g->kind) {
    case G_SEQ: {
        int has_mod;
        if (json_i64(spec, "start", 1, &g->start, NULL) || json_i64(spec, "step", 1, &g->step, NULL) ||
            json_i64(spec, "div", 1, &g->div, NULL) || json_i64(spec, "mod", 0, &g->mod, &has_mod)) {
            snprintf(err, errlen, "seq: start, step, div and mod must be integers");
            return -1;
        }
        if (g->div == 0) {
            snprintf(err, errlen, "seq: div must not be 0");
            return -1;
        }
        break;
    }
    case G_UNIFORM:
    case G_DECIMAL: {
        int64_t hi, scale;
        int has_lo, has_hi;
        if (json_i64(spec, "lo", 0, &g->lo, &has_lo) || json_i64(spec, "hi", 0, &hi, &has_hi) || !has_lo ||
            !has_hi || json_i64(spec, "scale", 0, &scale, NULL) || scale < 0 || scale > 1000) {
            snprintf(err, errlen, "%s: lo and hi must be integers (decimal: units of 10^-scale, 0 <= scale <= 1000)", kind);
            return -1;
        }
        g->span = (uint64_t)hi - (uint64_t)g->lo + 1;
        g->scale = (int)scale;
        break;
    }
    case G_CHOICE:
    case G_CONST: {
        int choice = g->kind == G_CHOICE;
        if (!vals || (choice && (!json_is_array(vals) || json_array_size(vals) == 0))) {
            snprintf(err, errlen, choice ? "choice: values must be a non-empty list" : "const: value is missing");
            return -1;
        }
        g->nchoices = choice ? json_array_size(vals) : 1;
        g->choices = ab_arena_alloc(arena, g->nchoices * sizeof *g->choices);
        for (size_t k = 0; k < g->nchoices; k++) {
            if (param_from_json(choice ? json_array_get(vals, k) : vals, g->type, &g->choices[k], arena)) {
                snprintf(err, errlen, "%s: a value is not a %s (decimal, date, timestamp and bytes: their text form)",
                         kind, ab_type_name(g->type));
                return -1;
            }
        }
        break;
    }
    case G_TEXT: {
        json_t *pat = json_object_get(spec, "pattern");
        if (!json_is_string(pat)) {
            snprintf(err, errlen, "text: pattern must be a string");
            return -1;
        }
        g->plen = json_string_length(pat);
        g->pattern = ab_arena_strndup(arena, json_string_value(pat), g->plen);
        break;
    }
    case G_TIMESTAMP:
    case G_DATE: {
        const char *start = json_string_value(json_object_get(spec, "start"));
        int ts = g->kind == G_TIMESTAMP;
        int64_t jitter;
        if (!start || (ts ? ab_parse_iso_timestamp(start, &g->ts_start) : parse_iso_date(start, &g->ts_start))) {
            snprintf(err, errlen, ts ? "timestamp: start must be an ISO timestamp without time zone, like 2001-01-01T00:00:00"
                                     : "date: start must be an ISO date, like 2001-01-31");
            return -1;
        }
        if (json_i64(spec, ts ? "step_us" : "step_days", ts ? 1000000 : 1, &g->step_us, NULL) ||
            json_i64(spec, ts ? "jitter_us" : "jitter_days", 0, &jitter, NULL) || jitter < 0) {
            snprintf(err, errlen, ts ? "timestamp: step_us and jitter_us must be integers (jitter_us >= 0)"
                                     : "date: step_days and jitter_days must be integers (jitter_days >= 0)");
            return -1;
        }
        g->jitter_us = (uint64_t)jitter;
        break;
    }
    case G_FLOAT: {
        json_t *lo = json_object_get(spec, "lo"), *hi = json_object_get(spec, "hi");
        int64_t d;
        int has_digits;
        if (!json_is_number(lo) || !json_is_number(hi) || json_i64(spec, "digits", 0, &d, &has_digits) || d < 0 ||
            d > 15) {
            snprintf(err, errlen, "float: lo and hi must be numbers, digits an integer from 0 to 15");
            return -1;
        }
        g->flo = json_number_value(lo);
        g->fhi = json_number_value(hi);
        if (has_digits) /* 10^d by repeated exact multiplication, as every worker makes it */
            for (g->pow10 = 1.0; d > 0; d--)
                g->pow10 *= 10.0;
        break;
    }
    case G_BYTES: {
        int64_t length;
        int has;
        if (json_i64(spec, "length", 0, &length, &has) || !has || length < 0 || length > (1 << 30)) {
            snprintf(err, errlen, "bytes: length must be an integer >= 0");
            return -1;
        }
        g->length = (size_t)length;
        break;
    }
    }
    return 0;
}

/* An integer count of 10^-scale as plain decimal text: (-1234, 2) → "-12.34", (5, 3) → "0.005". */
static size_t decimal_text(int64_t units, int scale, char *out)
{
    char digs[24];
    uint64_t mag = units < 0 ? 0 - (uint64_t)units : (uint64_t)units;
    int n = sprintf(digs, "%llu", (unsigned long long)mag);
    int total = n > scale ? n : scale + 1; /* digits written: zeros ahead up to scale + 1 */
    char *o = out;
    if (units < 0)
        *o++ = '-';
    for (int k = 0; k < total; k++) {
        if (scale && k == total - scale)
            *o++ = '.';
        *o++ = k < total - n ? '0' : digs[k - (total - n)];
    }
    *o = '\0';
    return (size_t)(o - out);
}

void ab_gen_next(ab_gen *g, int64_t i, ab_param *out, ab_arena *arena)
{
    memset(out, 0, sizeof *out);
    if (g->null > 0 && ab_unit(&g->state) < g->null) {
        out->type = AB_NULL;
        out->text = "";
        return;
    }
    out->type = g->type;
    switch (g->kind) {
    case G_SEQ: {
        int64_t v = ab_floordiv(g->start + i * g->step, g->div);
        out->i = g->mod ? ab_floormod(v, g->mod) : v;
        break;
    }
    case G_UNIFORM: {
        uint64_t r = ab_splitmix64_next(&g->state);
        out->i = (int64_t)((uint64_t)g->lo + (g->span ? r % g->span : r));
        break;
    }
    case G_CHOICE:
    case G_CONST: {
        size_t k = g->kind == G_CHOICE ? (size_t)(ab_splitmix64_next(&g->state) % g->nchoices) : 0;
        *out = g->choices[k];
        return;
    }
    case G_TEXT: {
        char *t = ab_arena_alloc(arena, g->plen + 1);
        for (size_t k = 0; k < g->plen; k++) {
            char ch = g->pattern[k];
            if (ch == '#')
                ch = (char)('0' + ab_splitmix64_next(&g->state) % 10);
            else if (ch == '?')
                ch = (char)('a' + ab_splitmix64_next(&g->state) % 26);
            t[k] = ch;
        }
        t[g->plen] = '\0';
        out->text = t;
        out->len = g->plen;
        return;
    }
    case G_TIMESTAMP:
    case G_DATE: {
        int64_t off = i * g->step_us;
        if (g->jitter_us)
            off += (int64_t)(ab_splitmix64_next(&g->state) % (g->jitter_us + 1));
        out->i = g->ts_start + off;
        break;
    }
    case G_FLOAT: {
        double v = g->flo + ab_unit(&g->state) * (g->fhi - g->flo);
        out->f = g->pow10 > 0 ? floor(v * g->pow10 + 0.5) / g->pow10 : v;
        break;
    }
    case G_DECIMAL: {
        uint64_t r = ab_splitmix64_next(&g->state);
        char buf[1100];
        out->len = decimal_text((int64_t)((uint64_t)g->lo + (g->span ? r % g->span : r)), g->scale, buf);
        out->text = ab_arena_strndup(arena, buf, out->len);
        return;
    }
    case G_BYTES: {
        unsigned char *b = ab_arena_alloc(arena, g->length + 1);
        for (size_t k = 0; k < g->length; k++)
            b[k] = (unsigned char)(ab_splitmix64_next(&g->state) % 256);
        out->text = (const char *)b;
        out->len = g->length;
        return;
    }
    }
    set_text(out, arena);
}

json_t *ab_param_json(const ab_param *p)
{
    char buf[40];
    switch (p->type) {
    case AB_NULL:
        return json_null();
    case AB_BOOL:
        return json_boolean(p->i);
    case AB_INT:
        return json_integer(p->i);
    case AB_FLOAT:
        return float_json(p->f);
    case AB_TIMESTAMP:
        return json_stringn(buf, ab_format_timestamp(p->i, buf, 1));
    case AB_BYTES:
        return bytes_json(p->text, p->len);
    default: /* decimal, text, date: their text */
        return json_stringn(p->text, p->len);
    }
}

/* ---- SQL text -------------------------------------------------------------------------------- */

int ab_sql_markers(const char *sql, size_t **pos)
{
    size_t n = strlen(sql), i = 0, cap = 0;
    int count = 0;
    *pos = NULL;
    while (i < n) {
        char ch = sql[i];
        if (ch == '\'' || ch == '"') {
            size_t end = i + 1;
            while (end < n) {
                if (sql[end] == ch) {
                    if (end + 1 < n && sql[end + 1] == ch) {
                        end += 2;
                        continue;
                    }
                    break;
                }
                end++;
            }
            i = end + 1;
        } else if (ch == '-' && i + 1 < n && sql[i + 1] == '-') {
            const char *nl = strchr(sql + i, '\n');
            i = nl ? (size_t)(nl - sql) : n;
        } else if (ch == '/' && i + 1 < n && sql[i + 1] == '*') {
            const char *end = strstr(sql + i + 2, "*/");
            i = end ? (size_t)(end - sql) + 2 : n;
        } else if (ch == '?') {
            if ((size_t)count == cap) {
                cap = cap ? cap * 2 : 8;
                *pos = realloc(*pos, cap * sizeof **pos);
            }
            (*pos)[count++] = i;
            i++;
        } else {
            i++;
        }
    }
    return count;
}

char *ab_sql_convert(const char *sql, int style)
{
    size_t *pos;
    int m = ab_sql_markers(sql, &pos);
    size_t n = strlen(sql);
    char *out = malloc(n + (size_t)m * 12 + 1), *o = out;
    size_t prev = 0;
    for (int k = 0; k < m; k++) {
        memcpy(o, sql + prev, pos[k] - prev);
        o += pos[k] - prev;
        if (style == AB_MARK_DOLLAR)
            o += sprintf(o, "$%d", k + 1);
        else
            *o++ = '?';
        prev = pos[k] + 1;
    }
    memcpy(o, sql + prev, n - prev);
    o[n - prev] = '\0';
    free(pos);
    return out;
}

static size_t put(char *out, size_t at, const char *s, size_t n)
{
    if (out)
        memcpy(out + at, s, n);
    return at + n;
}

size_t ab_literal(const ab_param *v, int dialect, char *out)
{
    size_t n = 0;
    int pg = dialect == AB_DIALECT_POSTGRESQL;
    switch (v->type) {
    case AB_NULL:
        return put(out, 0, "NULL", 4);
    case AB_BOOL: /* SQLite has no boolean: bound as integer 1/0, so written as one */
        if (dialect == AB_DIALECT_SQLITE)
            return put(out, 0, v->i ? "1" : "0", 1);
        return v->i ? put(out, 0, "TRUE", 4) : put(out, 0, "FALSE", 5);
    case AB_INT:
    case AB_DECIMAL:
        return put(out, 0, v->text, v->len);
    case AB_FLOAT:
        /* shortest round-trip digits, always in exponent form: 0.1e0 is a double on MariaDB,
         * where 0.1 would be DECIMAL; PostgreSQL reads any such text as numeric, so it is cast */
        n = put(out, 0, v->text, v->len);
        if (!memchr(v->text, 'e', v->len))
            n = put(out, n, "e0", 2);
        return pg ? put(out, n, "::float8", 8) : n;
    case AB_DATE:
        n = pg ? put(out, 0, "DATE '", 6) : put(out, 0, "'", 1);
        n = put(out, n, v->text, v->len);
        return put(out, n, "'", 1);
    case AB_TIMESTAMP:
        n = put(out, 0, "'", 1);
        n = put(out, n, v->text, v->len);
        return put(out, n, "'", 1);
    case AB_BYTES: /* '\x…'::bytea on PostgreSQL, X'…' elsewhere */
        n = pg ? put(out, 0, "'\\x", 3) : put(out, 0, "X'", 2);
        if (out)
            ab_hex(v->text, v->len, out + n);
        n += 2 * v->len;
        return pg ? put(out, n, "'::bytea", 8) : put(out, n, "'", 1);
    case AB_TEXT:
        /* the dialect matters for text on MariaDB, where a backslash is an escape character in
         * strings (doubled, as sqltext.literal does) */
        n = put(out, 0, "'", 1);
        for (size_t k = 0; k < v->len; k++) {
            if (v->text[k] == '\'')
                n = put(out, n, "''", 2);
            else if (v->text[k] == '\\' && dialect == AB_DIALECT_MARIADB)
                n = put(out, n, "\\\\", 2);
            else
                n = put(out, n, v->text + k, 1);
        }
        return put(out, n, "'", 1);
    default:
        return put(out, 0, "NULL", 4);
    }
}

char *ab_sql_inline(const char *sql, const size_t *pos, int nmarkers, const ab_param *values, int dialect,
                    ab_arena *arena, size_t *len)
{
    size_t n = strlen(sql), total = n - (size_t)nmarkers;
    for (int k = 0; k < nmarkers; k++)
        total += ab_literal(&values[k], dialect, NULL);
    char *out = ab_arena_alloc(arena, total + 1), *o = out;
    size_t prev = 0;
    for (int k = 0; k < nmarkers; k++) {
        memcpy(o, sql + prev, pos[k] - prev);
        o += pos[k] - prev;
        o += ab_literal(&values[k], dialect, o);
        prev = pos[k] + 1;
    }
    memcpy(o, sql + prev, n - prev);
    o += n - prev;
    *o = '\0';
    *len = (size_t)(o - out);
    return out;
}
