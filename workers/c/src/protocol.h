/* The shared pieces of the worker protocol (protocol/PROTOCOL.md), in C: splitmix64, the
 * value generators, the FNV-1a checksum over the canonical encoding, SQL literals and the
 * '?'-marker scanner. They must match src/accessbench/protocol/ bit for bit. */
#ifndef AB_PROTOCOL_H
#define AB_PROTOCOL_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

/* ---- values ---------------------------------------------------------------------------- */

typedef enum {
    AB_NULL,
    AB_BOOL,      /* u.i: 0/1 */
    AB_INT,       /* u.i */
    AB_FLOAT,     /* u.f */
    AB_DECIMAL,   /* u.s: plain decimal text, no exponent */
    AB_TEXT,      /* u.s: UTF-8 */
    AB_BYTES,     /* u.s */
    AB_TIMESTAMP, /* u.i: microseconds since 1970-01-01 00:00:00 */
    AB_DATE,      /* u.i: days since 1970-01-01 */
    AB_TIME       /* u.i: microseconds since midnight */
} ab_type;

typedef struct {
    ab_type type;
    union {
        int64_t i;
        double f;
        struct {
            const char *p;
            size_t n;
        } s;
    } u;
} ab_value;

/* ---- PRNG and checksum ----------------------------------------------------------------- */

#define AB_FNV_OFFSET 0xcbf29ce484222325ULL
#define AB_FNV_PRIME 0x100000001b3ULL

uint64_t ab_splitmix64_next(uint64_t *state);
double ab_unit(uint64_t *state);
uint64_t ab_fnv1a64(const void *data, size_t len, uint64_t h);

uint64_t ab_row_hash(const ab_value *row, int ncols);

typedef struct {
    uint64_t total;
    uint64_t rows;
} ab_checksum;

/* Decimal text as the servers send it (a sign, then digits), parsed without locale or errno:
 * these run for every value a text-protocol scan reads. */
static inline int64_t ab_parse_int(const char *p)
{
    int neg = *p == '-';
    uint64_t v = 0;
    if (neg || *p == '+')
        p++;
    while (*p >= '0' && *p <= '9')
        v = v * 10 + (uint64_t)(*p++ - '0');
    return neg ? (int64_t)(0 - v) : (int64_t)v;
}

/* Up to n digits at *p, advancing *p past them (dates and times in text results). */
static inline int ab_digits(const char **p, int n)
{
    int v = 0;
    for (int k = 0; k < n && **p >= '0' && **p <= '9'; k++)
        v = v * 10 + (*(*p)++ - '0');
    return v;
}

/* "Y…Y-MM-DD" (any number of year digits) at *p, advancing *p past the day. */
static inline void ab_parse_ymd(const char **p, int64_t *y, int *m, int *d)
{
    *y = 0;
    while (**p >= '0' && **p <= '9')
        *y = *y * 10 + (*(*p)++ - '0');
    (*p)++;
    *m = ab_digits(p, 2);
    (*p)++;
    *d = ab_digits(p, 2);
}

/* µs of "[-]H…H:MM:SS[.ffffff]" at *p (a time of day; MariaDB's TIME may pass 24 hours or be
 * negative), advancing *p past it. */
static inline int64_t ab_parse_time_us(const char **p)
{
    int neg = **p == '-';
    if (neg)
        (*p)++;
    int64_t h = 0;
    while (**p >= '0' && **p <= '9')
        h = h * 10 + (*(*p)++ - '0');
    (*p)++;
    int mi = ab_digits(p, 2);
    (*p)++;
    int s = ab_digits(p, 2);
    int64_t us = 0;
    if (**p == '.') {
        int nd = 0;
        for ((*p)++; **p >= '0' && **p <= '9'; (*p)++)
            if (nd < 6)
                us = us * 10 + (**p - '0'), nd++;
        for (; nd < 6; nd++)
            us *= 10;
    }
    us += (h * 3600 + mi * 60 + s) * 1000000LL;
    return neg ? -us : us;
}

static inline void ab_checksum_add(ab_checksum *c, const ab_value *row, int ncols)
{
    c->total += ab_row_hash(row, ncols);
    c->rows++;
}

void ab_checksum_hex(const ab_checksum *c, char out[17]);

/* A row as typed values, [{"type": T, "value": V}, …] (the checksum op's input form, and a
 * verification pass's dump): what ab_row_hash encodes, readable — the same type letter and the
 * same integer, float bits or text (checksum.py's typed()). */
json_t *ab_row_json(const ab_value *row, int ncols);

/* ---- a bump allocator for one step's texts ---------------------------------------------- */

typedef struct ab_chunk ab_chunk;
typedef struct {
    ab_chunk *head;
} ab_arena;

void *ab_arena_alloc(ab_arena *a, size_t n);
char *ab_arena_strndup(ab_arena *a, const char *s, size_t n);
void ab_arena_free(ab_arena *a);

/* ---- generators ------------------------------------------------------------------------- */

/* One generated parameter value: its type (AB_NULL for a NULL; the column's type is its
 * generator's, ab_gen.type) and the value, with its text form ready for drivers that bind text.
 * This is the one place a value's type lives: drivers only bind it. */
typedef struct {
    ab_type type;  /* AB_NULL, AB_BOOL, AB_INT, AB_FLOAT, AB_DECIMAL, AB_TEXT, AB_BYTES, AB_TIMESTAMP, AB_DATE */
    int64_t i;     /* AB_INT, AB_BOOL (0/1), AB_TIMESTAMP (µs since 1970), AB_DATE (days since 1970) */
    double f;      /* AB_FLOAT */
    /* NUL-terminated text form: digits; "true"/"false"; the shortest round-trip float
     * (Python's repr); plain decimal text (its scale kept); the string;
     * 'YYYY-MM-DD HH:MM:SS[.ffffff]'; 'YYYY-MM-DD'. AB_BYTES: the raw bytes (len of them). */
    const char *text;
    size_t len;
} ab_param;

typedef struct {
    int kind;
    ab_type type; /* the type of every value (protocol/PROTOCOL.md, Types) */
    uint64_t state;
    double null;
    /* seq */
    int64_t start, step, div, mod;
    /* uniform; decimal (units of 10^-scale) */
    int64_t lo;
    uint64_t span;
    int scale;
    /* float: lo + unit() · (hi − lo), rounded to digits places when pow10 > 0 */
    double flo, fhi, pow10;
    /* choice / const: values converted once */
    ab_param *choices;
    size_t nchoices;
    /* text */
    const char *pattern;
    size_t plen;
    /* timestamp (µs) and date (days): start + i·step (+ jitter) */
    int64_t ts_start, step_us;
    uint64_t jitter_us;
    /* bytes */
    size_t length;
} ab_gen;

/* Sets up a generator from its spec; returns 0, or -1 with a message in err. */
int ab_gen_init(ab_gen *g, json_t *spec, ab_arena *arena, char *err, size_t errlen);
/* Value i (called with i = 0, 1, 2, … in order). */
void ab_gen_next(ab_gen *g, int64_t i, ab_param *out, ab_arena *arena);
/* A generated value as the generate op answers it (protocol/PROTOCOL.md). */
json_t *ab_param_json(const ab_param *p);
/* The name of a value type ("int", "float", …). */
const char *ab_type_name(ab_type t);

/* ---- latency histogram (histogram.py) ---------------------------------------------------- */

/* Log-linear over integer nanoseconds, integer operations only so every language files a
 * value in the same bucket: v < 256 is bucket v; otherwise, with L = bit length of v, bucket
 * (L − 8) · 128 + (v >> (L − 8)) — at most 0.8% wide. Values ≥ 2^40 count in overflow. A
 * fixed array of counts: recording is an index and an increment, no allocation. */
#define AB_HIST_LIMIT (1ULL << 40)
#define AB_HIST_BUCKETS ((40 - 8 + 1) * 128 + 256)

typedef struct {
    uint64_t counts[AB_HIST_BUCKETS];
    uint64_t n, overflow, min, max, sum;
} ab_histogram;

static inline int ab_hist_index(uint64_t v)
{
    if (v < 256)
        return (int)v;
    int shift = 64 - __builtin_clzll(v) - 8;
    return shift * 128 + (int)(v >> shift);
}

static inline void ab_hist_record(ab_histogram *h, uint64_t v)
{
    if (v >= AB_HIST_LIMIT)
        h->overflow++;
    else
        h->counts[ab_hist_index(v)]++;
    if (!h->n || v < h->min)
        h->min = v;
    if (v > h->max)
        h->max = v;
    h->sum += v;
    h->n++;
}

void ab_hist_merge(ab_histogram *into, const ab_histogram *h);
/* The wire form: {"buckets": [[bucket, count], …] ascending, "overflow", "min", "max", "sum"} */
json_t *ab_hist_json(const ab_histogram *h);

/* ---- arrival schedule (schedule.py) ------------------------------------------------------ */

/* Intended start offsets of an open loop, in ns from the start: 0 first, then a double
 * accumulator advanced by 1e9 / rate (uniform) or −ln(1 − u) · 1e9 / rate (poisson, u from
 * splitmix64), each offset truncated toward zero. */
typedef struct {
    double mean_gap_ns, at;
    int poisson;
    uint64_t state;
} ab_schedule;

void ab_schedule_init(ab_schedule *s, double rate_per_s, int poisson, uint64_t seed);
int64_t ab_schedule_next(ab_schedule *s);

/* ---- time -------------------------------------------------------------------------------- */

/* 'YYYY-MM-DD HH:MM:SS[.ffffff]' (sep ' ', as datetime.isoformat(sep=" ")) or with sep 'T' and
 * always six fraction digits (the generate op's form). Returns the length written. */
size_t ab_format_timestamp(int64_t us, char *out, int generate_form);
/* 'YYYY-MM-DD' of days since 1970 (date.isoformat). Returns the length written. */
size_t ab_format_date(int64_t days, char *out);
/* ISO 8601 as datetime.fromisoformat takes it (naive only). */
int ab_parse_iso_timestamp(const char *s, int64_t *us);
int64_t ab_days_from_civil(int64_t y, unsigned m, unsigned d);
void ab_civil_from_days(int64_t z, int64_t *y, unsigned *m, unsigned *d);
int64_t ab_floordiv(int64_t a, int64_t b);
int64_t ab_floormod(int64_t a, int64_t b);

/* A timestamp's calendar fields (proleptic Gregorian, no time zone). */
typedef struct {
    int64_t year;
    unsigned month, day, hour, minute, second, micro;
} ab_civil;

/* µs since 1970 → its calendar fields (drivers that bind timestamps as structs). */
void ab_civil_from_us(int64_t us, ab_civil *t);

/* Calendar fields → µs since 1970 (drivers that read timestamps as structs). */
static inline int64_t ab_us_from_civil(int64_t y, unsigned mo, unsigned d, int64_t h, int64_t mi, int64_t s,
                                       int64_t us)
{
    return (ab_days_from_civil(y, mo, d) * 86400LL + h * 3600LL + mi * 60LL + s) * 1000000LL + us;
}

/* ---- SQL text ---------------------------------------------------------------------------- */

enum { AB_DIALECT_POSTGRESQL, AB_DIALECT_SQLITE, AB_DIALECT_MARIADB }; /* MariaDB: a backslash is an escape in strings */
enum { AB_MARK_QMARK, AB_MARK_DOLLAR };

/* Marker offsets of sql (byte positions of each '?'), skipping quotes and comments exactly as
 * sqltext.py does. Returns the number of markers; *pos (malloc'd) may be NULL when none. */
int ab_sql_markers(const char *sql, size_t **pos);
/* sql with markers rewritten ('?' or '$n'); malloc'd. */
char *ab_sql_convert(const char *sql, int style);
/* Length of v as an SQL literal (rendered into out when out != NULL). */
size_t ab_literal(const ab_param *v, int dialect, char *out);
/* The statement with every marker replaced by its literal, in the arena. */
char *ab_sql_inline(const char *sql, const size_t *pos, int nmarkers, const ab_param *values,
                    int dialect, ab_arena *arena, size_t *len);

/* Lower-case hex of n bytes into out (2n characters, then a NUL). Returns 2n. */
size_t ab_hex(const void *bytes, size_t n, char *out);
/* n hex digits → n / 2 bytes at out; -1 when n is odd or a digit is not hex. */
int ab_unhex(const char *hex, size_t n, void *out);
/* Python's repr(float): shortest round-trip text. Returns the length. */
size_t ab_float_repr(double x, char *out);
/* Decimal text as Python's format(Decimal(text), "f"); returns length, or 0 if not a number. */
size_t ab_decimal_plain(const char *in, char *out, size_t outlen);

/* MariaDB's FLOAT as a text-protocol client reads it: the text the server prints for the
 * 4-byte float (6 significant digits, FLT_DIG, or its declared decimals when they are below
 * AB_MARIADB_NOT_FIXED_DEC) read as a double; the float widened would be another double. */
#define AB_MARIADB_NOT_FIXED_DEC 31 /* the decimals of a FLOAT declared without them */
double ab_mariadb_float(float f, unsigned decimals);

#endif
