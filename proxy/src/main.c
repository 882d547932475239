/* abproxy's entry point: options, the two listeners, the accept loop, signals. */
#include "abproxy.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

struct config g_cfg;
_Atomic int64_t g_delay_ns;
_Atomic int64_t g_stall_until;

static int quit_pipe[2] = {-1, -1};

static const char usage[] =
    "usage: abproxy --listen 127.0.0.1:0 --target HOST:PORT --delay-us N\n"
    "               [--jitter-us SIGMA] [--bandwidth BYTES_PER_S] [--control 127.0.0.1:0]\n"
    "               [--cpu LIST] [--realtime PRIO] [--spin-us US] [--spin-max-us US] [--hop-us auto|US]\n"
    "               [--user-timestamps]\n"
    "Relays TCP from --listen to --target, delaying each chunk by N µs in each direction.\n"
    "Prints {\"listen\": \"IP:PORT\", \"control\": \"IP:PORT\"} on start; see README.md.\n";

static _Noreturn void die(const char *fmt, const char *arg)
{
    fprintf(stderr, "abproxy: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\n");
    exit(2);
}

void request_quit(void)
{
    char b = 'q';
    if (write(quit_pipe[1], &b, 1) < 0) { /* the pipe is never full: one byte is enough */
    }
}

static void on_signal(int sig)
{
    (void)sig;
    int saved = errno;
    request_quit();
    errno = saved;
}

/* "HOST:PORT" or "[V6]:PORT" → address (resolved once, numeric or by name). */
static void parse_address(const char *opt, const char *text, struct sockaddr_storage *out, socklen_t *len)
{
    char host[256];
    const char *colon = strrchr(text, ':');
    if (!colon || colon == text || !colon[1])
        die("%s needs HOST:PORT", opt);
    size_t hl = (size_t)(colon - text);
    if (text[0] == '[' && hl >= 2 && text[hl - 1] == ']') {
        text++;
        hl -= 2;
    }
    if (hl >= sizeof host)
        die("%s: host name too long", opt);
    memcpy(host, text, hl);
    host[hl] = 0;
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *res;
    int rc = getaddrinfo(host, colon + 1, &hints, &res);
    if (rc != 0) {
        fprintf(stderr, "abproxy: %s %s: %s\n", opt, text, gai_strerror(rc));
        exit(2);
    }
    memcpy(out, res->ai_addr, res->ai_addrlen);
    *len = res->ai_addrlen;
    freeaddrinfo(res);
}

static int64_t parse_int(const char *opt, const char *text, int64_t max)
{
    char *end;
    errno = 0;
    long long v = strtoll(text, &end, 10);
    if (errno || end == text || *end || v < 0 || v > max)
        die("%s needs a whole number ≥ 0", opt);
    return v;
}

/* "1", "0,2", "0-3": the CPUs every thread of the proxy may run on. */
static void parse_cpus(const char *text, cpu_set_t *set)
{
    CPU_ZERO(set);
    const char *p = text;
    while (*p) {
        char *end;
        long a = strtol(p, &end, 10), b = a;
        if (end == p || a < 0 || a >= CPU_SETSIZE)
            die("--cpu needs a list of CPUs such as 1 or 0,2 or 0-3, not %s", text);
        p = end;
        if (*p == '-') {
            b = strtol(p + 1, &end, 10);
            if (end == p + 1 || b < a || b >= CPU_SETSIZE)
                die("--cpu needs a list of CPUs such as 1 or 0,2 or 0-3, not %s", text);
            p = end;
        }
        for (long i = a; i <= b; i++)
            CPU_SET((int)i, set);
        if (*p == ',')
            p++;
        else if (*p)
            die("--cpu needs a list of CPUs such as 1 or 0,2 or 0-3, not %s", text);
    }
}

static int listen_on(const struct sockaddr_storage *addr, socklen_t len, char *bound, size_t bsize)
{
    int fd = socket(addr->ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;
    if (fd < 0)
        return -1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (bind(fd, (const struct sockaddr *)addr, len) < 0 || listen(fd, 128) < 0) {
        close(fd);
        return -1;
    }
    struct sockaddr_storage a;
    socklen_t al = sizeof a;
    getsockname(fd, (struct sockaddr *)&a, &al);
    char host[INET6_ADDRSTRLEN] = "?";
    if (a.ss_family == AF_INET) {
        struct sockaddr_in *s = (struct sockaddr_in *)&a;
        inet_ntop(AF_INET, &s->sin_addr, host, sizeof host);
        snprintf(bound, bsize, "%s:%d", host, ntohs(s->sin_port));
    } else {
        struct sockaddr_in6 *s = (struct sockaddr_in6 *)&a;
        inet_ntop(AF_INET6, &s->sin6_addr, host, sizeof host);
        snprintf(bound, bsize, "[%s]:%d", host, ntohs(s->sin6_port));
    }
    return fd;
}

int main(int argc, char **argv)
{
    const char *listen_text = NULL, *target_text = NULL, *control_text = "127.0.0.1:0", *cpu_text = NULL;
    int64_t delay_us = -1;
    g_cfg.spin_min_ns = 50000;
    g_cfg.spin_max_ns = 250000;
    g_cfg.hop_ns = -1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            fputs(usage, stdout);
            return 0;
        }
        if (!strcmp(a, "--user-timestamps")) {
            g_cfg.user_timestamps = true;
            continue;
        }
        if (i + 1 >= argc) {
            fputs(usage, stderr);
            die("%s needs a value", a);
        }
        const char *v = argv[++i];
        if (!strcmp(a, "--listen"))
            listen_text = v;
        else if (!strcmp(a, "--target"))
            target_text = v;
        else if (!strcmp(a, "--control"))
            control_text = v;
        else if (!strcmp(a, "--delay-us"))
            delay_us = parse_int(a, v, 3600LL * 1000000);
        else if (!strcmp(a, "--jitter-us"))
            g_cfg.jitter_ns = parse_int(a, v, 3600LL * 1000000) * 1000;
        else if (!strcmp(a, "--bandwidth"))
            g_cfg.bandwidth = parse_int(a, v, INT64_MAX / 2);
        else if (!strcmp(a, "--spin-us"))
            g_cfg.spin_min_ns = parse_int(a, v, 1000000) * 1000;
        else if (!strcmp(a, "--spin-max-us"))
            g_cfg.spin_max_ns = parse_int(a, v, 1000000) * 1000;
        else if (!strcmp(a, "--cpu"))
            cpu_text = v;
        else if (!strcmp(a, "--hop-us")) /* "auto" or a whole number of µs */
            g_cfg.hop_ns = strcmp(v, "auto") ? parse_int("--hop-us (auto or a number)", v, 1000000) * 1000 : -1;
        else if (!strcmp(a, "--realtime"))
            g_cfg.realtime = (int)parse_int(a, v, 99);
        else {
            fputs(usage, stderr);
            die("unknown option %s", a);
        }
    }
    if (!listen_text || !target_text || delay_us < 0) {
        fputs(usage, stderr);
        return 2;
    }
    atomic_store(&g_delay_ns, delay_us * 1000);
    atomic_store(&g_stall_until, 0);
    if (g_cfg.spin_max_ns < g_cfg.spin_min_ns)
        g_cfg.spin_max_ns = g_cfg.spin_min_ns;
    atomic_store(&g_spin_ns, g_cfg.spin_min_ns);
    parse_address("--target", target_text, &g_cfg.target, &g_cfg.target_len);

    struct sockaddr_storage la, ca;
    socklen_t ll, cl;
    parse_address("--listen", listen_text, &la, &ll);
    parse_address("--control", control_text, &ca, &cl);
    char lbound[80], cbound[80];
    int lfd = listen_on(&la, ll, lbound, sizeof lbound);
    if (lfd < 0) {
        fprintf(stderr, "abproxy: cannot listen on %s: %s\n", listen_text, strerror(errno));
        return 1;
    }
    int cfd = listen_on(&ca, cl, cbound, sizeof cbound);
    if (cfd < 0) {
        fprintf(stderr, "abproxy: cannot listen on %s: %s\n", control_text, strerror(errno));
        return 1;
    }

    /* Threads inherit the slack and the CPU affinity of their creator: set both before any
     * thread is started. */
    prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
    if (cpu_text) {
        cpu_set_t set;
        parse_cpus(cpu_text, &set);
        if (sched_setaffinity(0, sizeof set, &set) < 0) {
            fprintf(stderr, "abproxy: --cpu %s: %s\n", cpu_text, strerror(errno));
            return 2;
        }
    }
    /* Measured where the relay threads will run: after the affinity, before any traffic. */
    if (g_cfg.hop_ns < 0 && (g_cfg.hop_ns = measure_hop_ns()) < 0) {
        fprintf(stderr, "abproxy: cannot measure the loopback hop (%s): it stays in the delay\n", strerror(errno));
        g_cfg.hop_ns = 0;
    }
    if (pipe2(quit_pipe, O_CLOEXEC | O_NONBLOCK) < 0) {
        perror("abproxy: pipe");
        return 1;
    }
    struct sigaction sa = {.sa_handler = on_signal};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);

    printf("{\"listen\": \"%s\", \"control\": \"%s\", \"hop_us\": %.2f}\n", lbound, cbound, (double)g_cfg.hop_ns / 1e3);
    fflush(stdout);

    for (;;) {
        struct pollfd pfd[3] = {{.fd = lfd, .events = POLLIN}, {.fd = cfd, .events = POLLIN},
                                {.fd = quit_pipe[0], .events = POLLIN}};
        if (poll(pfd, 3, -1) < 0) {
            if (errno == EINTR)
                continue;
            perror("abproxy: poll");
            return 1;
        }
        if (pfd[2].revents)
            break;
        if (pfd[0].revents) {
            int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
            if (fd >= 0)
                conn_start(fd);
            else if (errno == EMFILE || errno == ENFILE) {
                fprintf(stderr, "abproxy: accept: %s\n", strerror(errno));
                nanosleep(&(struct timespec){.tv_nsec = 10000000}, NULL); /* do not spin on it */
            }
        }
        if (pfd[1].revents) {
            int fd = accept4(cfd, NULL, NULL, SOCK_CLOEXEC);
            if (fd >= 0)
                control_start(fd);
        }
    }
    /* SIGTERM, SIGINT or `quit`: the process ends; the kernel closes every socket. */
    return 0;
}
