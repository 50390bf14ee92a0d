/* Where generated traffic goes: a pcap file, a live TCP connection, raw
 * frames through libnet, or nowhere (case counting). File and libnet modes
 * synthesize the whole conversation (both sides, handshake, close) with
 * the netio TCP flow; connect mode writes only the client's bytes. */
#include <errno.h>
#include <fcntl.h>
#include <libnet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"
#include "vitcp/pcap_writer.h"

#define CLIENT_PORT 40000

static struct tg_output *out_new(enum tg_out_kind kind)
{
    struct tg_output *o = calloc(1, sizeof *o);
    if (o) {
        o->kind = kind;
        o->fd = -1;
    }
    return o;
}

struct tg_output *tg_output_null(void) { return out_new(TG_OUT_NULL); }

struct tg_output *tg_output_pcap(const char *path, char *err, size_t errlen)
{
    return tg_output_capture(path, false, NULL, err, errlen);
}

void tg_out_comment(struct tg_output *o, const char *text)
{
    if (o->pw)
        vn_pcap_comment_next(o->pw, text);
}

struct tg_output *tg_output_capture(const char *path, bool pcapng, const char *section_comment,
                                    char *err, size_t errlen)
{
    struct tg_output *o = out_new(TG_OUT_PCAP);
    if (o == NULL) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    o->pw = vn_capture_open(path, pcapng ? VN_CAPTURE_PCAPNG : VN_CAPTURE_PCAP, section_comment, err,
                            errlen);
    if (o->pw == NULL) {
        free(o);
        return NULL;
    }
    o->sink = vn_pcap_sink(o->pw);
    return o;
}

static int libnet_emit(void *ctx, const uint8_t *frame, size_t len)
{
    return libnet_adv_write_link(ctx, frame, (uint32_t)len) == (int)len ? 0 : -1;
}

struct tg_output *tg_output_libnet(const char *iface, char *err, size_t errlen)
{
    char lerr[LIBNET_ERRBUF_SIZE] = "";
    libnet_t *l = libnet_init(LIBNET_LINK_ADV, iface, lerr);
    if (l == NULL) {
        size_t n = strlen(lerr); /* libnet ends its messages with a newline: keep one line */
        while (n && (lerr[n - 1] == '\n' || lerr[n - 1] == '\r'))
            lerr[--n] = '\0';
        snprintf(err, errlen, "cannot inject on interface %s: %s", iface, lerr);
        return NULL;
    }
    struct tg_output *o = out_new(TG_OUT_LIBNET);
    if (o == NULL) {
        libnet_destroy(l);
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    o->libnet = l;
    o->sink = (struct vn_sink){libnet_emit, l};
    return o;
}

/* connect() that gives up after timeout_ms (the kernel's own SYN retries
 * take minutes against a host that drops them). 0, or -1 with errno. */
static int connect_within(int fd, const struct sockaddr *sa, socklen_t len, uint32_t timeout_ms)
{
    int flags = fcntl(fd, F_GETFL);
    if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) != 0)
        return -1;
    if (connect(fd, sa, len) != 0) {
        if (errno != EINPROGRESS)
            return -1;
        struct pollfd p = {.fd = fd, .events = POLLOUT};
        int n;
        while ((n = poll(&p, 1, (int)timeout_ms)) < 0 && errno == EINTR)
            ;
        if (n == 0) {
            errno = ETIMEDOUT;
            return -1;
        }
        int soerr = 0;
        socklen_t sl = sizeof soerr;
        if (n < 0 || getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) != 0)
            return -1;
        if (soerr) {
            errno = soerr;
            return -1;
        }
    }
    return fcntl(fd, F_SETFL, flags);
}

struct tg_output *tg_output_connect(const char *host_port, uint32_t timeout_ms, char *err, size_t errlen)
{
    if (timeout_ms == 0)
        timeout_ms = TG_SEND_TIMEOUT_MS;
    char host[256];
    const char *colon = strrchr(host_port, ':');
    if (colon == NULL || colon == host_port || (size_t)(colon - host_port) >= sizeof host ||
        colon[1] == '\0') {
        snprintf(err, errlen, "--connect wants HOST:PORT, got \"%s\"", host_port);
        return NULL;
    }
    memcpy(host, host_port, (size_t)(colon - host_port));
    host[colon - host_port] = '\0';
    if (host[0] == '[' && host[strlen(host) - 1] == ']') { /* [v6]:port */
        memmove(host, host + 1, strlen(host));
        host[strlen(host) - 1] = '\0';
    }
    char *end;
    long port = strtol(colon + 1, &end, 10);
    if (*end != '\0' || port < 1 || port > 65535) {
        snprintf(err, errlen, "--connect: bad port \"%s\"", colon + 1);
        return NULL;
    }
    struct addrinfo hints = {.ai_socktype = SOCK_STREAM}, *ai;
    int rc = getaddrinfo(host, colon + 1, &hints, &ai);
    if (rc != 0) {
        snprintf(err, errlen, "--connect: cannot resolve %s: %s", host, gai_strerror(rc));
        return NULL;
    }
    int fd = -1, last_errno = 0;
    for (struct addrinfo *a = ai; a; a = a->ai_next) {
        fd = socket(a->ai_family, a->ai_socktype, a->ai_protocol);
        if (fd < 0) {
            last_errno = errno;
            continue;
        }
        if (connect_within(fd, a->ai_addr, a->ai_addrlen, timeout_ms) == 0)
            break;
        last_errno = errno;
        close(fd);
        fd = -1;
    }
    freeaddrinfo(ai);
    if (fd < 0) {
        snprintf(err, errlen, "--connect: cannot connect to %s: %s", host_port, strerror(last_errno));
        return NULL;
    }
    int one = 1; /* our writes become segments as written */
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    /* A target that stops reading fills its window; send() then returns
     * EAGAIN after this long instead of blocking for ever. */
    struct timeval tv = {.tv_sec = timeout_ms / 1000u, .tv_usec = (suseconds_t)(timeout_ms % 1000u) * 1000};
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    struct tg_output *o = out_new(TG_OUT_CONNECT);
    if (o == NULL) {
        close(fd);
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    o->fd = fd;
    o->send_timeout_ms = timeout_ms;
    return o;
}

static int fail(struct tg_output *o, const char *fmt, const char *detail)
{
    o->failed = 1;
    snprintf(o->err, sizeof o->err, fmt, detail);
    return -1;
}

static bool frames(const struct tg_output *o) { return o->kind == TG_OUT_PCAP || o->kind == TG_OUT_LIBNET; }

int tg_out_tcp_open(struct tg_output *o, bool ipv6, uint16_t client_port, uint16_t port, bool timestamps)
{
    if (!frames(o))
        return 0; /* connect mode: the socket is the connection */
    if (vn_tcp_flow_init(&o->flow, o->sink, ipv6 ? "fd00::1" : "10.0.0.1", client_port ? client_port : CLIENT_PORT,
                         ipv6 ? "fd00::2" : "10.0.0.2", port) != 0)
        return fail(o, "%s", "bad flow addresses");
    o->flow_open = true;
    o->flow.timestamps = timestamps;
    if (vn_tcp_handshake(&o->flow) != 0)
        return fail(o, "%s", "cannot write the TCP handshake");
    return 0;
}

static void pause_for(uint32_t us)
{
    struct timespec ts = {.tv_sec = us / 1000000u, .tv_nsec = (long)(us % 1000000u) * 1000};
    nanosleep(&ts, NULL);
}

static int write_all(struct tg_output *o, const uint8_t *p, size_t n)
{
    while (n) {
        ssize_t w = send(o->fd, p, n, MSG_NOSIGNAL);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK) {
                char why[160];
                snprintf(why, sizeof why, "%u ms with %zu bytes still to write (its receive window stayed full)",
                         o->send_timeout_ms, n);
                return fail(o, "the target read nothing for %s", why);
            }
            return fail(o, "write to the target failed: %s", strerror(errno));
        }
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

int tg_out_tcp_write(struct tg_output *o, int dir, const uint8_t *data, size_t len, size_t seg)
{
    if (o->kind == TG_OUT_NULL)
        return 0;
    if (o->kind == TG_OUT_CONNECT) {
        if (dir != VN_C2S)
            return 0; /* the target answers for itself */
        size_t step = seg ? seg : len;
        for (size_t done = 0; done < len; done += step) {
            size_t n = len - done < step ? len - done : step;
            if (write_all(o, data + done, n) != 0)
                return -1;
            if (o->pause_us)
                pause_for(o->pause_us);
        }
        return 0;
    }
    if (!o->flow_open)
        return fail(o, "%s", "TCP data before the connection was opened");
    if (seg == 0)
        return vn_tcp_send(&o->flow, (enum vn_dir)dir, data, len) == 0
                   ? 0 : fail(o, "%s", "cannot write TCP segments");
    for (size_t done = 0; done < len; done += seg) {
        size_t n = len - done < seg ? len - done : seg;
        if (vn_tcp_send_segment(&o->flow, (enum vn_dir)dir, data + done, n) != 0)
            return fail(o, "%s", "cannot write a TCP segment (over 65495 bytes?)");
    }
    return 0;
}

int tg_out_tcp_write_at(struct tg_output *o, int dir, uint64_t off, const uint8_t *data, size_t len)
{
    if (o->kind == TG_OUT_NULL)
        return 0;
    if (!frames(o))
        return fail(o, "%s", "a TCP retransmission needs -w or -i: over --connect the kernel owns TCP");
    size_t mss = o->flow.mss;
    for (size_t done = 0; done < len; done += mss) {
        size_t n = len - done < mss ? len - done : mss;
        if (vn_tcp_send_at(&o->flow, (enum vn_dir)dir, off + done, data + done, n) != 0)
            return fail(o, "%s", "cannot write a TCP retransmission");
    }
    return 0;
}

int tg_out_tcp_close(struct tg_output *o)
{
    if (o->kind == TG_OUT_CONNECT) {
        shutdown(o->fd, SHUT_WR);
        return 0;
    }
    if (!frames(o) || !o->flow_open)
        return 0;
    o->flow_open = false;
    return vn_tcp_close(&o->flow) == 0 ? 0 : fail(o, "%s", "cannot write the TCP close");
}

int tg_out_datagram(struct tg_output *o, bool udp, uint16_t port, bool ipv6, unsigned hop, const uint8_t *data,
                    size_t len)
{
    if (o->kind == TG_OUT_NULL)
        return 0;
    if (!frames(o))
        return fail(o, "%s", "PacketWay frames need -w or -i (--connect carries TCP only)");
    struct vn_endpoint a, b;
    /* hop 1: A -> router (::3), hop 2: router -> B, else A -> B */
    vn_endpoint_set(&a, hop == 2 ? (ipv6 ? "fd00::3" : "10.0.0.3") : (ipv6 ? "fd00::1" : "10.0.0.1"), (uint16_t)port);
    vn_endpoint_set(&b, hop == 1 ? (ipv6 ? "fd00::3" : "10.0.0.3") : (ipv6 ? "fd00::2" : "10.0.0.2"), (uint16_t)port);
    int rc = udp ? vn_udp_send(o->sink, &a, &b, data, len)
                 : vn_eth_send(o->sink, a.mac, b.mac, VW_EEP_ETHERTYPE, data, len);
    return rc == 0 ? 0 : fail(o, "%s", "cannot write a PacketWay frame (too large?)");
}

int tg_output_close(struct tg_output *o, char *err, size_t errlen)
{
    if (o == NULL)
        return 0;
    int rc = o->failed ? -1 : 0;
    if (o->failed && err)
        snprintf(err, errlen, "%s", o->err);
    if (o->pw && vn_pcap_close(o->pw) != 0 && rc == 0) {
        rc = -1;
        if (err)
            snprintf(err, errlen, "writing the capture file failed (disk full?)");
    }
    if (o->libnet)
        libnet_destroy(o->libnet);
    if (o->fd >= 0) {
        /* Wait for the target to close, so every byte is delivered before we exit. */
        char sink[4096];
        struct timeval tv = {.tv_sec = 5};
        setsockopt(o->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
        while (recv(o->fd, sink, sizeof sink, 0) > 0) {
        }
        close(o->fd);
    }
    free(o);
    return rc;
}
