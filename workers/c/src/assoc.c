/* Load steps: the three hand-written strategies over any driver's ab_driver.query (see assoc.h).
 *
 * One operation is one whole load. Each row a statement reads reaches ab_assoc_row (through
 * the driver's ab_emit) already decoded as the driver's scans decode it; there it is split into
 * its entities (a joined row holds one per level), each entity is kept once per operation by
 * its table's key (a hash set of the key's canonical bytes), counted, handed to the
 * verification sink (checksummed as a row of its table's columns), and the value of the column
 * the next level references is kept, once per distinct non-NULL value, to be bound by that
 * level's statements. Nothing is allocated per row once the first operations have grown the
 * client's buffers: the set is emptied by a generation count, the operation's bytes live in
 * blocks that are reused. */
#include "assoc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { S_LAZY, S_SELECTIN, S_JOINED };
static const char *const STRATEGIES[] = {[S_LAZY] = "lazy", [S_SELECTIN] = "selectin", [S_JOINED] = "joined"};

const char AB_ASSOC_WORDS[] =
    "the statements the message carries, written by hand: lazy = the parents' statement, then levels[i].one once per "
    "distinct parent_column value of the rows read at the level above (one statement per parent and per child: N+1); "
    "selectin = the parents' statement, then per level one levels[i].in statement, in[0] + the distinct parent_column "
    "values of the level above as markers joined by ', ' + in[1] (none once a level read no rows); joined = the joined "
    "statement once, each row split by the levels' column counts. Every statement bound (markers converted as the "
    "driver's sql: see 'load statements'); each entity kept once per operation by its table's key (a hash set of the "
    "key's bytes; a joined row's level whose key is all NULL has no entity); rows = entities; statements counted by "
    "the worker as it sends them";

/* ---- the association, per step ------------------------------------------------------------- */

typedef struct {
    const char *table;
    int ncols;    /* the table's columns: a row of this level has these, in order */
    int *key;     /* the key's columns (indices into the row) */
    int nkey;
    int ref;      /* the column the next level references (its parent_column); -1: none */
    char *one;    /* levels[i].one, markers in the driver's style (level 0: NULL) */
    const char *in_head, *in_tail; /* levels[i].in, neutral ('?') */
} level;

struct ab_assoc_spec {
    int strategy;
    int nlevels;   /* the parents (level 0), then each of the message's levels */
    level *lv;
    char *parents; /* the step's sql, markers in the driver's style */
    char *joined;  /* load.joined, likewise */
    int joined_cols;
    int mark;
};

/* The k-th name of a JSON list ("" when it is not a string). */
static const char *name_at(json_t *list, size_t k)
{
    const char *s = json_string_value(json_array_get(list, k));
    return s ? s : "";
}

/* s with its markers as `mark` says, in the step's arena. */
static char *converted(const char *s, int mark, ab_arena *arena)
{
    char *c = ab_sql_convert(s, mark);
    char *out = ab_arena_strndup(arena, c, strlen(c));
    free(c);
    return out;
}

static int bad(const char *what)
{
    return ab_fail("protocol", NULL, "a load step's %s", what);
}

/* A level's table, columns (their count), key (as column indices) from names. */
static int parse_table(level *L, json_t *columns, json_t *key, ab_arena *arena)
{
    if (!json_is_array(columns) || !json_array_size(columns) || !json_is_array(key))
        return bad("levels need table_columns and key (lists of names)");
    L->ncols = (int)json_array_size(columns);
    L->nkey = (int)json_array_size(key);
    L->key = ab_arena_alloc(arena, (size_t)(L->nkey ? L->nkey : 1) * sizeof *L->key);
    for (int k = 0; k < L->nkey; k++) {
        const char *name = json_string_value(json_array_get(key, (size_t)k));
        L->key[k] = -1;
        for (int c = 0; name && c < L->ncols; c++)
            if (!strcmp(name, name_at(columns, (size_t)c)))
                L->key[k] = c;
        if (L->key[k] < 0)
            return ab_fail("protocol", NULL, "a load step's key column %s is not a column of %s", name ? name : "(none)",
                           L->table);
    }
    if (!L->nkey) { /* no key: the whole row is the entity's identity */
        L->key = ab_arena_alloc(arena, (size_t)L->ncols * sizeof *L->key);
        for (int c = 0; c < L->ncols; c++)
            L->key[c] = c;
        L->nkey = L->ncols;
    }
    L->ref = -1;
    return 0;
}

/* The index of name among columns; -1 when absent. */
static int column_index(json_t *columns, const char *name)
{
    for (size_t c = 0; name && c < json_array_size(columns); c++)
        if (!strcmp(name, name_at(columns, c)))
            return (int)c;
    return -1;
}

int ab_assoc_parse(json_t *msg, ab_step *st, int mark)
{
    json_t *load = json_object_get(msg, "load"), *shape = json_object_get(msg, "shape");
    json_t *levels = json_object_get(load, "levels");
    const char *strategy = json_string_value(json_object_get(load, "strategy"));
    const char *joined = json_string_value(json_object_get(load, "joined"));
    if (!json_is_object(load) || !json_is_array(levels) || !json_array_size(levels) || !strategy)
        return bad("message needs load: {strategy, levels, joined}");
    ab_assoc_spec *sp = ab_arena_alloc(st->arena, sizeof *sp);
    memset(sp, 0, sizeof *sp);
    sp->strategy = -1;
    for (int k = 0; k < 3; k++)
        if (!strcmp(strategy, STRATEGIES[k]))
            sp->strategy = k;
    if (sp->strategy < 0)
        return ab_fail("protocol", NULL, "unknown load strategy '%s' (lazy, selectin, joined)", strategy);
    if (sp->strategy == S_JOINED && !joined)
        return bad("joined strategy needs load.joined");
    sp->mark = mark;
    sp->nlevels = 1 + (int)json_array_size(levels);
    sp->lv = ab_arena_alloc(st->arena, (size_t)sp->nlevels * sizeof *sp->lv);
    memset(sp->lv, 0, (size_t)sp->nlevels * sizeof *sp->lv);
    json_t *above = json_object_get(shape, "table_columns");
    sp->lv[0].table = json_string_value(json_object_get(shape, "table"));
    if (!sp->lv[0].table || parse_table(&sp->lv[0], above, json_object_get(shape, "key"), st->arena))
        return ab_err.kind ? -1 : bad("shape needs the parent table, its table_columns and key");
    sp->joined_cols = sp->lv[0].ncols;
    for (int i = 1; i < sp->nlevels; i++) {
        json_t *m = json_array_get(levels, (size_t)i - 1), *in = json_object_get(m, "in");
        level *L = &sp->lv[i];
        const char *one = json_string_value(json_object_get(m, "one"));
        L->table = json_string_value(json_object_get(m, "table"));
        L->in_head = json_string_value(json_array_get(in, 0));
        L->in_tail = json_string_value(json_array_get(in, 1));
        if (!L->table || !one || !L->in_head || !L->in_tail)
            return bad("levels need table, one and in: [head, tail]");
        json_t *columns = json_object_get(m, "table_columns");
        if (parse_table(L, columns, json_object_get(m, "key"), st->arena))
            return -1;
        const char *parent_column = json_string_value(json_object_get(m, "parent_column"));
        if ((sp->lv[i - 1].ref = column_index(above, parent_column)) < 0)
            return ab_fail("protocol", NULL, "a load step's parent_column %s is not a column of %s",
                           parent_column ? parent_column : "(none)", sp->lv[i - 1].table);
        L->one = converted(one, mark, st->arena);
        sp->joined_cols += L->ncols;
        above = columns;
    }
    sp->parents = converted(st->sql, mark, st->arena);
    sp->joined = joined ? converted(joined, mark, st->arena) : NULL;
    st->assoc_spec = sp;
    return 0;
}

/* ---- a client's state ----------------------------------------------------------------------- */

/* The operation's bytes (entities' keys, values to bind): blocks reused from one operation to
 * the next, never moved while in use (a driver may read a bound value while it steps rows). */
typedef struct block {
    struct block *next;
    size_t cap, used;
    char data[];
} block;

/* A set entry: byte strings (a level and an entity's key, or a level and a value to bind). */
typedef struct {
    uint64_t hash;
    const char *bytes;
    uint32_t len, gen; /* gen: the operation it belongs to; any other is empty */
} slot;

/* The values of one level's referenced column to bind, distinct, in the order read. */
typedef struct {
    ab_param *v;
    int64_t n, cap;
} values;

struct ab_assoc_run {
    block *head, *cur;
    slot *slots;
    size_t cap, used; /* used: entries of this operation */
    uint32_t gen;
    ab_buf enc;       /* the bytes of the entry being looked up */
    values *vals;     /* per level */
    int cur_level;    /* the level the rows being read belong to; -1: joined rows */
    int mismatch;     /* a row of another width than its level's (reported after the statement) */
    int mismatch_cols;
    int64_t entities, statements;
    ab_buf text;      /* a selectin statement */
};

static void *oom(void)
{
    fprintf(stderr, "abworker-c: out of memory\n");
    abort();
}

static void *op_alloc(ab_assoc_run *r, size_t n)
{
    n = (n + 7) & ~(size_t)7;
    while (r->cur && r->cur->used + n > r->cur->cap && r->cur->next)
        r->cur = r->cur->next;
    if (!r->cur || r->cur->used + n > r->cur->cap) {
        size_t cap = n > 65536 ? n : 65536;
        block *b = malloc(sizeof *b + cap);
        if (!b)
            oom();
        b->cap = cap;
        b->used = 0;
        b->next = NULL;
        if (r->cur)
            r->cur->next = b;
        else
            r->head = b;
        r->cur = b;
    }
    void *p = r->cur->data + r->cur->used;
    r->cur->used += n;
    return p;
}

static void set_grow(ab_assoc_run *r)
{
    size_t cap = r->cap ? r->cap * 2 : 4096;
    slot *s = calloc(cap, sizeof *s);
    if (!s)
        oom();
    for (size_t k = 0; k < r->cap; k++) {
        slot *e = &r->slots[k];
        if (e->gen != r->gen)
            continue;
        size_t at = e->hash & (cap - 1);
        while (s[at].gen == r->gen)
            at = (at + 1) & (cap - 1);
        s[at] = *e;
    }
    free(r->slots);
    r->slots = s;
    r->cap = cap;
}

/* Adds r->enc's bytes to the operation's set: 1 when they were not in it, 0 when they were. */
static int set_add(ab_assoc_run *r)
{
    if (2 * (r->used + 1) > r->cap)
        set_grow(r);
    uint64_t h = ab_fnv1a64(r->enc.p, r->enc.len, AB_FNV_OFFSET);
    size_t at = h & (r->cap - 1);
    for (slot *e; (e = &r->slots[at])->gen == r->gen; at = (at + 1) & (r->cap - 1))
        if (e->hash == h && e->len == r->enc.len && !memcmp(e->bytes, r->enc.p, r->enc.len))
            return 0;
    char *bytes = op_alloc(r, r->enc.len);
    memcpy(bytes, r->enc.p, r->enc.len);
    r->slots[at] = (slot){h, bytes, (uint32_t)r->enc.len, r->gen};
    r->used++;
    return 1;
}

static void enc_put(ab_buf *b, const void *p, size_t n)
{
    ab_buf_reserve(b, b->len + n);
    memcpy(b->p + b->len, p, n);
    b->len += n;
}

/* A value's bytes as the checksum encodes it (a type letter, then the value): the same value
 * read twice gives the same bytes. */
static void enc_value(ab_buf *b, const ab_value *v)
{
    static const char LETTER[] = {[AB_NULL] = 'N', [AB_BOOL] = 'B', [AB_INT] = 'I', [AB_FLOAT] = 'F',
                                  [AB_DECIMAL] = 'D', [AB_TEXT] = 'S', [AB_BYTES] = 'X', [AB_TIMESTAMP] = 'T',
                                  [AB_DATE] = 'd', [AB_TIME] = 't'};
    enc_put(b, &LETTER[v->type], 1);
    switch (v->type) {
    case AB_NULL:
        break;
    case AB_FLOAT:
        enc_put(b, &v->u.f, 8);
        break;
    case AB_DECIMAL:
    case AB_TEXT:
    case AB_BYTES: {
        uint32_t n = (uint32_t)v->u.s.n;
        enc_put(b, &n, 4);
        enc_put(b, v->u.s.p, v->u.s.n);
        break;
    }
    default:
        enc_put(b, &v->u.i, 8);
    }
}

/* v as a parameter to bind (its text form as the generators make it), copied into the
 * operation's bytes: the row it was read from is gone by the time it is bound. */
static void to_param(ab_assoc_run *r, const ab_value *v, ab_param *p)
{
    char buf[64];
    size_t n = 0;
    const char *src = buf;
    memset(p, 0, sizeof *p);
    p->type = v->type;
    switch (v->type) {
    case AB_NULL:
        return;
    case AB_BOOL:
        p->i = v->u.i;
        n = (size_t)sprintf(buf, "%s", v->u.i ? "true" : "false");
        break;
    case AB_INT:
        p->i = v->u.i;
        n = (size_t)sprintf(buf, "%lld", (long long)v->u.i);
        break;
    case AB_FLOAT:
        p->f = v->u.f;
        n = ab_float_repr(v->u.f, buf);
        break;
    case AB_TIMESTAMP:
        p->i = v->u.i;
        n = ab_format_timestamp(v->u.i, buf, 0);
        break;
    case AB_DATE:
        p->i = v->u.i;
        n = ab_format_date(v->u.i, buf);
        break;
    case AB_TIME: { /* a time of day: bound as its text */
        int64_t us = v->u.i < 0 ? -v->u.i : v->u.i, s = us / 1000000;
        p->type = AB_TEXT;
        n = (size_t)sprintf(buf, "%s%02lld:%02lld:%02lld.%06lld", v->u.i < 0 ? "-" : "", (long long)(s / 3600),
                            (long long)(s / 60 % 60), (long long)(s % 60), (long long)(us % 1000000));
        break;
    }
    default: /* decimal, text, bytes: their bytes */
        src = v->u.s.p;
        n = v->u.s.n;
    }
    char *t = op_alloc(r, n + 1);
    memcpy(t, src, n);
    t[n] = '\0';
    p->text = t;
    p->len = n;
}

/* The level tag that begins an entry's bytes (entities and values of a level apart). */
static void enc_tag(ab_buf *b, uint32_t tag)
{
    b->len = 0;
    enc_put(b, &tag, 4);
}

/* One row of level L (its table's columns): a new entity is counted, checksummed and its
 * referenced value kept for the next level; one seen before in this operation is dropped. */
static void entity(ab_step *st, ab_assoc_run *r, int L, const ab_value *row)
{
    const ab_assoc_spec *sp = st->assoc_spec;
    const level *lv = &sp->lv[L];
    int nulls = 0;
    enc_tag(&r->enc, (uint32_t)L);
    for (int k = 0; k < lv->nkey; k++) {
        nulls += row[lv->key[k]].type == AB_NULL;
        enc_value(&r->enc, &row[lv->key[k]]);
    }
    if (nulls == lv->nkey || !set_add(r)) /* a joined row's missing child, or an entity seen */
        return;
    r->entities++;
    ab_sink_row(st, row, lv->ncols);
    if (sp->strategy == S_JOINED || lv->ref < 0 || row[lv->ref].type == AB_NULL)
        return;
    enc_tag(&r->enc, 0x80000000u | (uint32_t)L);
    enc_value(&r->enc, &row[lv->ref]);
    if (!set_add(r)) /* a value the next level is already asked for */
        return;
    values *vs = &r->vals[L];
    if (vs->n == vs->cap) {
        vs->cap = vs->cap ? 2 * vs->cap : 256;
        if (!(vs->v = realloc(vs->v, (size_t)vs->cap * sizeof *vs->v)))
            oom();
    }
    to_param(r, &row[lv->ref], &vs->v[vs->n++]);
}

void ab_assoc_row(ab_step *st, const ab_value *row, int ncols)
{
    ab_assoc_run *r = st->assoc;
    const ab_assoc_spec *sp = st->assoc_spec;
    int L = r->cur_level;
    if (ncols != (L < 0 ? sp->joined_cols : sp->lv[L].ncols)) {
        r->mismatch = 1;
        r->mismatch_cols = ncols;
        return;
    }
    if (L >= 0) {
        entity(st, r, L, row);
        return;
    }
    for (int k = 0, off = 0; k < sp->nlevels; off += sp->lv[k++].ncols)
        entity(st, r, k, row + off);
}

void ab_assoc_free(ab_step *st)
{
    ab_assoc_run *r = st->assoc;
    if (!r)
        return;
    for (block *b = r->head, *next; b; b = next) {
        next = b->next;
        free(b);
    }
    for (int k = 0; st->assoc_spec && k < st->assoc_spec->nlevels; k++)
        free(r->vals[k].v);
    free(r->vals);
    free(r->slots);
    free(r->enc.p);
    free(r->text.p);
    free(r);
    st->assoc = NULL;
}

int64_t ab_assoc_statements(const ab_step *st)
{
    return st->assoc ? st->assoc->statements : 0;
}

/* ---- an operation ----------------------------------------------------------------------------- */

/* Runs one statement whose rows are level L's (-1: joined rows). */
static int run(const ab_driver *d, ab_conn *c, ab_step *st, int L, const char *sql, const ab_param *params, int n)
{
    ab_assoc_run *r = st->assoc;
    int64_t rows;
    r->cur_level = L;
    r->statements++;
    if (d->query(c, st, sql, params, n, &rows))
        return -1;
    if (r->mismatch)
        return ab_fail("internal", NULL, "a load statement read rows of %d columns, but %s has %d", r->mismatch_cols,
                       L < 0 ? "the joined row" : st->assoc_spec->lv[L].table,
                       L < 0 ? st->assoc_spec->joined_cols : st->assoc_spec->lv[L].ncols);
    return 0;
}

/* selectin: level L's rows for every value kept at the level above, one IN statement (its
 * markers joined by ", ", then converted as the driver converts sql). */
static int select_in(const ab_driver *d, ab_conn *c, ab_step *st, int L)
{
    ab_assoc_run *r = st->assoc;
    const level *lv = &st->assoc_spec->lv[L];
    const values *vs = &r->vals[L - 1];
    size_t head = strlen(lv->in_head), tail = strlen(lv->in_tail);
    ab_buf *t = &r->text;
    ab_buf_reserve(t, head + tail + 3 * (size_t)vs->n + 1);
    memcpy(t->p, lv->in_head, head);
    t->len = head;
    for (int64_t k = 0; k < vs->n; k++) {
        memcpy(t->p + t->len, k ? ", ?" : "?", k ? 3 : 1);
        t->len += k ? 3 : 1;
    }
    memcpy(t->p + t->len, lv->in_tail, tail + 1);
    if (st->assoc_spec->mark == AB_MARK_QMARK)
        return run(d, c, st, L, t->p, vs->v, (int)vs->n);
    char *sql = ab_sql_convert(t->p, st->assoc_spec->mark);
    int rc = run(d, c, st, L, sql, vs->v, (int)vs->n);
    free(sql);
    return rc;
}

int ab_assoc_op(const ab_driver *d, ab_conn *c, ab_step *st, int64_t i, int64_t *count)
{
    const ab_assoc_spec *sp = st->assoc_spec;
    ab_assoc_run *r = st->assoc;
    if (!r) { /* the client's first operation */
        if (!(r = st->assoc = calloc(1, sizeof *r)) || !(r->vals = calloc((size_t)sp->nlevels, sizeof *r->vals)))
            oom();
    }
    /* a new operation: every entity and value forgotten, the bytes' blocks reused */
    if (!++r->gen)
        r->gen = 1, memset(r->slots, 0, r->cap * sizeof *r->slots);
    r->used = 0;
    for (block *b = r->head; b; b = b->next)
        b->used = 0;
    r->cur = r->head;
    for (int k = 0; k < sp->nlevels; k++)
        r->vals[k].n = 0;
    r->entities = 0;
    r->mismatch = 0;
    const ab_param *params = st->nparams ? &st->params[i * st->nparams] : NULL;
    if (sp->strategy == S_JOINED) {
        if (run(d, c, st, -1, sp->joined, params, st->nparams))
            return -1;
    } else {
        if (run(d, c, st, 0, sp->parents, params, st->nparams))
            return -1;
        for (int L = 1; L < sp->nlevels; L++) {
            const values *vs = &r->vals[L - 1];
            if (sp->strategy == S_SELECTIN) {
                if (!vs->n)
                    break; /* the level above read no rows: nothing below to ask for */
                if (select_in(d, c, st, L))
                    return -1;
                continue;
            }
            for (int64_t k = 0; k < vs->n; k++) /* lazy: one statement per row above (N+1) */
                if (run(d, c, st, L, sp->lv[L].one, &vs->v[k], 1))
                    return -1;
        }
    }
    *count = r->entities;
    return 0;
}
