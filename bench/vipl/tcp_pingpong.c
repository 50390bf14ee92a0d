/* tcp_pingpong: the plain-TCP baseline of the vipl benchmark. It measures what
 * vipl-pingpong measures, the same way, over a bare TCP socket (blocking,
 * TCP_NODELAY on both sides):
 *   latency:   N round trips of SIZE bytes each way, half the mean round trip;
 *   bandwidth: COUNT messages of SIZE bytes one way (COUNT = 256 MiB / SIZE,
 *              within 16..20000), then a 4-byte answer; MB/s = bytes / us.
 * Defaults of N as in vipl-pingpong: 5000 up to 4 KiB, 1000 up to 64 KiB, else 200.
 *
 * usage: tcp_pingpong --server --port P [--once]
 *        tcp_pingpong --client HOST --port P [--sizes 4,65536] [--iters N] [--csv]
 * CSV columns as vipl-pingpong's: op,crc,size,half_rtt_us,mbytes_per_s
 * (op "tcp", crc "off"). Exit 0, 1 on a network failure, 2 on bad use. */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAX_MSG (1u << 20)
enum { MODE_PINGPONG = 1, MODE_STREAM = 2, MODE_QUIT = 3 };

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int write_all(int fd, const void *buf, size_t len)
{
    const char *p = buf;
    while (len > 0) {
        ssize_t n = send(fd, p, len, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

/* 0 done, -1 error or the peer closed before len bytes. */
static int read_all(int fd, void *buf, size_t len)
{
    char *p = buf;
    while (len > 0) {
        ssize_t n = recv(fd, p, len, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

static void nodelay(int fd)
{
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

struct ctl {
    uint32_t mode, size, count;
};

static int send_ctl(int fd, uint32_t mode, uint32_t size, uint32_t count)
{
    uint32_t w[3] = {htonl(mode), htonl(size), htonl(count)};
    return write_all(fd, w, sizeof w);
}

/* Serve one connection until QUIT or close. Returns 0, or -1 on a protocol error. */
static int serve_conn(int fd, char *buf)
{
    for (;;) {
        uint32_t w[3];
        if (read_all(fd, w, sizeof w) != 0)
            return 0; /* the client went away */
        struct ctl c = {ntohl(w[0]), ntohl(w[1]), ntohl(w[2])};
        if (c.mode == MODE_QUIT)
            return 0;
        if (c.size == 0 || c.size > MAX_MSG || (c.mode != MODE_PINGPONG && c.mode != MODE_STREAM)) {
            fprintf(stderr, "tcp_pingpong: bad request (mode %u size %u)\n", c.mode, c.size);
            return -1;
        }
        for (uint32_t k = 0; k < c.count; k++) {
            if (read_all(fd, buf, c.size) != 0)
                return -1;
            if (c.mode == MODE_PINGPONG && write_all(fd, buf, c.size) != 0)
                return -1;
        }
        if (c.mode == MODE_STREAM && write_all(fd, buf, 4) != 0)
            return -1;
    }
}

static int run_server(long port, int once)
{
    int ls = socket(AF_INET, SOCK_STREAM, 0);
    if (ls < 0) {
        perror("tcp_pingpong: socket");
        return 1;
    }
    int one = 1;
    setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port),
                            .sin_addr.s_addr = htonl(INADDR_ANY)};
    if (bind(ls, (struct sockaddr *)&a, sizeof a) != 0 || listen(ls, 4) != 0) {
        fprintf(stderr, "tcp_pingpong: cannot listen on port %ld: %s\n", port, strerror(errno));
        close(ls);
        return 1;
    }
    char *buf = malloc(MAX_MSG);
    if (!buf) {
        close(ls);
        return 1;
    }
    int err = 0;
    do {
        int fd = accept(ls, NULL, NULL);
        if (fd < 0) {
            if (errno == EINTR)
                continue;
            perror("tcp_pingpong: accept");
            err = 1;
            break;
        }
        nodelay(fd);
        if (serve_conn(fd, buf) != 0 && once)
            err = 1;
        close(fd);
    } while (!once);
    free(buf);
    close(ls);
    return err;
}

static int connect_to(const char *host, long port)
{
    char ps[24];
    snprintf(ps, sizeof ps, "%ld", port);
    struct addrinfo hints = {.ai_socktype = SOCK_STREAM}, *res;
    int rc = getaddrinfo(host, ps, &hints, &res);
    if (rc != 0) {
        fprintf(stderr, "tcp_pingpong: cannot resolve %s: %s\n", host, gai_strerror(rc));
        return -1;
    }
    int fd = -1;
    for (struct addrinfo *ai = res; ai && fd < 0; ai = ai->ai_next) {
        fd = socket(ai->ai_family, ai->ai_socktype, ai->ai_protocol);
        if (fd >= 0 && connect(fd, ai->ai_addr, ai->ai_addrlen) != 0) {
            close(fd);
            fd = -1;
        }
    }
    freeaddrinfo(res);
    if (fd < 0)
        fprintf(stderr, "tcp_pingpong: cannot connect to %s:%ld: %s\n", host, port, strerror(errno));
    else
        nodelay(fd);
    return fd;
}

static int run_client(const char *host, long port, const char *sizes, long iters, int csv)
{
    int fd = connect_to(host, port);
    if (fd < 0)
        return 1;
    char *buf = calloc(1, MAX_MSG), *list = strdup(sizes);
    if (!buf || !list) {
        free(buf);
        free(list);
        close(fd);
        return 1;
    }
    if (csv)
        printf("op,crc,size,half_rtt_us,mbytes_per_s\n");
    else
        printf("%-6s %-4s %10s %12s %14s\n", "op", "crc", "size", "half_rtt_us", "mbytes_per_s");
    int err = 0;
    for (char *tok = strtok(list, ","); tok && !err; tok = strtok(NULL, ",")) {
        uint32_t size = (uint32_t)strtoul(tok, NULL, 10);
        uint32_t n = iters > 0 ? (uint32_t)iters : size <= 4096 ? 5000 : size <= 65536 ? 1000 : 200;
        /* latency */
        err = send_ctl(fd, MODE_PINGPONG, size, n) != 0;
        double t0 = now_us();
        for (uint32_t k = 0; k < n && !err; k++)
            err = write_all(fd, buf, size) != 0 || read_all(fd, buf, size) != 0;
        double half_rtt = (now_us() - t0) / n / 2;
        /* bandwidth */
        uint32_t count = (uint32_t)((256u << 20) / size);
        if (count > 20000)
            count = 20000;
        if (count < 16)
            count = 16;
        if (!err)
            err = send_ctl(fd, MODE_STREAM, size, count) != 0;
        t0 = now_us();
        for (uint32_t k = 0; k < count && !err; k++)
            err = write_all(fd, buf, size) != 0;
        if (!err)
            err = read_all(fd, buf, 4) != 0;
        double mbps = (double)size * count / (now_us() - t0);
        if (err) {
            fprintf(stderr, "tcp_pingpong: connection lost at size %u\n", size);
            break;
        }
        if (csv)
            printf("tcp,off,%u,%.2f,%.1f\n", size, half_rtt, mbps);
        else
            printf("%-6s %-4s %10u %12.2f %14.1f\n", "tcp", "off", size, half_rtt, mbps);
        fflush(stdout);
    }
    if (!err)
        send_ctl(fd, MODE_QUIT, 0, 0);
    free(buf);
    free(list);
    close(fd);
    return err;
}

static void usage(FILE *f)
{
    fprintf(f, "usage: tcp_pingpong --server --port P [--once]\n"
               "       tcp_pingpong --client HOST --port P [--sizes 4,65536] [--iters N] [--csv]\n");
}

static int parse_long(const char *s, long min, long max, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || *end || end == s || v < min || v > max)
        return -1;
    *out = v;
    return 0;
}

int main(int argc, char **argv)
{
    int server = 0, once = 0, csv = 0;
    const char *host = NULL, *sizes = "4,65536";
    long port = -1, iters = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--server") == 0)
            server = 1;
        else if (strcmp(a, "--once") == 0)
            once = 1;
        else if (strcmp(a, "--csv") == 0)
            csv = 1;
        else if (strcmp(a, "--client") == 0 && v)
            host = argv[++i];
        else if (strcmp(a, "--sizes") == 0 && v)
            sizes = argv[++i];
        else if (strcmp(a, "--port") == 0 && v && parse_long(v, 1, 65535, &port) == 0)
            i++;
        else if (strcmp(a, "--iters") == 0 && v && parse_long(v, 1, 100000000, &iters) == 0)
            i++;
        else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            usage(stdout);
            return 0;
        } else {
            fprintf(stderr, "tcp_pingpong: bad argument '%s'\n", a);
            usage(stderr);
            return 2;
        }
    }
    if (server == (host != NULL) || port < 0) {
        fprintf(stderr, "tcp_pingpong: give exactly one of --server / --client HOST, and --port\n");
        usage(stderr);
        return 2;
    }
    /* sizes: a comma-separated list of 1..MAX_MSG */
    const char *p = sizes;
    do {
        char *end;
        errno = 0;
        unsigned long v = strtoul(p, &end, 10);
        if (errno || end == p || v == 0 || v > MAX_MSG || (*end != ',' && *end != '\0') || *p == '-' || *p == '+') {
            fprintf(stderr, "tcp_pingpong: bad --sizes '%s' (sizes 1..%u, comma-separated)\n", sizes, MAX_MSG);
            return 2;
        }
        p = *end == ',' ? end + 1 : end;
    } while (*p);
    if (p > sizes && p[-1] == ',') {
        fprintf(stderr, "tcp_pingpong: bad --sizes '%s'\n", sizes);
        return 2;
    }
    signal(SIGPIPE, SIG_IGN);
    return server ? run_server(port, once) : run_client(host, port, sizes, iters, csv);
}
