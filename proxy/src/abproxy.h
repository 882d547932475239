/* abproxy: a TCP proxy that delays every chunk of data by a configurable amount in each
 * direction and counts chunks, bytes and round trips per connection. See ../README.md. */
#ifndef ABPROXY_H
#define ABPROXY_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#define DIR_C2S 0 /* client → server (target) */
#define DIR_S2C 1 /* server (target) → client */

/* ---- configuration and shared state (main.c) ---- */
struct config {
    struct sockaddr_storage target;
    socklen_t target_len;
    int64_t jitter_ns;    /* σ of the normal jitter, 0 = none */
    int64_t bandwidth;    /* bytes per second per direction, 0 = unlimited */
    int64_t spin_min_ns;  /* the sleeper starts spinning at least this long before a deadline */
    int64_t spin_max_ns;  /* … and at most this long (the adaptive margin's cap) */
    int realtime;         /* SCHED_FIFO priority of the direction threads, 0 = normal */
    bool user_timestamps; /* read_time = when recv() returned, not the kernel's arrival time */
    int64_t hop_ns;       /* the proxy's own loopback hop, taken out of each delay (hop.c); -1 = measure */
};
extern struct config g_cfg;
extern _Atomic int64_t g_delay_ns;    /* delay applied to chunks read from now on */
extern _Atomic int64_t g_stall_until; /* CLOCK_MONOTONIC ns; nothing is sent before it */
extern _Atomic int64_t g_spin_ns;     /* the current spin margin (adaptive, see conn.c) */

/* ---- counters (conn.c); all of them are guarded by g_stats_lock ---- */
struct counters {
    uint64_t c2s_chunks, c2s_bytes, s2c_chunks, s2c_bytes, round_trips;
};

struct chunk {
    struct chunk *next;
    int64_t due_ns; /* CLOCK_MONOTONIC time before which it is not sent */
    size_t len, off;
    unsigned char data[];
};

struct conn;

struct direction {
    struct conn *conn;
    int which; /* DIR_C2S or DIR_S2C */
    int src, dst;
    struct chunk *head, *tail;
    size_t queued;    /* bytes in the queue */
    int64_t last_due; /* due time of the latest chunk queued: no chunk overtakes another */
    int64_t link_free; /* --bandwidth: when the emulated link finishes the previous chunk */
    uint64_t rng[4];  /* xoshiro256** state for the jitter */
    bool have_spare;  /* Box–Muller gives two normals at a time */
    double spare;
    unsigned char *buf; /* recv buffer */
};

struct conn {
    uint64_t id;
    char client[64]; /* the client's address "ip:port" */
    int client_fd, upstream_fd;
    int abort_fd; /* eventfd: readable once the connection is being torn down abruptly */
    atomic_bool aborted;
    atomic_int threads; /* live direction threads; the last one out closes the sockets */
    struct direction dir[2];
    /* under g_stats_lock: */
    bool open;
    int last_dir; /* direction of the previous chunk read on this connection, -1 = none */
    struct counters c;
    struct conn *next; /* list of every connection since start, newest first */
};

/* How well the proxy keeps its own schedule (totals since start, also under g_stats_lock):
 * lateness = when send() began − the chunk's due time (after any stall), for chunks that
 * waited in the queue; wake overshoot = how late the sleep before the spin ended; read lag =
 * when recv() returned − the kernel's arrival timestamp. */
struct timing {
    uint64_t sent;          /* chunks sent from the queue (not the delay-0 fast path) */
    int64_t late_sum, late_max;
    uint64_t late_over_10us;
    uint64_t wakes;         /* sleeps that ended in the spin phase or after the deadline */
    int64_t wake_over_sum, wake_over_max;
    uint64_t missed_spin;   /* sleeps that overshot the deadline itself (no spin left) */
    uint64_t reads;
    int64_t read_lag_sum, read_lag_max;
    int64_t send_sum;       /* time spent in send() for the chunks counted in `sent` */
    double wake_mean, wake_dev; /* running estimates behind g_spin_ns */
};

extern pthread_mutex_t g_stats_lock;
extern struct timing g_timing;
extern struct conn *g_conns; /* newest first */
extern uint64_t g_accepted, g_open;
extern struct counters g_totals;

/* Start serving a freshly accepted client socket (takes ownership of fd). */
void conn_start(int client_fd);
/* Abort every open connection (control command `reset`); returns how many. */
int conn_reset_all(void);

/* ---- control channel (control.c) ---- */
void control_start(int client_fd);
void request_quit(void); /* main.c: make the main loop exit */

/* ---- time (conn.c) ---- */
int64_t mono_ns(void);
/* The arrival time of the data just read with recvmsg() (its kernel receive timestamp). */
int64_t arrival_ns(struct msghdr *msg, int64_t now);

/* ---- the proxy's own hop (hop.c) ---- */
/* The median time from send() to the kernel's receive timestamp on a loopback TCP pair, or -1
 * when it cannot be measured. */
int64_t measure_hop_ns(void);

#endif
