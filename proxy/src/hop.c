/* The proxy's own hop, measured so that it can be taken out of the delay.
 *
 * A proxied chunk crosses loopback twice where a direct one crosses once: client → proxy,
 * then proxy → server. The proxy dates each chunk by its arrival in the proxy's socket (the
 * kernel's receive timestamp), so the first crossing — from the client's send() to that
 * arrival — is the part of the path a direct connection would not have, and it shows up on
 * top of the delay. Its cost is the kernel's TCP send path up to the receiving socket: the
 * same for the client's send() as for the proxy's own. So the proxy measures it on itself at
 * start (a loopback TCP pair inside the proxy: clock before send(), the receiver's kernel
 * timestamp after it) and sends each delayed chunk that much earlier. The host's speed drifts
 * (on a shared VM a fixed piece of work can take twice as long for a while), so the proxy
 * measures several bursts a few ms apart and keeps the lowest burst median: its own cost,
 * not the neighbours'. The receiver's wake-up is not in it: the timestamp is taken when the data is
 * queued, before anyone wakes, exactly as on the proxy's own sockets. */
#include "abproxy.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define HOP_WARMUP 50
#define HOP_BURSTS 7
#define HOP_SAMPLES 151 /* per burst */
#define HOP_BYTES 64

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static int loopback_pair(int *tx, int *rx)
{
    int one = 1, lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof a;
    *tx = *rx = -1;
    if (lfd < 0)
        return -1;
    if (bind(lfd, (struct sockaddr *)&a, sizeof a) == 0 && listen(lfd, 1) == 0 &&
        getsockname(lfd, (struct sockaddr *)&a, &len) == 0 &&
        (*tx = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) >= 0 &&
        connect(*tx, (struct sockaddr *)&a, sizeof a) == 0)
        *rx = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
    close(lfd);
    if (*rx < 0)
        return -1;
    setsockopt(*tx, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    setsockopt(*rx, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return setsockopt(*rx, SOL_SOCKET, SO_TIMESTAMPNS, &one, sizeof one);
}

/* The median hop of one burst of sends, or -1. */
static int64_t burst(int tx, int rx, int64_t *samples, int warmup)
{
    unsigned char msg[HOP_BYTES] = {0}, in[HOP_BYTES];
    union {
        char buf[CMSG_SPACE(sizeof(struct timespec))];
        struct cmsghdr align;
    } control;
    int n = 0;
    for (int i = 0; i < warmup + HOP_SAMPLES; i++) {
        int64_t t0 = mono_ns();
        if (send(tx, msg, sizeof msg, MSG_NOSIGNAL) != (ssize_t)sizeof msg)
            return -1;
        size_t got = 0;
        int64_t arrival = -1;
        while (got < sizeof msg) { /* one send is one segment here; read all of it anyway */
            struct iovec iov = {.iov_base = in, .iov_len = sizeof in - got};
            struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = control.buf,
                               .msg_controllen = sizeof control.buf};
            ssize_t k = recvmsg(rx, &m, 0);
            if (k <= 0)
                return -1;
            if (arrival < 0)
                arrival = arrival_ns(&m, mono_ns());
            got += (size_t)k;
        }
        if (i >= warmup)
            samples[n++] = arrival - t0;
    }
    qsort(samples, (size_t)n, sizeof *samples, cmp_i64);
    return samples[n / 2] > 0 ? samples[n / 2] : 0;
}

int64_t measure_hop_ns(void)
{
    int tx = -1, rx = -1;
    int64_t *samples = malloc(HOP_SAMPLES * sizeof *samples), hop = -1;
    if (samples && loopback_pair(&tx, &rx) == 0) {
        for (int b = 0; b < HOP_BURSTS; b++) {
            int64_t m = burst(tx, rx, samples, b ? 10 : HOP_WARMUP);
            if (m < 0) {
                hop = -1;
                break;
            }
            if (hop < 0 || m < hop)
                hop = m;
            nanosleep(&(struct timespec){.tv_nsec = 2000000}, NULL);
        }
    }
    free(samples);
    if (tx >= 0)
        close(tx);
    if (rx >= 0)
        close(rx);
    return hop;
}
