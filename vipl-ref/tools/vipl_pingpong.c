/*
 * vipl-pingpong: latency (ping-pong) and bandwidth (stream) between two
 * processes over the VIPL API, for Send and RDMA Write, CRC on or off.
 *   vipl-pingpong --server --port P [--once]
 *   vipl-pingpong --client HOST --port P [--sizes 4,65536] [--op send|write]
 *                 [--crc on|off] [--iters N] [--count N] [--csv]
 * --iters: round trips of the latency phase (default 5000, 1000 or 200 by
 * size); --count: messages of the bandwidth phase (default 256 MiB worth,
 * 16..20000), small values for short recorded sessions.
 * CSV columns: op,crc,size,half_rtt_us,mbytes_per_s
 */
#include <arpa/inet.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tool_common.h"

#define MAX_MSG (1u << 20)
#define NRECV 32
#define NSEND 16
#define WAIT_MS 10000
#define DISC "vipl-pingpong"

enum { MODE_PINGPONG = 1, MODE_STREAM = 2, MODE_QUIT = 3 };

struct ctl { uint32_t mode, op, size, count; };
struct hello { uint64_t addr; uint32_t handle; uint32_t pad; };

struct side {
    struct tool_env env;
    VIP_VI_HANDLE vi;
    struct tool_mem descs, rbufs, sbuf, target;
    uint64_t peer_addr;
    VIP_MEM_HANDLE peer_handle;
};

static void usage(FILE *f)
{
    fprintf(f, "usage: vipl-pingpong --server --port P [--once] [--crc on|off]\n"
               "       vipl-pingpong --client HOST --port P [--sizes 4,65536] [--op send|write]\n"
               "                     [--crc on|off] [--iters N] [--count N] [--csv]\n");
}

/* The server stops on SIGTERM/SIGINT: its waits run in slices of
 * STOP_POLL_MS so it notices, cleans up and exits 0. */
#define STOP_POLL_MS 200
static volatile sig_atomic_t stop;
static void on_signal(int sig) { (void)sig; stop = 1; }

static int fail(const char *what, VIP_RETURN rc)
{
    fprintf(stderr, "vipl-pingpong: %s: %s\n", what, ViplReturnName(rc));
    return 1;
}

static VIP_DESCRIPTOR *rdesc(struct side *s, unsigned i) { return tool_desc(&s->descs, i); }
static VIP_DESCRIPTOR *sdesc(struct side *s, unsigned i) { return tool_desc(&s->descs, NRECV + i); }

static VIP_RETURN post_recv(struct side *s, unsigned i)
{
    tool_fill_recv(rdesc(s, i), (char *)s->rbufs.base + (size_t)i * MAX_MSG, s->rbufs.mh, MAX_MSG);
    return VipPostRecv(s->vi, rdesc(s, i), s->descs.mh);
}

/* Wait for one receive, check it, repost it; returns the descriptor index. */
static int recv_one(struct side *s, VIP_DESCRIPTOR **out)
{
    VIP_DESCRIPTOR *d;
    VIP_RETURN rc = VIP_TIMEOUT;
    for (unsigned waited = 0; rc == VIP_TIMEOUT && waited < WAIT_MS && !stop; waited += STOP_POLL_MS)
        rc = VipRecvWait(s->vi, STOP_POLL_MS, &d);
    if (stop)
        return -1;
    if (rc != VIP_SUCCESS || (d->CS.Status & VIP_STATUS_ERROR_MASK)) {
        fprintf(stderr, "vipl-pingpong: receive failed: %s status 0x%x\n", ViplReturnName(rc),
                rc == VIP_SUCCESS ? d->CS.Status : 0);
        return -1;
    }
    int i = (int)(((char *)d - (char *)s->descs.base) / 64);
    if (out)
        *out = d;
    return i;
}

static int send_one(struct side *s, unsigned slot, unsigned op, uint32_t len, int imm, int wait)
{
    VIP_DESCRIPTOR *d = sdesc(s, slot);
    tool_fill_send(d, op, s->sbuf.base, s->sbuf.mh, len, imm, len, s->peer_addr, s->peer_handle);
    VIP_RETURN rc = VipPostSend(s->vi, d, s->descs.mh);
    if (rc != VIP_SUCCESS)
        return fail("VipPostSend", rc);
    if (wait) {
        VIP_DESCRIPTOR *done;
        rc = VipSendWait(s->vi, WAIT_MS, &done);
        if (rc != VIP_SUCCESS || (done->CS.Status & VIP_STATUS_ERROR_MASK)) {
            fprintf(stderr, "vipl-pingpong: send failed: %s\n", ViplReturnName(rc));
            return 1;
        }
    }
    return 0;
}

static int side_setup(struct side *s)
{
    VIP_RETURN rc;
    if ((rc = tool_mem_alloc(&s->env, 64 * (NRECV + NSEND), 0, 0, &s->descs)) != VIP_SUCCESS ||
        (rc = tool_mem_alloc(&s->env, (size_t)NRECV * MAX_MSG, 0, 0, &s->rbufs)) != VIP_SUCCESS ||
        (rc = tool_mem_alloc(&s->env, MAX_MSG, 0, 0, &s->sbuf)) != VIP_SUCCESS ||
        (rc = tool_mem_alloc(&s->env, MAX_MSG, 1, 0, &s->target)) != VIP_SUCCESS)
        return fail("VipRegisterMem", rc);
    return 0;
}

static int exchange_hello(struct side *s, int first)
{
    struct hello h = {.addr = (uint64_t)(uintptr_t)s->target.base, .handle = s->target.mh};
    VIP_DESCRIPTOR *d;
    if (first) {
        memcpy(s->sbuf.base, &h, sizeof h);
        if (send_one(s, 0, VIP_CONTROL_OP_SENDRECV, sizeof h, 0, 1))
            return 1;
    }
    int i = recv_one(s, &d);
    if (i < 0 || d->CS.Length != sizeof h)
        return 1;
    struct hello peer;
    memcpy(&peer, (char *)s->rbufs.base + (size_t)i * MAX_MSG, sizeof peer);
    s->peer_addr = peer.addr;
    s->peer_handle = peer.handle;
    post_recv(s, (unsigned)i);
    if (!first) {
        memcpy(s->sbuf.base, &h, sizeof h);
        if (send_one(s, 0, VIP_CONTROL_OP_SENDRECV, sizeof h, 0, 1))
            return 1;
    }
    return 0;
}

static int serve_one(struct side *s)
{
    static uint8_t addr_buf[sizeof(VIP_NET_ADDRESS) + 16 + 64];
    VIP_NET_ADDRESS local = {0}, *remote = (VIP_NET_ADDRESS *)addr_buf;
    VIP_VI_ATTRIBUTES rattrs;
    VIP_CONN_HANDLE conn;
    VIP_RETURN rc;
    do
        rc = VipConnectWait(s->env.nic, &local, STOP_POLL_MS, remote, &rattrs, &conn);
    while (rc == VIP_TIMEOUT && !stop);
    if (stop)
        return 0;
    if (rc != VIP_SUCCESS)
        return fail("VipConnectWait", rc);
    VIP_VI_ATTRIBUTES a = {.ReliabilityLevel = rattrs.ReliabilityLevel, .MaxTransferSize = MAX_MSG,
                           .Ptag = s->env.ptag, .EnableRdmaWrite = VIP_TRUE};
    if ((rc = VipCreateVi(s->env.nic, &a, NULL, NULL, &s->vi)) != VIP_SUCCESS)
        return fail("VipCreateVi", rc);
    for (unsigned i = 0; i < NRECV; i++)
        post_recv(s, i);
    if ((rc = VipConnectAccept(conn, s->vi)) != VIP_SUCCESS)
        return fail("VipConnectAccept", rc);
    int err = exchange_hello(s, 0);
    while (!err) {
        VIP_DESCRIPTOR *d;
        int i = recv_one(s, &d);
        if (i < 0)
            break;
        struct ctl c;
        memcpy(&c, (char *)s->rbufs.base + (size_t)i * MAX_MSG, sizeof c);
        post_recv(s, (unsigned)i);
        c.mode = ntohl(c.mode), c.op = ntohl(c.op), c.size = ntohl(c.size), c.count = ntohl(c.count);
        if (c.mode == MODE_QUIT || c.size > MAX_MSG)
            break;
        unsigned op = c.op ? VIP_CONTROL_OP_RDMAWRITE : VIP_CONTROL_OP_SENDRECV;
        if (c.mode == MODE_PINGPONG) {
            for (uint32_t k = 0; k < c.count && !err; k++) {
                if ((i = recv_one(s, NULL)) < 0) {
                    err = 1;
                    break;
                }
                post_recv(s, (unsigned)i);
                err = send_one(s, 0, op, c.size, c.op != 0, 1);
            }
        } else {
            uint32_t expect = c.op ? 1 : c.count;
            for (uint32_t k = 0; k < expect && !err; k++) {
                if ((i = recv_one(s, NULL)) < 0)
                    err = 1;
                else
                    post_recv(s, (unsigned)i);
            }
            if (!err)
                err = send_one(s, 0, VIP_CONTROL_OP_SENDRECV, 4, 0, 1);
        }
    }
    VipDisconnect(s->vi);
    VIP_DESCRIPTOR *d;
    while (VipRecvDone(s->vi, &d) == VIP_SUCCESS)
        ;
    while (VipSendDone(s->vi, &d) == VIP_SUCCESS)
        ;
    VipDestroyVi(s->vi);
    s->vi = NULL;
    return 0;
}

static int send_ctl(struct side *s, uint32_t mode, uint32_t op, uint32_t size, uint32_t count)
{
    struct ctl c = {htonl(mode), htonl(op), htonl(size), htonl(count)};
    memcpy(s->sbuf.base, &c, sizeof c);
    return send_one(s, 0, VIP_CONTROL_OP_SENDRECV, sizeof c, 0, 1);
}

static int run_client(struct side *s, const char *host, long port, const char *sizes, unsigned op, const char *crc,
                      long iters, long stream_count, int csv)
{
    char hp[300];
    snprintf(hp, sizeof hp, "%s:%ld", host, port);
    VIP_NET_ADDRESS *remote = tool_addr(&s->env, hp, DISC);
    VIP_NET_ADDRESS *local = tool_addr(&s->env, "127.0.0.1", "client");
    if (!remote || !local) {
        fprintf(stderr, "vipl-pingpong: cannot resolve %s\n", host);
        free(remote);
        free(local);
        return 2;
    }
    VIP_VI_ATTRIBUTES a = {.ReliabilityLevel = VIP_SERVICE_RELIABLE_DELIVERY | VIP_SERVICE_DFC,
                           .MaxTransferSize = MAX_MSG, .Ptag = s->env.ptag, .EnableRdmaWrite = VIP_TRUE};
    VIP_RETURN rc = VipCreateVi(s->env.nic, &a, NULL, NULL, &s->vi);
    if (rc != VIP_SUCCESS)
        return fail("VipCreateVi", rc);
    for (unsigned i = 0; i < NRECV; i++)
        post_recv(s, i);
    VIP_VI_ATTRIBUTES ra;
    rc = VipConnectRequest(s->vi, local, remote, 5000, &ra);
    free(remote);
    free(local);
    if (rc != VIP_SUCCESS)
        return fail("VipConnectRequest", rc);
    if (exchange_hello(s, 1))
        return 1;
    const char *opname = op == VIP_CONTROL_OP_RDMAWRITE ? "write" : "send";
    if (csv)
        printf("op,crc,size,half_rtt_us,mbytes_per_s\n");
    else
        printf("%-6s %-4s %10s %12s %14s\n", "op", "crc", "size", "half_rtt_us", "mbytes_per_s");
    /* output that cannot be written stops the run: nothing would be seen */
    int err = tool_stdout_check("vipl-pingpong");
    char *list = strdup(sizes);
    for (char *tok = strtok(list, ","); tok && !err; tok = strtok(NULL, ",")) {
        uint32_t size = (uint32_t)strtoul(tok, NULL, 10);
        uint32_t n = iters > 0 ? (uint32_t)iters : size <= 4096 ? 5000 : size <= 65536 ? 1000 : 200;
        unsigned wop = op == VIP_CONTROL_OP_RDMAWRITE;
        /* latency */
        if ((err = send_ctl(s, MODE_PINGPONG, wop, size, n)))
            break;
        double t0 = tool_now_us();
        for (uint32_t k = 0; k < n && !err; k++) {
            err = send_one(s, 0, op, size, wop, 1);
            int i = err ? -1 : recv_one(s, NULL);
            if (i < 0)
                err = 1;
            else
                post_recv(s, (unsigned)i);
        }
        double half_rtt = (tool_now_us() - t0) / n / 2;
        /* bandwidth */
        uint32_t count = (uint32_t)((256u << 20) / (size ? size : 1));
        if (count > 20000)
            count = 20000;
        if (count < 16)
            count = 16;
        if (stream_count > 0)
            count = (uint32_t)stream_count;
        if (!err && (err = send_ctl(s, MODE_STREAM, wop, size, count)))
            break;
        t0 = tool_now_us();
        uint32_t posted = 0, done = 0;
        while (!err && done < count) {
            while (posted < count && posted - done < NSEND) {
                int imm = wop && posted == count - 1;
                err = send_one(s, posted % NSEND, op, size, imm, 0);
                posted++;
            }
            VIP_DESCRIPTOR *d;
            rc = VipSendWait(s->vi, WAIT_MS, &d);
            if (rc != VIP_SUCCESS || (d->CS.Status & VIP_STATUS_ERROR_MASK))
                err = 1;
            done++;
        }
        int i = err ? -1 : recv_one(s, NULL);
        if (i < 0)
            err = 1;
        else
            post_recv(s, (unsigned)i);
        double mbps = (double)size * count / (tool_now_us() - t0);
        if (err)
            break;
        if (csv)
            printf("%s,%s,%u,%.2f,%.1f\n", opname, crc, size, half_rtt, mbps);
        else
            printf("%-6s %-4s %10u %12.2f %14.1f\n", opname, crc, size, half_rtt, mbps);
        err = tool_stdout_check("vipl-pingpong");
    }
    free(list);
    if (!err)
        send_ctl(s, MODE_QUIT, 0, 0, 0);
    VipDisconnect(s->vi);
    return err;
}

/* --sizes: one or more sizes 1..MAX_MSG separated by single commas; an
 * empty list or an empty item ("," "4,,8" "4,") is an error. */
static int check_sizes(const char *sizes)
{
    const char *p = sizes;
    do {
        const char *q = p;
        while (*q >= '0' && *q <= '9')
            q++;
        if (q == p || (*q && *q != ',')) {
            fprintf(stderr, "vipl-pingpong: bad --sizes '%s' (sizes 1..%u separated by commas)\n", sizes, MAX_MSG);
            return 2;
        }
        unsigned long v = q - p > 8 ? MAX_MSG + 1ul : strtoul(p, NULL, 10);
        if (v == 0 || v > MAX_MSG) {
            fprintf(stderr, "vipl-pingpong: --sizes must be 1..%u\n", MAX_MSG);
            return 2;
        }
        p = *q ? q + 1 : q;
        if (*q && !*p) {
            fprintf(stderr, "vipl-pingpong: bad --sizes '%s' (sizes 1..%u separated by commas)\n", sizes, MAX_MSG);
            return 2;
        }
    } while (*p);
    return 0;
}

int main(int argc, char **argv)
{
    static const struct option opts[] = {
        {"server", no_argument, 0, 's'}, {"client", required_argument, 0, 'c'},
        {"port", required_argument, 0, 'p'}, {"sizes", required_argument, 0, 'z'},
        {"op", required_argument, 0, 'o'}, {"crc", required_argument, 0, 'r'},
        {"iters", required_argument, 0, 'i'}, {"csv", no_argument, 0, 'v'},
        {"count", required_argument, 0, 'n'},
        {"once", no_argument, 0, '1'}, {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
    int server = 0, csv = 0, once = 0, o;
    const char *host = NULL, *sizes = "4,65536", *crc = "on";
    long port = -1, iters = 0, stream_count = 0;
    unsigned op = VIP_CONTROL_OP_SENDRECV;
    opterr = 0;
    while ((o = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (o) {
        case 's': server = 1; break;
        case 'c': host = optarg; break;
        case 'p':
            if ((port = tool_parse_port(optarg)) < 0) {
                fprintf(stderr, "vipl-pingpong: bad port '%s'\n", optarg);
                return 2;
            }
            break;
        case 'z': sizes = optarg; break;
        case 'o':
            if (!strcmp(optarg, "send")) op = VIP_CONTROL_OP_SENDRECV;
            else if (!strcmp(optarg, "write")) op = VIP_CONTROL_OP_RDMAWRITE;
            else {
                fprintf(stderr, "vipl-pingpong: --op must be send or write\n");
                return 2;
            }
            break;
        case 'r':
            if (strcmp(optarg, "on") && strcmp(optarg, "off")) {
                fprintf(stderr, "vipl-pingpong: --crc must be on or off\n");
                return 2;
            }
            crc = optarg;
            break;
        case 'i':
            if ((iters = tool_parse_range(optarg, 1, 10000000)) < 0) {
                fprintf(stderr, "vipl-pingpong: --iters must be 1..10000000, got '%s'\n", optarg);
                return 2;
            }
            break;
        case 'n':
            if ((stream_count = tool_parse_range(optarg, 1, 1000000)) < 0) {
                fprintf(stderr, "vipl-pingpong: --count must be 1..1000000, got '%s'\n", optarg);
                return 2;
            }
            break;
        case 'v': csv = 1; break;
        case '1': once = 1; break;
        case 'h': usage(stdout); return 0;
        default: /* getopt's own message would name the program by its path */
            fprintf(stderr, "vipl-pingpong: unknown option or missing value: %s\n", argv[optind > 1 ? optind - 1 : 1]);
            usage(stderr);
            return 2;
        }
    }
    if (optind < argc || server == (host != NULL) || port < 0) {
        fprintf(stderr, "vipl-pingpong: give exactly one of --server / --client HOST, and --port\n");
        usage(stderr);
        return 2;
    }
    if (check_sizes(sizes))
        return 2;
    char dev[128];
    if (server)
        snprintf(dev, sizeof dev, "0.0.0.0:%ld,crc=%s", port, crc);
    else
        snprintf(dev, sizeof dev, "127.0.0.1:0,crc=%s", crc);
    if (server) { /* before the NIC listens: a SIGTERM from then on is a clean stop */
        struct sigaction sa = {.sa_handler = on_signal};
        sigaction(SIGTERM, &sa, NULL);
        sigaction(SIGINT, &sa, NULL);
    }
    struct side s = {0};
    VIP_RETURN rc = tool_open(&s.env, dev);
    if (rc != VIP_SUCCESS) {
        fprintf(stderr, "vipl-pingpong: cannot open NIC %s: %s\n", dev, ViplReturnName(rc));
        return 1;
    }
    int err = side_setup(&s);
    if (!err) {
        if (server) {
            do
                err = serve_one(&s);
            while (!once && !err && !stop);
            if (stop) /* asked to stop: a cut exchange is not a failure */
                err = 0;
        } else {
            err = run_client(&s, host, port, sizes, op, crc, iters, stream_count, csv);
        }
    }
    if (s.vi) {
        VIP_DESCRIPTOR *d;
        while (VipRecvDone(s.vi, &d) == VIP_SUCCESS || VipSendDone(s.vi, &d) == VIP_SUCCESS)
            ;
        VipDestroyVi(s.vi);
    }
    tool_mem_free(&s.env, &s.descs);
    tool_mem_free(&s.env, &s.rbufs);
    tool_mem_free(&s.env, &s.sbuf);
    tool_mem_free(&s.env, &s.target);
    tool_close(&s.env);
    if (tool_stdout_check("vipl-pingpong") && !err)
        err = 1;
    return err;
}
