/* The control channel: one thread per control client; one command line in, one JSON line
 * out, as many times as the client likes. */
#include "abproxy.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_LINE 1024

struct out {
    char *p;
    size_t len, cap;
};

static void put(struct out *o, const char *fmt, ...)
{
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(o->p ? o->p + o->len : NULL, o->p ? o->cap - o->len : 0, fmt, ap);
        va_end(ap);
        if (n < 0)
            return;
        if (o->p && o->len + (size_t)n < o->cap) {
            o->len += (size_t)n;
            return;
        }
        size_t cap = o->cap ? o->cap : 4096;
        while (cap <= o->len + (size_t)n)
            cap *= 2;
        char *p = realloc(o->p, cap);
        if (!p)
            return; /* the reply is cut short; the client sees invalid JSON */
        o->p = p;
        o->cap = cap;
    }
}

static void put_counters(struct out *o, const struct counters *c)
{
    put(o, "\"c2s_chunks\": %llu, \"c2s_bytes\": %llu, \"s2c_chunks\": %llu, \"s2c_bytes\": %llu, "
           "\"round_trips\": %llu",
        (unsigned long long)c->c2s_chunks, (unsigned long long)c->c2s_bytes,
        (unsigned long long)c->s2c_chunks, (unsigned long long)c->s2c_bytes,
        (unsigned long long)c->round_trips);
}

static void stats(struct out *o)
{
    /* Everything is read under the one lock the counters are written under: the totals and
     * every connection's figures are one consistent snapshot. */
    pthread_mutex_lock(&g_stats_lock);
    size_t n = 0;
    for (struct conn *c = g_conns; c; c = c->next)
        n++;
    struct conn **all = malloc((n ? n : 1) * sizeof *all);
    put(o, "{\"connections\": %llu, \"accepted\": %llu, \"delay_us\": %lld, \"totals\": {",
        (unsigned long long)g_open, (unsigned long long)g_accepted,
        (long long)(atomic_load(&g_delay_ns) / 1000));
    put_counters(o, &g_totals);
    put(o, "}, \"per_connection\": [");
    if (all) {
        size_t i = n;
        for (struct conn *c = g_conns; c; c = c->next) /* newest first → list oldest first */
            all[--i] = c;
        for (i = 0; i < n; i++) {
            struct conn *c = all[i];
            put(o, "%s{\"id\": %llu, \"client\": \"%s\", \"open\": %s, ", i ? ", " : "",
                (unsigned long long)c->id, c->client, c->open ? "true" : "false");
            put_counters(o, &c->c);
            put(o, "}");
        }
        free(all);
    }
    const struct timing *t = &g_timing;
    put(o, "], \"timing\": {\"sent\": %llu, \"send_mean_us\": %.2f, \"late_mean_us\": %.2f, \"late_max_us\": %.2f, "
           "\"late_over_10us\": %llu, \"wakes\": %llu, \"wake_overshoot_mean_us\": %.2f, "
           "\"wake_overshoot_max_us\": %.2f, \"missed_spin\": %llu, \"reads\": %llu, "
           "\"read_lag_mean_us\": %.2f, \"read_lag_max_us\": %.2f, \"spin_us\": %.1f, \"hop_us\": %.2f}}\n",
        (unsigned long long)t->sent, t->sent ? (double)t->send_sum / (double)t->sent / 1e3 : 0.0, t->sent ? (double)t->late_sum / (double)t->sent / 1e3 : 0.0,
        (double)t->late_max / 1e3, (unsigned long long)t->late_over_10us, (unsigned long long)t->wakes,
        t->wakes ? (double)t->wake_over_sum / (double)t->wakes / 1e3 : 0.0, (double)t->wake_over_max / 1e3,
        (unsigned long long)t->missed_spin, (unsigned long long)t->reads,
        t->reads ? (double)t->read_lag_sum / (double)t->reads / 1e3 : 0.0, (double)t->read_lag_max / 1e3,
        (double)atomic_load(&g_spin_ns) / 1e3, (double)g_cfg.hop_ns / 1e3);
    pthread_mutex_unlock(&g_stats_lock);
}

/* A number argument: whole, ≥ 0. */
static int number(const char *arg, int64_t max, int64_t *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(arg, &end, 10);
    while (*end == ' ' || *end == '\t')
        end++;
    if (errno || end == arg || *end || v < 0 || v > max)
        return -1;
    *out = v;
    return 0;
}

/* Runs one command; returns 1 when it was `quit`. */
static int command(char *line, struct out *o)
{
    while (*line == ' ' || *line == '\t')
        line++;
    size_t l = strlen(line);
    while (l && (line[l - 1] == ' ' || line[l - 1] == '\t' || line[l - 1] == '\r'))
        line[--l] = 0;
    char *arg = line;
    while (*arg && !isspace((unsigned char)*arg))
        arg++;
    if (*arg)
        *arg++ = 0;
    while (*arg == ' ' || *arg == '\t')
        arg++;
    int64_t v;

    if (!strcmp(line, "stats") && !*arg) {
        stats(o);
    } else if (!strcmp(line, "delay")) {
        if (number(arg, 3600LL * 1000000, &v) < 0) {
            put(o, "{\"ok\": false, \"error\": \"usage: delay MICROSECONDS\"}\n");
            return 0;
        }
        atomic_store(&g_delay_ns, v * 1000);
        put(o, "{\"ok\": true, \"delay_us\": %lld}\n", (long long)v);
    } else if (!strcmp(line, "stall")) {
        if (number(arg, 3600LL * 1000, &v) < 0) {
            put(o, "{\"ok\": false, \"error\": \"usage: stall MILLISECONDS\"}\n");
            return 0;
        }
        int64_t until = mono_ns() + v * 1000000, cur = atomic_load(&g_stall_until);
        /* A shorter stall never shortens one already in force. */
        while (cur < until && !atomic_compare_exchange_weak(&g_stall_until, &cur, until)) {
        }
        put(o, "{\"ok\": true, \"stall_ms\": %lld}\n", (long long)v);
    } else if (!strcmp(line, "reset") && !*arg) {
        put(o, "{\"ok\": true, \"reset\": %d}\n", conn_reset_all());
    } else if (!strcmp(line, "quit") && !*arg) {
        put(o, "{\"ok\": true}\n");
        return 1;
    } else {
        put(o, "{\"ok\": false, \"error\": \"unknown command; try stats, delay US, stall MS, reset, quit\"}\n");
    }
    return 0;
}

static int send_all(int fd, const char *p, size_t n)
{
    while (n) {
        ssize_t k = send(fd, p, n, MSG_NOSIGNAL);
        if (k < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        p += k;
        n -= (size_t)k;
    }
    return 0;
}

static void *control_main(void *arg)
{
    int fd = (int)(intptr_t)arg;
    char buf[MAX_LINE];
    size_t have = 0;
    struct out o = {0};
    for (;;) {
        char *nl;
        while (!(nl = memchr(buf, '\n', have))) {
            if (have == sizeof buf) { /* an absurd line: drop the client */
                close(fd);
                free(o.p);
                return NULL;
            }
            ssize_t k = recv(fd, buf + have, sizeof buf - have, 0);
            if (k < 0 && errno == EINTR)
                continue;
            if (k <= 0) {
                close(fd);
                free(o.p);
                return NULL;
            }
            have += (size_t)k;
        }
        *nl = 0;
        o.len = 0;
        int quit = command(buf, &o);
        if (o.p)
            send_all(fd, o.p, o.len);
        if (quit)
            request_quit(); /* the main thread ends the process */
        size_t used = (size_t)(nl + 1 - buf);
        memmove(buf, nl + 1, have - used);
        have -= used;
    }
}

void control_start(int fd)
{
    pthread_attr_t attr;
    pthread_t t;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    pthread_attr_setstacksize(&attr, 128 * 1024);
    if (pthread_create(&t, &attr, control_main, (void *)(intptr_t)fd) != 0)
        close(fd);
    pthread_attr_destroy(&attr);
}
