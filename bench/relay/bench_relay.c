/* bench_relay: how many packets per second the conformance engine's packet
 * relay (conformance/src/core/relay.c) forwards, clean and with an
 * impairment profile (C61), against the same UDP flood sent straight over
 * loopback in the same run, and against issue 33's 50,000 packets/s.
 *
 * A sender in the relay's tester namespace floods 64-byte UDP datagrams at
 * the target's relay address in bursts; a receiver on this host counts
 * what arrives. The figure is what arrived per second of the flood: a
 * full TUN queue loses packets as a wire would, so only forwarded packets
 * count. Needs root (the relay's namespace); prints why and exits 0
 * without it. Not a test: `cmake --build BUILD --target bench_relay`.
 *
 * usage: bench_relay [--smoke]
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "conform/relay.h"

#define TARGET_PPS 50000.0

struct counter {
    int fd;
    volatile bool stop;
    unsigned long got;
};

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void *count_main(void *arg)
{
    struct counter *c = arg;
    char buf[2048];
    while (!c->stop) {
        struct pollfd p = {c->fd, POLLIN, 0};
        if (poll(&p, 1, 50) <= 0)
            continue;
        while (recv(c->fd, buf, sizeof buf, MSG_DONTWAIT) > 0)
            c->got++;
    }
    return NULL;
}

/* Flood `seconds` from sender to (addr, port) where the receiver listens;
 * packets per second that arrived. */
static double flood(int sender, int receiver, const char *addr, unsigned short port, double seconds)
{
    struct sockaddr_in to = {.sin_family = AF_INET, .sin_port = htons(port)};
    inet_pton(AF_INET, addr, &to.sin_addr);
    struct counter c = {receiver, false, 0};
    pthread_t th;
    if (pthread_create(&th, NULL, count_main, &c) != 0)
        return 0;
    char payload[64];
    memset(payload, 0x5a, sizeof payload);
    double t0 = now(), end = t0 + seconds;
    while (now() < end) {
        for (int i = 0; i < 64; i++)
            if (sendto(sender, payload, sizeof payload, 0, (struct sockaddr *)&to, sizeof to) < 0 && errno != ENOBUFS &&
                errno != EAGAIN)
                break;
        /* a burst, then let the forwarder drain a little: a sender faster
         * than any receiver only measures the queue's losses */
        struct timespec pause = {0, 20000};
        nanosleep(&pause, NULL);
    }
    struct timespec settle = {0, 100000000}; /* what is in flight arrives */
    nanosleep(&settle, NULL);
    double elapsed = now() - t0 - 0.1;
    c.stop = true;
    pthread_join(th, NULL);
    return (double)c.got / elapsed;
}

static int bound_udp(const char *addr, unsigned short *port)
{
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in sin = {.sin_family = AF_INET};
    inet_pton(AF_INET, addr, &sin.sin_addr);
    int big = 8 << 20;
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &big, sizeof big);
    if (fd < 0 || bind(fd, (struct sockaddr *)&sin, sizeof sin) < 0)
        return -1;
    socklen_t l = sizeof sin;
    getsockname(fd, (struct sockaddr *)&sin, &l);
    *port = ntohs(sin.sin_port);
    return fd;
}

static void ratio(const char *what, double v, double target)
{
    printf("ratio %s = %.2fx (target >= %.2fx) %s\n", what, v, target, v >= target ? "OK" : "MISS");
}

int main(int argc, char **argv)
{
    bool smoke = argc > 1 && strcmp(argv[1], "--smoke") == 0;
    double secs = smoke ? 0.3 : 3.0;
    char why[300];
    struct cf_relay *r = cf_relay_open(why, sizeof why);
    if (!r) {
        printf("bench_relay: no packet relay here (%s); nothing measured\n", why);
        for (int i = 0; i < 3; i++)
            ratio(i == 0 ? "relay forwarding vs 50000 packets/s" : i == 1 ? "relay lossy vs 50000 packets/s"
                                                                        : "relay forwarding vs loopback",
                  0.0, i == 2 ? 0.05 : 1.0);
        return 0;
    }
    printf("load average: ");
    FILE *la = fopen("/proc/loadavg", "r");
    char line[128] = "?";
    if (la && fgets(line, sizeof line, la))
        fputs(line, stdout);
    else
        puts("?");
    if (la)
        fclose(la);

    unsigned short lport, rport;
    int lrecv = bound_udp("127.0.0.1", &lport), lsend = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    double direct = flood(lsend, lrecv, "127.0.0.1", lport, secs);
    close(lsend);
    close(lrecv);

    int rrecv = bound_udp(cf_relay_target_addr(r), &rport);
    int rsend = cf_relay_socket(r, AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (rrecv < 0 || rsend < 0) {
        fprintf(stderr, "bench_relay: sockets: %s\n", strerror(errno));
        cf_relay_close(r);
        return 1;
    }
    cf_relay_begin(r, NULL, 0);
    double clean = flood(rsend, rrecv, cf_relay_target_addr(r), rport, secs);
    cf_relay_begin(r, NULL, 0); /* drop the recording */
    struct cf_impair imp;
    if (cf_impair_parse("lossy,delay=0-1ms", &imp, why, sizeof why) < 0) {
        fprintf(stderr, "bench_relay: %s\n", why);
        return 1;
    }
    cf_relay_impair(r, &imp, 1);
    double impaired = flood(rsend, rrecv, cf_relay_target_addr(r), rport, secs);
    cf_relay_begin(r, NULL, 0);
    close(rsend);
    close(rrecv);
    cf_relay_close(r);
    printf("direct over loopback: %.0f packets/s\n", direct);
    printf("through the relay:    %.0f packets/s\n", clean);
    printf("through the relay, impaired (%s): %.0f packets/s\n", imp.text, impaired);
    ratio("relay forwarding vs 50000 packets/s", clean / TARGET_PPS, 1.0);
    ratio("relay lossy vs 50000 packets/s", impaired / TARGET_PPS, 1.0);
    ratio("relay forwarding vs loopback", direct > 0 ? clean / direct : 0.0, 0.05);
    return 0;
}
