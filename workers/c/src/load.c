/* The loops of a loaded step (reference: src/accessbench/pyworker/load.py).
 *
 * Each client is a POSIX thread with its own connection and its own copy of the step (its own
 * row buffer); what step_begin made (statement texts, parameters) is shared and only read.
 * Every client connects and prepares before the barrier, untimed; then all wait until the
 * wall clock reaches start_at_unix_ns and start their own monotonic clocks.
 *
 * Closed loop: operation i's latency runs from the end of operation i−1 to its own end, as in
 * the plain loop. Open loop: from operation i's *intended* start to its end, so a stall that
 * delays later operations shows in their latency (no coordinated omission); an operation that
 * starts more than late_ns after its intended time counts as late, and one that would start
 * more than skip_ns late is skipped (pgbench -R --latency-limit). Every latency goes into the
 * client's histogram (a fixed array: no allocation per operation); the answers merge here. */
#include "load.h"

#include "assoc.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

/* Sleep until this close to an intended start, then spin: a sleep overshoots by the timer
 * slack (~50–60 µs), which would otherwise count as the client's own lateness. */
#define SPIN_NS 100000

static inline int64_t clock_ns(clockid_t clk)
{
    struct timespec ts;
    clock_gettime(clk, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void sleep_until(clockid_t clk, int64_t ns)
{
    struct timespec ts = {.tv_sec = ns / 1000000000LL, .tv_nsec = ns % 1000000000LL};
    while (clock_nanosleep(clk, TIMER_ABSTIME, &ts, NULL) == EINTR)
        ;
}

/* Sleep, then spin the last SPIN_NS, until clk reads `deadline`. */
static void pause_until(clockid_t clk, int64_t deadline)
{
    if (deadline - clock_ns(clk) > SPIN_NS)
        sleep_until(clk, deadline - SPIN_NS);
    while (clock_ns(clk) < deadline)
        ;
}

/* ---- a gate: the clients arrive, the main thread opens it ---------------------------------- */

typedef struct {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int arrived, open;
} gate;

static void gate_init(gate *g)
{
    pthread_mutex_init(&g->mu, NULL);
    pthread_cond_init(&g->cv, NULL);
    g->arrived = g->open = 0;
}

static void gate_destroy(gate *g)
{
    pthread_mutex_destroy(&g->mu);
    pthread_cond_destroy(&g->cv);
}

/* A client: arrive, then wait until the gate opens. */
static void gate_pass(gate *g)
{
    pthread_mutex_lock(&g->mu);
    g->arrived++;
    pthread_cond_broadcast(&g->cv);
    while (!g->open)
        pthread_cond_wait(&g->cv, &g->mu);
    pthread_mutex_unlock(&g->mu);
}

/* The main thread: wait until n clients have arrived. */
static void gate_await(gate *g, int n)
{
    pthread_mutex_lock(&g->mu);
    while (g->arrived < n)
        pthread_cond_wait(&g->cv, &g->mu);
    pthread_mutex_unlock(&g->mu);
}

static void gate_open(gate *g)
{
    pthread_mutex_lock(&g->mu);
    g->open = 1;
    pthread_cond_broadcast(&g->cv);
    pthread_mutex_unlock(&g->mu);
}

/* ---- the clients ------------------------------------------------------------------------------ */

typedef struct trial trial;

typedef struct {
    trial *t;
    int k;
    ab_step st;    /* the client's copy of the step: its own row buffer and column count */
    ab_conn *conn; /* the worker's own connection (client 0, persistent), or the client's */
    int own;       /* conn is the client's: freed after the trial */
    int opened;    /* persistent: conn is open and conn_begin was called on it */
    int failed;
    ab_error err;
    int64_t n, rows, late, skipped, start, end, first_op_ns, server_pid;
    ab_histogram hist;
} client;

struct trial {
    const ab_driver *d;
    const ab_load *load;
    gate ready, done;
    atomic_int stop;         /* a client failed: the others stop before their next operation */
    atomic_int first_failed; /* the client whose error is answered, or -1 */
};

static void client_fail(client *cl)
{
    int none = -1;
    cl->failed = 1;
    cl->err = ab_err;
    atomic_compare_exchange_strong(&cl->t->first_failed, &none, cl->k);
    atomic_store(&cl->t->stop, 1);
}

/* The timed loop of one client. */
static void client_loop(client *cl)
{
    trial *t = cl->t;
    const ab_driver *d = t->d;
    const ab_load *L = t->load;
    ab_step *st = &cl->st;
    ab_conn *c = cl->conn;
    int64_t nops = st->nops, i = 0, seq = 0, count, now, latency;
    int open_loop = L->rate > 0;
    ab_schedule sched;
    int64_t phase = 0;
    if (open_loop) {
        ab_schedule_init(&sched, L->rate / L->clients, L->poisson, L->seed + (uint64_t)cl->k);
        /* uniform: the worker's arrivals are evenly spaced at `rate` from its phase_ns and
         * dealt to its clients in turn (client k's own uniform stream at rate / C, k / rate
         * later), not C at once */
        if (!L->poisson)
            phase = (int64_t)((double)L->phase_ns + (double)cl->k * 1e9 / L->rate);
    }
    if (L->start_at_unix_ns)
        pause_until(CLOCK_REALTIME, L->start_at_unix_ns);
    int64_t start = clock_ns(CLOCK_MONOTONIC), prev = start, stop = L->duration_ns ? start + L->duration_ns : 0;
    cl->start = start;
    while (stop ? prev < stop : i < nops) {
        if (atomic_load_explicit(&t->stop, memory_order_relaxed))
            break;
        int64_t arg = i % nops;
        count = 0;
        if (open_loop) {
            int64_t intended = start + phase + ab_schedule_next(&sched);
            if (stop && intended >= stop) /* the next arrival falls after the trial */
                break;
            now = clock_ns(CLOCK_MONOTONIC);
            if (now < intended) {
                pause_until(CLOCK_MONOTONIC, intended);
            } else if (L->skip_ns >= 0 && now - intended > L->skip_ns) {
                cl->skipped++;
                i++;
                continue;
            } else if (now - intended > L->late_ns) {
                cl->late++;
            }
            if (ab_client_op(d, c, L->per_request, st, arg, seq, &count)) {
                client_fail(cl);
                break;
            }
            now = clock_ns(CLOCK_MONOTONIC);
            latency = now - intended;
        } else {
            if (ab_client_op(d, c, L->per_request, st, arg, seq, &count)) {
                client_fail(cl);
                break;
            }
            now = clock_ns(CLOCK_MONOTONIC);
            latency = now - prev;
        }
        cl->rows += count;
        ab_hist_record(&cl->hist, (uint64_t)latency);
        if (!seq)
            cl->first_op_ns = latency;
        prev = now;
        i++;
        seq++;
    }
    if (open_loop && stop && !cl->failed && !atomic_load(&t->stop)) {
        if (prev < stop) { /* an open loop lasts its duration: the arrivals are over, the trial is not */
            sleep_until(CLOCK_MONOTONIC, stop);
            prev = stop;
        } else { /* behind schedule when the duration passed: the arrivals due before the stop
                  * that never started are skipped (n + skipped = the intended starts inside it) */
            while (start + phase + ab_schedule_next(&sched) < stop)
                cl->skipped++;
        }
    }
    cl->n = seq;
    cl->end = prev;
    /* commit_every by duration: the last group's transaction is still open (untimed) */
    int64_t k = st->commit_every;
    if (k && !L->per_request && !atomic_load(&t->stop) && seq && seq % k && seq != nops && d->txn_commit(c, st))
        client_fail(cl);
}

static void *client_main(void *arg)
{
    client *cl = arg;
    trial *t = cl->t;
    const ab_driver *d = t->d;
    const ab_load *L = t->load;
    if (d->thread_begin)
        d->thread_begin();
    if (!L->per_request) { /* its connection, ready for the step, before the barrier (untimed) */
        int rc = 0;
        if (cl->own) {
            json_t *info = json_object(); /* what open learns: its backend pid */
            rc = d->open(cl->conn, cl->st.endpoint, info);
            json_decref(info);
        }
        if (!rc) {
            cl->opened = 1;
            rc = d->conn_begin(cl->conn, &cl->st);
            cl->server_pid = d->server_pid(cl->conn);
        }
        if (rc)
            client_fail(cl);
    }
    gate_pass(&t->ready);
    if (!atomic_load(&t->stop))
        client_loop(cl);
    gate_pass(&t->done);
    if (cl->opened) { /* after the trial, untimed; a failed trial leaves no transaction open */
        if (atomic_load(&t->stop))
            d->recover(cl->conn, &cl->st);
        d->conn_end(cl->conn, &cl->st);
        if (cl->own)
            d->close(cl->conn);
    }
    if (d->thread_end)
        d->thread_end();
    return NULL;
}

/* ---- the trial -------------------------------------------------------------------------------- */

static int64_t tv_ns(struct timeval tv)
{
    return (int64_t)tv.tv_sec * 1000000000LL + (int64_t)tv.tv_usec * 1000LL;
}

void ab_timed_fields(json_t *a, const ab_step *st, int64_t n, int64_t elapsed_ns, int64_t rows, int ncols,
                     const struct rusage *before, const struct rusage *after)
{
    json_object_set_new(a, "n", json_integer(n));
    json_object_set_new(a, "elapsed_ns", json_integer(elapsed_ns));
    json_object_set_new(a, "rows", json_integer(rows));
    if (ab_step_reads(st) && ncols)
        json_object_set_new(a, "values", json_integer(rows * ncols));
    json_object_set_new(a, "user_ns", json_integer(tv_ns(after->ru_utime) - tv_ns(before->ru_utime)));
    json_object_set_new(a, "sys_ns", json_integer(tv_ns(after->ru_stime) - tv_ns(before->ru_stime)));
}

/* Client k: its own copy of the step (its own row buffer, no sink: a loaded step is timed) and
 * its connection, the worker's own for client 0 of a persistent step. */
static void client_init(client *cl, trial *t, int k, ab_conn *session, const ab_step *st)
{
    cl->t = t;
    cl->k = k;
    cl->st = *st;
    cl->st.row = NULL;
    cl->st.rowcap = 0;
    cl->st.sink = NULL;
    cl->st.ncols = 0;
    cl->st.assoc = NULL; /* a load step's state: the client's own, made at its first operation */
    ab_row_grow(&cl->st, 64);
    cl->own = t->load->per_request || k > 0;
    cl->conn = cl->own ? t->d->conn_new() : session;
}

/* Starts a thread per client; returns how many started. If one cannot start, *err says why and
 * the started ones are told to stop. */
static int start_clients(trial *t, client *cls, pthread_t *tids, ab_conn *session, const ab_step *st, ab_error *err)
{
    int nc = t->load->clients;
    for (int k = 0; k < nc; k++) {
        client *cl = &cls[k];
        client_init(cl, t, k, session, st);
        int rc = cl->conn ? pthread_create(&tids[k], NULL, client_main, cl) : ENOMEM;
        if (rc) {
            err->kind = "internal";
            snprintf(err->message, sizeof err->message, "client %d of %d: %s", k, nc, strerror(rc));
            atomic_store(&t->stop, 1);
            if (cl->own)
                t->d->conn_free(cl->conn);
            free(cl->st.row);
            ab_assoc_free(&cl->st);
            return k;
        }
    }
    return nc;
}

/* The answer of a trial every client finished: counts added, elapsed_ns from the earliest start
 * to the last end, one histogram, per_client, the persistent connections' server_pids. */
static json_t *merged_answer(const client *cls, int nc, const ab_step *st, ab_histogram *merged,
                             const struct rusage *before, const struct rusage *after)
{
    int64_t n = 0, rows = 0, late = 0, skipped = 0, start = 0, end = 0;
    int ncols = 0;
    json_t *per_client = json_array(), *pids = json_array();
    for (int k = 0; k < nc; k++) {
        const client *cl = &cls[k];
        n += cl->n;
        rows += cl->rows;
        late += cl->late;
        skipped += cl->skipped;
        if (!k || cl->start < start)
            start = cl->start;
        if (!k || cl->end > end)
            end = cl->end;
        if (cl->st.ncols)
            ncols = cl->st.ncols;
        ab_hist_merge(merged, &cl->hist);
        json_t *pc = json_object();
        json_object_set_new(pc, "n", json_integer(cl->n));
        json_object_set_new(pc, "elapsed_ns", json_integer(cl->end - cl->start));
        json_array_append_new(per_client, pc);
        if (cl->server_pid) /* persistent connections only: per-request backends are gone */
            json_array_append_new(pids, json_integer(cl->server_pid));
    }
    json_t *a = json_object();
    ab_timed_fields(a, st, n, end - start, rows, ncols, before, after);
    json_object_set_new(a, "first_op_ns", json_integer(cls[0].first_op_ns));
    json_object_set_new(a, "histogram", ab_hist_json(merged));
    json_object_set_new(a, "late", json_integer(late));
    json_object_set_new(a, "skipped", json_integer(skipped));
    json_object_set_new(a, "clients", json_integer(nc));
    json_object_set_new(a, "per_client", per_client);
    if (json_array_size(pids))
        json_object_set_new(a, "server_pids", pids);
    else
        json_decref(pids);
    return a;
}

json_t *ab_run_loaded(const ab_driver *d, ab_conn *session, ab_step *st, const ab_load *load)
{
    int nc = load->clients;
    client *cls = calloc((size_t)nc, sizeof *cls);
    pthread_t *tids = calloc((size_t)nc, sizeof *tids);
    ab_histogram *merged = calloc(1, sizeof *merged);
    if (!cls || !tids || !merged) {
        free(cls);
        free(tids);
        free(merged);
        ab_fail("internal", NULL, "cannot allocate %d clients", nc);
        return NULL;
    }
    trial t = {.d = d, .load = load};
    gate_init(&t.ready);
    gate_init(&t.done);
    atomic_init(&t.stop, 0);
    atomic_init(&t.first_failed, -1);
    ab_error made_err = {0};
    int made = start_clients(&t, cls, tids, session, st, &made_err);
    struct rusage before, after;
    gate_await(&t.ready, made); /* every client connected and prepared */
    getrusage(RUSAGE_SELF, &before);
    gate_open(&t.ready);
    gate_await(&t.done, made);
    getrusage(RUSAGE_SELF, &after);
    gate_open(&t.done);
    for (int k = 0; k < made; k++)
        pthread_join(tids[k], NULL);

    json_t *a = NULL;
    int failed = atomic_load(&t.first_failed);
    if (made < nc)
        ab_err = made_err;
    else if (failed >= 0)
        ab_err = cls[failed].err;
    else
        a = merged_answer(cls, nc, st, merged, &before, &after);
    for (int k = 0; k < made; k++) {
        if (cls[k].own)
            d->conn_free(cls[k].conn);
        free(cls[k].st.row);
        ab_assoc_free(&cls[k].st);
    }
    gate_destroy(&t.ready);
    gate_destroy(&t.done);
    free(merged);
    free(tids);
    free(cls);
    return a;
}
