/* Steps under load (PROTOCOL.md "Steps under load"): several clients in this one process, one
 * POSIX thread each, by duration as well as by count, closed loop or open loop at a rate,
 * latencies into a histogram, every client starting at a wall-clock barrier. */
#ifndef AB_LOAD_H
#define AB_LOAD_H

#include <stdint.h>
#include <sys/resource.h>

#include <jansson.h>

#include "driver.h"

/* What the step message asks for beyond the plain loop. */
typedef struct {
    int clients;
    int per_request;          /* a connection per operation, inside its time */
    int64_t duration_ns;      /* 0: each client runs the step's operations once */
    double rate;              /* open loop: operations per second of all clients together; 0: closed loop */
    int poisson;              /* arrivals: poisson, or uniform */
    uint64_t seed;            /* schedule_seed: client k's arrivals are seeded seed + k */
    int64_t phase_ns;         /* uniform: this worker's first intended start (phase_ns) */
    int64_t late_ns;          /* an operation starting more than this after its intended start is late */
    int64_t skip_ns;          /* one that would start more than this late is skipped; < 0: none is */
    int64_t start_at_unix_ns; /* the barrier, on the wall clock; 0: as soon as every client is ready */
} ab_load;

/* The fields every timed answer has, plain or loaded: n, elapsed_ns, rows, values (a step that
 * reads, when its rows had columns), user_ns and sys_ns (getrusage before and after). */
void ab_timed_fields(json_t *a, const ab_step *st, int64_t n, int64_t elapsed_ns, int64_t rows, int ncols,
                     const struct rusage *before, const struct rusage *after);

/* Runs a loaded step on `clients` threads. step_begin is done and step_end is left to the
 * caller; client 0 of a persistent step runs on the worker's own connection (session), every
 * other client opens its own before the barrier and closes it after the trial. Returns the
 * merged answer, or NULL with ab_err set (the first error a client met). */
json_t *ab_run_loaded(const ab_driver *d, ab_conn *session, ab_step *st, const ab_load *load);

#endif
