/* One proxied connection: a client socket, its own upstream socket, and one thread per
 * direction. Each direction thread is a small event loop over (source readable, destination
 * writable, abort): it reads chunks as they arrive, timestamps them, queues them with a due
 * time, and sends the queue head at its due time — sleeping until SPIN before it, then
 * spinning on the clock. */
#include "abproxy.h"

#include <errno.h>
#include <math.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#define BUF_SIZE (64 * 1024)
#define MAX_QUEUED (16u * 1024 * 1024) /* per direction: stop reading the source beyond this */
#define MAX_POLL_NS (10 * 1000000LL)   /* cap on one poll sleep: poll's slack is 0.1% of it */

pthread_mutex_t g_stats_lock = PTHREAD_MUTEX_INITIALIZER;
struct conn *g_conns;
uint64_t g_accepted, g_open;
struct counters g_totals;
struct timing g_timing;
_Atomic int64_t g_spin_ns;

int64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int64_t real_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

/* ---- jitter: xoshiro256** and Box–Muller ---- */

static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

static uint64_t rng_next(uint64_t s[4])
{
    uint64_t result = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

static void rng_seed(uint64_t s[4], uint64_t seed)
{
    for (int i = 0; i < 4; i++) { /* splitmix64 */
        uint64_t z = (seed += 0x9e3779b97f4a7c15ULL);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
        s[i] = z ^ (z >> 31);
    }
}

static double uniform01(uint64_t s[4]) /* in (0, 1] */
{
    return ((rng_next(s) >> 11) + 1) * 0x1.0p-53;
}

static double normal(struct direction *d)
{
    if (d->have_spare) {
        d->have_spare = false;
        return d->spare;
    }
    double u1 = uniform01(d->rng), u2 = uniform01(d->rng);
    double r = sqrt(-2.0 * log(u1)), a = 2.0 * M_PI * u2;
    d->spare = r * sin(a);
    d->have_spare = true;
    return r * cos(a);
}

/* ---- counters ---- */

static void count_chunk(struct conn *c, int which, size_t n, int64_t read_lag)
{
    pthread_mutex_lock(&g_stats_lock);
    g_timing.reads++;
    g_timing.read_lag_sum += read_lag;
    if (read_lag > g_timing.read_lag_max)
        g_timing.read_lag_max = read_lag;
    if (which == DIR_C2S) {
        /* A round trip starts with the first client chunk of the connection and with every
         * client chunk that follows a server chunk. */
        if (c->last_dir != DIR_C2S) {
            c->c.round_trips++;
            g_totals.round_trips++;
        }
        c->c.c2s_chunks++;
        c->c.c2s_bytes += n;
        g_totals.c2s_chunks++;
        g_totals.c2s_bytes += n;
    } else {
        c->c.s2c_chunks++;
        c->c.s2c_bytes += n;
        g_totals.s2c_chunks++;
        g_totals.s2c_bytes += n;
    }
    c->last_dir = which;
    pthread_mutex_unlock(&g_stats_lock);
}

static void note_sent(int64_t late, int64_t send_time)
{
    pthread_mutex_lock(&g_stats_lock);
    g_timing.sent++;
    g_timing.send_sum += send_time;
    g_timing.late_sum += late;
    if (late > g_timing.late_max)
        g_timing.late_max = late;
    if (late > 10000)
        g_timing.late_over_10us++;
    pthread_mutex_unlock(&g_stats_lock);
}

/* Every sleep before a deadline ends SPIN before it, and wakes up late by some overshoot (on a
 * virtual machine whose idle CPU halts, tens of µs). The margin adapts to what is observed:
 * an exponentially weighted mean and mean deviation of the overshoot, margin = mean + 4 ×
 * deviation + 10 µs, kept within [--spin-us, --spin-max-us]. */
static void note_wake(int64_t overshoot, bool missed)
{
    pthread_mutex_lock(&g_stats_lock);
    struct timing *t = &g_timing;
    double o = (double)(overshoot < g_cfg.spin_max_ns ? overshoot : g_cfg.spin_max_ns);
    t->wake_mean += (o - t->wake_mean) / 32.0;
    t->wake_dev += (fabs(o - t->wake_mean) - t->wake_dev) / 32.0;
    int64_t spin = (int64_t)(t->wake_mean + 4.0 * t->wake_dev) + 10000;
    if (spin < g_cfg.spin_min_ns)
        spin = g_cfg.spin_min_ns;
    if (spin > g_cfg.spin_max_ns)
        spin = g_cfg.spin_max_ns;
    atomic_store_explicit(&g_spin_ns, spin, memory_order_relaxed);
    g_timing.wakes++;
    g_timing.wake_over_sum += overshoot;
    if (overshoot > g_timing.wake_over_max)
        g_timing.wake_over_max = overshoot;
    if (missed)
        g_timing.missed_spin++;
    pthread_mutex_unlock(&g_stats_lock);
}

/* ---- the direction loop ---- */

static void conn_abort(struct conn *c)
{
    if (!atomic_exchange(&c->aborted, true)) {
        uint64_t one = 1;
        if (write(c->abort_fd, &one, sizeof one) < 0) { /* cannot fail on a fresh eventfd */
        }
        /* A direction thread waiting for data may be blocked in recvmsg() rather than in
         * ppoll(): shutting the read side wakes it (it then sees `aborted`). */
        if (c->client_fd >= 0)
            shutdown(c->client_fd, SHUT_RD);
        if (c->upstream_fd >= 0)
            shutdown(c->upstream_fd, SHUT_RD);
    }
}

/* The time the chunk just read arrived: the kernel's receive timestamp (CLOCK_REALTIME,
 * carried over to CLOCK_MONOTONIC), or now when there is none. */
int64_t arrival_ns(struct msghdr *msg, int64_t now)
{
    if (g_cfg.user_timestamps)
        return now;
    for (struct cmsghdr *cm = CMSG_FIRSTHDR(msg); cm; cm = CMSG_NXTHDR(msg, cm)) {
        if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_TIMESTAMPNS) {
            struct timespec ts;
            memcpy(&ts, CMSG_DATA(cm), sizeof ts);
            int64_t rt = (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
            int64_t t = rt - (real_ns() - mono_ns());
            /* A wall-clock step between arrival and now would make this absurd: never later
             * than now, never more than a second earlier. */
            if (t > now || t < now - 1000000000LL)
                return now;
            return t;
        }
    }
    return now;
}

static int64_t due_time(struct direction *d, int64_t arrival, size_t n)
{
    int64_t t = arrival;
    if (g_cfg.bandwidth > 0) { /* serialisation: the link carries one chunk after another */
        int64_t start = arrival > d->link_free ? arrival : d->link_free;
        d->link_free = start + (int64_t)((double)n * 1e9 / (double)g_cfg.bandwidth + 0.5);
        t = d->link_free;
    }
    int64_t delay = atomic_load_explicit(&g_delay_ns, memory_order_relaxed);
    if (g_cfg.jitter_ns > 0) {
        delay += (int64_t)llround(normal(d) * (double)g_cfg.jitter_ns);
        if (delay < 0)
            delay = 0;
    }
    /* The chunk reached the proxy one loopback hop later than it would have reached the
     * server directly (hop.c): that hop is part of the delay, not on top of it. */
    delay = delay > g_cfg.hop_ns ? delay - g_cfg.hop_ns : 0;
    t += delay;
    if (t < d->last_due) /* never overtake an earlier chunk */
        t = d->last_due;
    d->last_due = t;
    return t;
}

static void enqueue(struct direction *d, const unsigned char *p, size_t n, int64_t due)
{
    struct chunk *ch = malloc(sizeof *ch + n);
    if (!ch) {
        fprintf(stderr, "abproxy: out of memory, aborting connection %llu\n", (unsigned long long)d->conn->id);
        conn_abort(d->conn);
        return;
    }
    ch->next = NULL;
    ch->due_ns = due;
    ch->len = n;
    ch->off = 0;
    memcpy(ch->data, p, n);
    if (d->tail)
        d->tail->next = ch;
    else
        d->head = ch;
    d->tail = ch;
    d->queued += n;
}

static void pop(struct direction *d)
{
    struct chunk *ch = d->head;
    d->head = ch->next;
    if (!d->head)
        d->tail = NULL;
    d->queued -= ch->len;
    free(ch);
}

static int64_t effective_due(int64_t due)
{
    int64_t stall = atomic_load_explicit(&g_stall_until, memory_order_relaxed);
    return due > stall ? due : stall;
}

/* Send as much as possible of p[0..n): returns bytes sent (maybe 0 if the socket is full),
 * or -1 on a fatal error. */
static ssize_t send_some(int fd, const unsigned char *p, size_t n)
{
    for (;;) {
        ssize_t k = send(fd, p, n, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (k >= 0)
            return k;
        if (errno == EINTR)
            continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK)
            return 0;
        return -1;
    }
}

/* Read one chunk from the source, date it, and send it at once if it is already due with
 * nothing ahead of it (delay 0), else queue it. Returns -1 once the connection is aborted. */
static int read_chunk(struct direction *d, int flags, bool *blocked, bool *src_eof)
{
    struct conn *c = d->conn;
    union {
        char buf[CMSG_SPACE(sizeof(struct timespec))];
        struct cmsghdr align;
    } control;
    struct iovec iov = {.iov_base = d->buf, .iov_len = BUF_SIZE};
    struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = control.buf,
                         .msg_controllen = sizeof control.buf};
    ssize_t k = recvmsg(d->src, &msg, flags);
    if (k > 0) {
        int64_t t = mono_ns();
        int64_t arrival = arrival_ns(&msg, t);
        count_chunk(c, d->which, (size_t)k, t - arrival);
        int64_t due = due_time(d, arrival, (size_t)k);
        size_t sent = 0;
        /* Nothing queued and already due (delay 0): straight from the buffer. */
        if (!d->head && !*blocked && effective_due(due) <= t) {
            ssize_t s = send_some(d->dst, d->buf, (size_t)k);
            if (s < 0) {
                conn_abort(c);
                return -1;
            }
            sent = (size_t)s;
            if (sent < (size_t)k)
                *blocked = true;
        }
        if (sent < (size_t)k)
            enqueue(d, d->buf + sent, (size_t)k - sent, due);
    } else if (k == 0) {
        *src_eof = true;
    } else if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
        conn_abort(c); /* e.g. ECONNRESET: pass the reset on */
        return -1;
    }
    return 0;
}

static void direction_loop(struct direction *d)
{
    struct conn *c = d->conn;
    bool src_eof = false, blocked = false; /* blocked: the destination's send buffer is full */

    for (;;) {
        if (atomic_load_explicit(&c->aborted, memory_order_relaxed))
            return;

        /* 1. Send every chunk that is due, in order. */
        int64_t now = mono_ns(), spin = atomic_load_explicit(&g_spin_ns, memory_order_relaxed);
        while (d->head && !blocked) {
            struct chunk *ch = d->head;
            int64_t due = effective_due(ch->due_ns);
            if (due > now) {
                if (due - now > spin)
                    break; /* sleep in poll first */
                /* Close to the deadline: spin on the clock (a stall may move it). */
                while ((now = mono_ns()) < (due = effective_due(ch->due_ns))) {
                    if (due - now > spin || atomic_load_explicit(&c->aborted, memory_order_relaxed))
                        break;
                    cpu_relax();
                }
                if (now < due)
                    break;
            }
            int64_t t0 = mono_ns();
            ssize_t k = send_some(d->dst, ch->data + ch->off, ch->len - ch->off);
            if (k > 0 && ch->off == 0) /* the chunk's first bytes leave: count it once */
                note_sent(t0 - effective_due(ch->due_ns), mono_ns() - t0);
            if (k < 0) {
                conn_abort(c);
                return;
            }
            ch->off += (size_t)k;
            if (ch->off < ch->len)
                blocked = true;
            else
                pop(d);
        }
        if (!d->head && src_eof) { /* everything forwarded: pass the half-close on */
            shutdown(d->dst, SHUT_WR);
            return;
        }

        /* 2. Nothing to send and nothing else to wait for: wait for data in recvmsg() itself,
         * one system call instead of ppoll() then recvmsg() — that is most of what the proxy
         * costs a request/response exchange at delay 0. An abort wakes it (conn_abort). */
        if (!d->head && !blocked && !src_eof) {
            if (read_chunk(d, 0, &blocked, &src_eof) < 0)
                return;
            continue;
        }

        /* 2'. Wait for data, room in the destination, the next deadline, or an abort. */
        struct pollfd pfd[3];
        int n = 0, isrc = -1, idst = -1;
        pfd[n++] = (struct pollfd){.fd = c->abort_fd, .events = POLLIN};
        if (!src_eof && d->queued < MAX_QUEUED) {
            isrc = n;
            pfd[n++] = (struct pollfd){.fd = d->src, .events = POLLIN};
        }
        if (blocked) {
            idst = n;
            pfd[n++] = (struct pollfd){.fd = d->dst, .events = POLLOUT};
        }
        struct timespec timeout, *tp = NULL;
        int64_t wake_at = -1, head_due = 0;
        if (d->head && !blocked) {
            head_due = effective_due(d->head->due_ns);
            wake_at = head_due - spin;
            int64_t wait = wake_at - mono_ns();
            if (wait < 0)
                wait = 0;
            if (wait > MAX_POLL_NS) {
                wait = MAX_POLL_NS;
                wake_at = -1; /* an intermediate wake: not measured */
            }
            timeout.tv_sec = wait / 1000000000LL;
            timeout.tv_nsec = wait % 1000000000LL;
            tp = &timeout;
        }
        int r = ppoll(pfd, (nfds_t)n, tp, NULL);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            conn_abort(c);
            return;
        }
        if (r == 0) {
            if (wake_at >= 0) {
                int64_t t = mono_ns();
                note_wake(t - wake_at, t > head_due);
            }
            continue;
        }
        if (pfd[0].revents)
            return; /* aborted */
        if (idst >= 0 && pfd[idst].revents)
            blocked = false; /* writable again, or an error the next send reports */

        /* 3. Read one chunk. */
        if (isrc >= 0 && pfd[isrc].revents && read_chunk(d, MSG_DONTWAIT, &blocked, &src_eof) < 0)
            return;
    }
}

/* ---- connection lifecycle ---- */

static void set_linger0(int fd)
{
    struct linger lg = {.l_onoff = 1, .l_linger = 0};
    setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
}

static void conn_finish(struct conn *c)
{
    /* Called by the last direction thread out. The record says closed before the sockets
     * close, so that a client that sees its connection end also sees it closed in `stats`.
     * The record (counters) stays in g_conns; the eventfd goes. */
    pthread_mutex_lock(&g_stats_lock);
    c->open = false;
    g_open--;
    close(c->abort_fd);
    c->abort_fd = -1;
    pthread_mutex_unlock(&g_stats_lock);
    /* An aborted connection is closed with a reset (RST) on both sides; a normal one has
     * already passed both half-closes on. */
    bool aborted = atomic_load(&c->aborted);
    if (c->client_fd >= 0) {
        if (aborted)
            set_linger0(c->client_fd);
        close(c->client_fd);
    }
    if (c->upstream_fd >= 0) {
        if (aborted)
            set_linger0(c->upstream_fd);
        close(c->upstream_fd);
    }
    for (int i = 0; i < 2; i++) {
        while (c->dir[i].head)
            pop(&c->dir[i]);
        free(c->dir[i].buf);
        c->dir[i].buf = NULL;
    }
}

static void thread_exit(struct conn *c)
{
    if (atomic_fetch_sub(&c->threads, 1) == 1)
        conn_finish(c);
}

static void setup_socket(int fd)
{
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (!g_cfg.user_timestamps)
        setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &one, sizeof one);
}

static void thread_setup(void)
{
    prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
    if (g_cfg.realtime > 0) {
        struct sched_param sp = {.sched_priority = g_cfg.realtime};
        int r = pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp);
        static atomic_bool warned;
        if (r != 0 && !atomic_exchange(&warned, true))
            fprintf(stderr, "abproxy: --realtime: cannot use SCHED_FIFO: %s (running without it)\n", strerror(r));
    }
}

static void *s2c_main(void *arg)
{
    struct direction *d = arg;
    thread_setup();
    direction_loop(d);
    thread_exit(d->conn);
    return NULL;
}

static int start_thread(void *(*fn)(void *), void *arg)
{
    pthread_attr_t attr;
    pthread_t t;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    pthread_attr_setstacksize(&attr, 256 * 1024);
    int r = pthread_create(&t, &attr, fn, arg);
    pthread_attr_destroy(&attr);
    return r;
}

/* The first thread of a connection: connect upstream, start the other direction, then
 * carry client → server itself. */
static void *c2s_main(void *arg)
{
    struct conn *c = arg;
    thread_setup();

    int fd = socket(g_cfg.target.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0 || connect(fd, (struct sockaddr *)&g_cfg.target, g_cfg.target_len) < 0) {
        fprintf(stderr, "abproxy: connection %llu: cannot connect to the target: %s\n",
                (unsigned long long)c->id, strerror(errno));
        if (fd >= 0)
            close(fd);
        atomic_store(&c->aborted, true); /* the client gets a reset */
        thread_exit(c);
        return NULL;
    }
    c->upstream_fd = fd;
    setup_socket(fd); /* blocking: every send is MSG_DONTWAIT, so is every read after ppoll() */
    c->dir[DIR_C2S].dst = c->dir[DIR_S2C].src = fd;

    atomic_fetch_add(&c->threads, 1);
    if (start_thread(s2c_main, &c->dir[DIR_S2C]) != 0) {
        fprintf(stderr, "abproxy: connection %llu: cannot start a thread\n", (unsigned long long)c->id);
        atomic_fetch_sub(&c->threads, 1);
        conn_abort(c);
    } else {
        direction_loop(&c->dir[DIR_C2S]);
    }
    thread_exit(c);
    return NULL;
}

void conn_start(int client_fd)
{
    struct conn *c = calloc(1, sizeof *c);
    int efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    unsigned char *b0 = malloc(BUF_SIZE), *b1 = malloc(BUF_SIZE);
    if (!c || efd < 0 || !b0 || !b1) {
        fprintf(stderr, "abproxy: cannot set up a connection: out of resources\n");
        set_linger0(client_fd);
        close(client_fd);
        free(c);
        free(b0);
        free(b1);
        if (efd >= 0)
            close(efd);
        return;
    }
    struct sockaddr_storage peer;
    socklen_t plen = sizeof peer;
    if (getpeername(client_fd, (struct sockaddr *)&peer, &plen) == 0) {
        char host[48] = "?";
        int port = 0;
        if (peer.ss_family == AF_INET) {
            struct sockaddr_in *a = (struct sockaddr_in *)&peer;
            inet_ntop(AF_INET, &a->sin_addr, host, sizeof host);
            port = ntohs(a->sin_port);
            snprintf(c->client, sizeof c->client, "%s:%d", host, port);
        } else if (peer.ss_family == AF_INET6) {
            struct sockaddr_in6 *a = (struct sockaddr_in6 *)&peer;
            inet_ntop(AF_INET6, &a->sin6_addr, host, sizeof host);
            port = ntohs(a->sin6_port);
            snprintf(c->client, sizeof c->client, "[%s]:%d", host, port);
        }
    }
    c->client_fd = client_fd;
    c->upstream_fd = -1;
    c->abort_fd = efd;
    c->last_dir = -1;
    c->open = true;
    atomic_init(&c->aborted, false);
    atomic_init(&c->threads, 1);
    setup_socket(client_fd);
    for (int i = 0; i < 2; i++) {
        struct direction *d = &c->dir[i];
        d->conn = c;
        d->which = i;
        d->buf = i ? b1 : b0;
    }
    c->dir[DIR_C2S].src = c->dir[DIR_S2C].dst = client_fd;
    c->dir[DIR_C2S].dst = c->dir[DIR_S2C].src = -1;

    pthread_mutex_lock(&g_stats_lock);
    c->id = ++g_accepted;
    g_open++;
    c->next = g_conns;
    g_conns = c;
    pthread_mutex_unlock(&g_stats_lock);
    for (int i = 0; i < 2; i++)
        rng_seed(c->dir[i].rng, (uint64_t)mono_ns() ^ (c->id << 32) ^ (uint64_t)i * 0x5851f42d4c957f2dULL);

    if (start_thread(c2s_main, c) != 0) {
        fprintf(stderr, "abproxy: cannot start a thread for connection %llu\n", (unsigned long long)c->id);
        atomic_store(&c->aborted, true);
        thread_exit(c);
    }
}

int conn_reset_all(void)
{
    int n = 0;
    pthread_mutex_lock(&g_stats_lock);
    for (struct conn *c = g_conns; c; c = c->next) {
        if (c->open && !atomic_load(&c->aborted)) {
            conn_abort(c);
            n++;
        }
    }
    pthread_mutex_unlock(&g_stats_lock);
    return n;
}
