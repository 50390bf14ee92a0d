/*
 * A hostile peer against libvipl: a TCP client connects to `vipl-peer
 * --port P` (built with ASan+UBSan) and sends garbage, truncated CE
 * headers, absurd Segment Lengths, segments beyond the agreed MTU, RDMA
 * writes and reads with wild addresses, handles and lengths, broken
 * multi-segment messages, and closes abruptly mid-segment. After every
 * attack vipl-peer must still run, accept a fresh valid connection, echo a
 * Send and answer an RDMA read with the region's true contents (so it
 * never wrote outside the region either); at the end it must exit cleanly
 * on SIGTERM with no sanitizer report (LeakSanitizer included). Segments
 * are built with the wire library's encoder (vw_vitcp_encode).
 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "raw_client.h"
#include "robust_common.h"

#define DISC "robust"

struct peer {
    pid_t pid;
    uint16_t port;
    char dir[512], out[700], err[700];
    uint64_t region_addr;
    uint32_t region_handle, region_len;
};

static struct peer P;
static struct rb_rng R;

/* ------------------------------------------------------------ process */

static uint16_t free_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    bind(fd, (struct sockaddr *)&a, sizeof a);
    socklen_t l = sizeof a;
    getsockname(fd, (struct sockaddr *)&a, &l);
    close(fd);
    return ntohs(a.sin_port);
}

static char *slurp(const char *path)
{
    size_t n;
    uint8_t *b = rb_read_file(path, &n);
    if (b == NULL)
        return calloc(1, 1);
    char *s = realloc(b, n + 1);
    s[n] = '\0';
    return s;
}

static bool peer_running(void)
{
    int st;
    return waitpid(P.pid, &st, WNOHANG) == 0;
}

static int start_peer(void **state)
{
    (void)state;
    rb_tmpdir(P.dir, sizeof P.dir, "peer");
    snprintf(P.out, sizeof P.out, "%s/out", P.dir);
    snprintf(P.err, sizeof P.err, "%s/err", P.dir);
    R.s = rb_seed("hostile peer", 0x5EED0401u);
    for (int attempt = 0; attempt < 5; attempt++) {
        P.port = free_port();
        char port[8];
        snprintf(port, sizeof port, "%u", P.port);
        fflush(NULL);
        P.pid = fork();
        if (P.pid == 0) {
            int o = open(P.out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
            int e = open(P.err, O_WRONLY | O_CREAT | O_TRUNC, 0644);
            dup2(o, 1), dup2(e, 2);
            execl(PEER_BIN, PEER_BIN, "--port", port, "--disc", DISC, "--crc", "on", (char *)NULL);
            _exit(127);
        }
        for (int i = 0; i < 100 && peer_running(); i++) {
            char *out = slurp(P.out);
            char *ev = strstr(out, "event=region ");
            bool listening = strstr(out, "event=listening") != NULL;
            if (ev) {
                unsigned long long a;
                unsigned h, l;
                if (sscanf(ev, "event=region addr=0x%llx handle=%u len=%u", &a, &h, &l) == 3)
                    P.region_addr = a, P.region_handle = h, P.region_len = l;
            }
            free(out);
            if (listening && P.region_len)
                return 0;
            usleep(50000);
        }
        kill(P.pid, SIGKILL);
        waitpid(P.pid, NULL, 0);
    }
    char *err = slurp(P.err);
    fprintf(stderr, "vipl-peer did not start: %s\n", err);
    free(err);
    return -1;
}

/* Stop vipl-peer with SIGTERM: it must exit 0 with no sanitizer report
 * (LeakSanitizer runs at its exit). Returns a message, or NULL if clean. */
static char stop_msg[4096];
static const char *stop_peer_checked(void)
{
    int st = 0;
    if (P.pid <= 0)
        return NULL;
    kill(P.pid, SIGTERM);
    for (int i = 0; i < 100 && waitpid(P.pid, &st, WNOHANG) == 0; i++)
        usleep(50000);
    if (waitpid(P.pid, &st, WNOHANG) == 0) {
        kill(P.pid, SIGKILL);
        waitpid(P.pid, &st, 0);
        P.pid = 0;
        return "vipl-peer did not stop on SIGTERM";
    }
    P.pid = 0;
    char *err = slurp(P.err);
    const char *r = NULL;
    if (rb_has_sanitizer_report(err) || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        snprintf(stop_msg, sizeof stop_msg, "vipl-peer ended with status 0x%x; stderr:\n%.3900s", st, err);
        r = stop_msg;
    }
    free(err);
    return r;
}

static int stop_peer(void **state)
{
    (void)state;
    const char *why = stop_peer_checked(); /* only if the last test did not run */
    if (why)
        fprintf(stderr, "%s\n", why);
    rb_rmdir(P.dir);
    return 0;
}

/* --------------------------------------------------------- the client */

/* The raw VI/TCP client of tests/vipl/raw_client.h. What raw_send_enc and
 * raw_send_all return is not checked: the peer may close on us.
 * Sockets a test opened: closed by the teardown when an assertion
 * jumped out, so one failure does not hold the (serial) peer busy. */
static int open_fds[64];
static unsigned n_open;

static double t_start;
static double mono(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static int start_clock(void **state)
{
    (void)state;
    t_start = mono();
    return 0;
}

static int close_open_fds(void **state)
{
    (void)state;
    fprintf(stderr, "# %.2f s\n", mono() - t_start);
    for (unsigned i = 0; i < n_open; i++)
        close(open_fds[i]);
    n_open = 0;
    return 0;
}

static void untrack(int fd)
{
    for (unsigned i = 0; i < n_open; i++)
        if (open_fds[i] == fd) {
            open_fds[i] = open_fds[--n_open];
            return;
        }
}

static void sock_close(int fd)
{
    untrack(fd);
    close(fd);
}

static int tcp_connect(void)
{
    int fd = raw_connect(P.port);
    if (n_open < 64)
        open_fds[n_open++] = fd;
    return fd;
}

/* Close with a reset (abortive close). */
static void tcp_reset(int fd)
{
    untrack(fd);
    raw_reset(fd);
}

static void request(struct vw_vitcp_enc *e, uint32_t mtu, bool crc)
{
    static uint8_t opts[16];
    raw_request(e, DISC, mtu, crc); /* a CE with the CRC option carries the trailer */
    e->ce.attrs |= VW_VITCP_ATTR_RDMA_WRITE | VW_VITCP_ATTR_RDMA_READ;
    e->ce.rdma_read_window = 4;
    e->ce.calling_disc_len = 3;
    memcpy(e->ce.calling_disc, "bad", 3);
    if (crc) {
        e->ce.options_len = vw_vitcp_opts_build(opts, sizeof opts, true, false, true);
        e->ce.options = opts;
    }
}

/* A valid connection: ConnectRequest, ConnectAccept. */
static int open_conn(bool crc, uint32_t mtu)
{
    int fd = tcp_connect();
    struct vw_vitcp_enc e;
    request(&e, mtu, crc);
    raw_send_enc(fd, &e);
    static uint8_t buf[70000];
    struct vw_vitcp_seg s;
    if (!raw_next_seg(fd, false, buf, sizeof buf, &s) || s.hdr.type != VW_VITCP_CONNECT_ACCEPT)
        fail_msg("vipl-peer did not accept a valid ConnectRequest");
    return fd;
}

static void send_msg(int fd, bool crc, unsigned type, uint32_t msg, const uint8_t *data, size_t len,
                     uint64_t addr, uint32_t handle, uint32_t rlen)
{
    struct vw_vitcp_enc e;
    vw_vitcp_enc_init(&e, type, crc);
    e.hdr.msg_num = msg;
    e.payload = data;
    e.payload_len = len;
    e.rdma.addr = addr;
    e.rdma.handle = handle;
    e.rdma.length = rlen;
    raw_send_enc(fd, &e);
}

/* RDMA read [addr, addr+len) and collect the response bytes; true when
 * the whole response came. */
static bool rdma_read(int fd, bool crc, uint32_t msg, uint64_t addr, uint32_t len, uint8_t *out)
{
    send_msg(fd, crc, VW_VITCP_RDMA_READ_REQ, msg, NULL, 0, addr, P.region_handle, len);
    static uint8_t buf[70000];
    struct vw_vitcp_seg s;
    size_t got = 0;
    while (got < len) {
        if (!raw_next_seg(fd, crc, buf, sizeof buf, &s) || s.hdr.type != VW_VITCP_RDMA_READ_RESP)
            return false;
        if (s.hdr.data_offset + s.payload_len > len)
            fail_msg("read response beyond the requested length");
        memcpy(out + s.hdr.data_offset, s.payload, s.payload_len);
        got += s.payload_len;
        if (s.hdr.flags & VW_VITCP_FLAG_EOM)
            break;
    }
    return got == len;
}

/* vipl-peer survived: it runs, accepts, echoes and reads its region back
 * as it must be (byte i = i & 0xFF, refilled at every connection). */
static void check_alive(const char *after)
{
    if (!peer_running()) {
        char *err = slurp(P.err);
        fail_msg("vipl-peer died after %s; stderr:\n%.3000s", after, err);
    }
    bool crc = rb_below(&R, 2);
    int fd = open_conn(crc, 65536);
    uint8_t data[300], back[300];
    rb_fill(&R, data, sizeof data);
    send_msg(fd, crc, VW_VITCP_SEND, RAW_MSG0 + 1, data, sizeof data, 0, 0, 0);
    static uint8_t buf[70000];
    struct vw_vitcp_seg s;
    if (!raw_next_seg(fd, crc, buf, sizeof buf, &s) || s.hdr.type != VW_VITCP_SEND || s.payload_len != sizeof data ||
        memcmp(s.payload, data, sizeof data) != 0)
        fail_msg("vipl-peer did not echo a Send after %s", after);
    uint32_t off = (uint32_t)rb_below(&R, P.region_len - sizeof back);
    if (!rdma_read(fd, crc, RAW_MSG0 + 2, P.region_addr + off, sizeof back, back))
        fail_msg("vipl-peer did not answer an RDMA read after %s", after);
    for (size_t i = 0; i < sizeof back; i++)
        if (back[i] != (uint8_t)((off + i) & 0xFF))
            fail_msg("region byte %zu is 0x%02x after %s", off + i, back[i], after);
    tcp_reset(fd);
    char *err = slurp(P.err);
    if (rb_has_sanitizer_report(err))
        fail_msg("vipl-peer sanitizer report after %s:\n%.3000s", after, err);
    free(err);
}

/* ------------------------------------------------------------ attacks */

static void test_baseline(void **state)
{
    (void)state;
    check_alive("nothing");
    /* the valid RDMA path works, so the wild ones below test real checks */
    int fd = open_conn(false, 65536);
    uint8_t pat[1000], back[1000];
    rb_fill(&R, pat, sizeof pat);
    send_msg(fd, false, VW_VITCP_RDMA_WRITE, RAW_MSG0 + 1, pat, sizeof pat, P.region_addr + 5000,
             P.region_handle, sizeof pat);
    assert_true(rdma_read(fd, false, RAW_MSG0 + 2, P.region_addr + 5000, sizeof back, back));
    assert_memory_equal(back, pat, sizeof pat);
    tcp_reset(fd);
}

static void test_garbage_before_ce(void **state)
{
    (void)state;
    for (int i = 0; i < 6; i++) {
        int fd = tcp_connect();
        uint8_t junk[2000];
        size_t n = 1 + (size_t)rb_below(&R, sizeof junk);
        rb_fill(&R, junk, n);
        if (i == 0)
            memset(junk, 0xFF, n); /* Segment Length 0xFFFF, version 0xFF */
        raw_send_all(fd, junk, n);
        if (i % 2)
            tcp_reset(fd);
        else {
            raw_wait_close(fd, 1000); /* a junk "header" may announce bytes the peer then waits for */
            sock_close(fd);
        }
    }
    check_alive("garbage before the CE exchange");
}

static void test_truncated_ce(void **state)
{
    (void)state;
    static uint8_t buf[1000];
    struct vw_vitcp_enc e;
    request(&e, 65536, true);
    size_t n = raw_encode(&e, buf, sizeof buf);
    static const size_t cuts[] = {1, 3, 4, 23, 24, 25, 100, 163, 164};
    for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; i++) {
        int fd = tcp_connect();
        raw_send_all(fd, buf, cuts[i] < n ? cuts[i] : n - 1);
        if (i % 2)
            tcp_reset(fd);
        else
            sock_close(fd);
    }
    /* A CE whose Segment Length is below the CE header, or far beyond it,
     * or whose discriminator lengths exceed 64. */
    static const uint16_t lens[] = {24, 40, 163, 0xFFFF};
    for (size_t i = 0; i < sizeof lens / sizeof lens[0]; i++) {
        request(&e, 65536, false);
        e.keep_seg_len = true;
        e.hdr.seg_len = lens[i];
        int fd = tcp_connect();
        raw_send_enc(fd, &e);
        raw_wait_close(fd, 3000);
        sock_close(fd);
    }
    request(&e, 65536, false);
    e.ce.called_disc_len = 0xFFFF;
    e.ce.calling_disc_len = 0x8000;
    int fd = tcp_connect();
    raw_send_enc(fd, &e);
    raw_wait_close(fd, 3000);
    sock_close(fd);
    check_alive("truncated and mis-sized CE headers");
}

static void test_absurd_lengths_after_connect(void **state)
{
    (void)state;
    static const uint16_t lens[] = {0, 4, 23, 24, 39, 40, 0xFFFF, 65000};
    for (size_t i = 0; i < sizeof lens / sizeof lens[0]; i++) {
        bool crc = i % 2;
        int fd = open_conn(crc, 65536);
        struct vw_vitcp_enc e;
        uint8_t data[100];
        rb_fill(&R, data, sizeof data);
        vw_vitcp_enc_init(&e, i % 3 == 0 ? VW_VITCP_RDMA_WRITE : VW_VITCP_SEND, crc);
        e.hdr.msg_num = RAW_MSG0 + 1;
        e.payload = data;
        e.payload_len = sizeof data;
        e.rdma.addr = P.region_addr;
        e.rdma.handle = P.region_handle;
        e.rdma.length = sizeof data;
        e.keep_seg_len = true;
        e.hdr.seg_len = lens[i];
        raw_send_enc(fd, &e);
        if (lens[i] >= 24) {
            /* A length the peer may wait on (the bytes after a short
             * segment are read as the next header): end our side
             * mid-segment; the peer must give up and close. */
            if (lens[i] > 200 && i % 2) {
                tcp_reset(fd);
                continue;
            }
            shutdown(fd, SHUT_WR);
        }
        if (!raw_wait_close(fd, 5000))
            fail_msg("Segment Length %u (%s): vipl-peer did not close", lens[i], i % 3 == 0 ? "RdmaWrite" : "Send");
        sock_close(fd);
    }
    check_alive("absurd Segment Lengths");
}

static void test_beyond_mtu(void **state)
{
    (void)state;
    /* Agree on a 1024-byte MTU, then send a 60000-byte message in one
     * segment, and one in 40 segments. */
    static uint8_t data[65000];
    rb_fill(&R, data, sizeof data);
    int fd = open_conn(false, 1024);
    send_msg(fd, false, VW_VITCP_SEND, RAW_MSG0 + 1, data, 60000, 0, 0, 0);
    assert_true(raw_wait_close(fd, 5000));
    sock_close(fd);
    fd = open_conn(false, 1024);
    for (uint32_t k = 0; k < 40; k++) {
        struct vw_vitcp_enc e;
        vw_vitcp_enc_init(&e, VW_VITCP_SEND, false);
        e.hdr.msg_num = RAW_MSG0 + 1;
        e.hdr.data_offset = k * 1000;
        e.hdr.flags = k == 39 ? VW_VITCP_FLAG_EOM : 0;
        e.payload = data;
        e.payload_len = 1000;
        raw_send_enc(fd, &e);
    }
    assert_true(raw_wait_close(fd, 5000));
    sock_close(fd);
    /* An RDMA write over the MTU into the region */
    fd = open_conn(false, 1024);
    send_msg(fd, false, VW_VITCP_RDMA_WRITE, RAW_MSG0 + 1, data, 30000, P.region_addr, P.region_handle, 30000);
    assert_true(raw_wait_close(fd, 5000));
    sock_close(fd);
    check_alive("messages beyond the MTU");
}

static void test_wild_rdma(void **state)
{
    (void)state;
    const uint64_t a = P.region_addr, l = P.region_len;
    struct {
        uint64_t addr;
        uint32_t handle, len;
    } const wild[] = { /* the last one is a valid zero-length read (a legal answer: an empty response) */
        {0, P.region_handle, 16},
        {a - 1, P.region_handle, 16},
        {a + l - 8, P.region_handle, 16},
        {a + l, P.region_handle, 1},
        {a, P.region_handle, (uint32_t)l + 1},
        {a, P.region_handle, 0xFFFFFFFFu},
        {0xFFFFFFFFFFFFFFF0ull, P.region_handle, 0x20},
        {a, P.region_handle + 1, 16},
        {a, 0, 16},
        {a, 0xFFFFFFFFu, 16},
        {a + 100, P.region_handle, 0},
    };
    uint8_t data[64];
    memset(data, 0xEE, sizeof data);
    for (size_t i = 0; i < sizeof wild / sizeof wild[0]; i++) {
        for (int op = 0; op < 2; op++) {
            int fd = open_conn(false, 65536);
            if (op == 0) /* write 16..64 bytes (RDMA Length says otherwise) */
                send_msg(fd, false, VW_VITCP_RDMA_WRITE, RAW_MSG0 + 1, data, 16 + (i % 3) * 24, wild[i].addr,
                         wild[i].handle, wild[i].len);
            else
                send_msg(fd, false, VW_VITCP_RDMA_READ_REQ, RAW_MSG0 + 1, NULL, 0, wild[i].addr, wild[i].handle,
                         wild[i].len);
            /* Refused at RD: the peer answers as A8 says (or raises the
             * error) and closes (docs/vipl.md); it must not read or write
             * outside the region. */
            if (op == 1 && wild[i].len == 0) {
                static uint8_t buf[70000];
                struct vw_vitcp_seg sg;
                if (!raw_next_seg(fd, false, buf, sizeof buf, &sg) || sg.hdr.type != VW_VITCP_RDMA_READ_RESP ||
                    sg.payload_len != 0)
                    fail_msg("a zero-length RDMA read got no empty response");
            } else if (!raw_wait_close(fd, 5000))
                fail_msg("vipl-peer kept the connection after a wild RDMA %s addr 0x%llx handle %u length %u",
                         op ? "read" : "write", (unsigned long long)wild[i].addr, wild[i].handle, wild[i].len);
            tcp_reset(fd);
            if (!peer_running())
                fail_msg("vipl-peer died on RDMA %s addr 0x%llx handle %u length %u",
                         op ? "read" : "write", (unsigned long long)wild[i].addr, wild[i].handle, wild[i].len);
        }
    }
    check_alive("RDMA with wild addresses, handles and lengths");
}

static void test_broken_messages(void **state)
{
    (void)state;
    uint8_t data[500];
    rb_fill(&R, data, sizeof data);
    struct vw_vitcp_enc e;
    /* 1: wrong data offsets in a multi-segment message */
    int fd = open_conn(false, 65536);
    vw_vitcp_enc_init(&e, VW_VITCP_SEND, false);
    e.hdr.msg_num = RAW_MSG0 + 1, e.hdr.flags = 0, e.payload = data, e.payload_len = 100;
    raw_send_enc(fd, &e);
    e.hdr.data_offset = 0xFFFFFF00u, e.hdr.flags = VW_VITCP_FLAG_EOM;
    raw_send_enc(fd, &e);
    assert_true(raw_wait_close(fd, 5000));
    sock_close(fd);
    /* 2: message numbers jump, unknown type, version 2, a second request */
    static const int variant[] = {0, 1, 2, 3, 4};
    for (size_t v = 0; v < sizeof variant / sizeof variant[0]; v++) {
        fd = open_conn(false, 65536);
        vw_vitcp_enc_init(&e, VW_VITCP_SEND, false);
        e.hdr.msg_num = RAW_MSG0 + 1;
        e.payload = data;
        e.payload_len = 50;
        if (v == 0)
            e.hdr.msg_num = RAW_MSG0 + 77;
        if (v == 1)
            e.hdr.type = 31;
        if (v == 2)
            e.hdr.version = 2;
        if (v == 3)
            request(&e, 65536, false);
        if (v == 4) { /* a read response nobody asked for */
            vw_vitcp_enc_init(&e, VW_VITCP_RDMA_READ_RESP, false);
            e.hdr.msg_num = 12345, e.payload = data, e.payload_len = 200;
        }
        raw_send_enc(fd, &e);
        raw_wait_close(fd, 3000);
        tcp_reset(fd);
    }
    /* 3: mid-segment abrupt close of a valid Send */
    static uint8_t buf[2000];
    vw_vitcp_enc_init(&e, VW_VITCP_SEND, false);
    e.hdr.msg_num = RAW_MSG0 + 1, e.payload = data, e.payload_len = sizeof data;
    size_t n = raw_encode(&e, buf, sizeof buf);
    for (size_t cut = 1; cut < n; cut += 97) {
        fd = open_conn(false, 65536);
        raw_send_all(fd, buf, cut);
        if (cut % 2)
            tcp_reset(fd);
        else
            sock_close(fd);
    }
    check_alive("broken messages and abrupt closes");
}

static void test_random_bytes_after_connect(void **state)
{
    (void)state;
    for (int i = 0; i < 8; i++) {
        bool crc = rb_below(&R, 2);
        int fd = open_conn(crc, 65536);
        /* a valid Send first, so the junk lands in a live connection */
        uint8_t junk[3000];
        send_msg(fd, crc, VW_VITCP_SEND, RAW_MSG0 + 1, junk, 10, 0, 0, 0);
        size_t n = 1 + (size_t)rb_below(&R, sizeof junk);
        rb_fill(&R, junk, n);
        if (n >= 4 && rb_below(&R, 2)) { /* looks like a header: version 1, a known type */
            junk[0] = 1;
            junk[1] = (uint8_t)rb_below(&R, 9) | 0x80;
        }
        raw_send_all(fd, junk, n);
        raw_wait_close(fd, 300);
        tcp_reset(fd);
    }
    check_alive("random bytes in live connections");
}

/* A client that completes the CE exchange and then sends nothing must not
 * shut the others out (issue 18, item 2: vipl-peer still answered
 * VIP_NO_MATCH at 40 s): with two silent clients connected, a real one is
 * accepted, echoed and served an RDMA read at once. */
static void test_silent_clients_do_not_block(void **state)
{
    (void)state;
    int silent1 = open_conn(false, 65536);
    int silent2 = open_conn(true, 65536);
    double t0 = mono();
    check_alive("two silent clients");
    if (mono() - t0 > 3.0)
        fail_msg("a real client waited %.1f s behind two silent ones", mono() - t0);
    sock_close(silent1);
    sock_close(silent2);
}

/* Last: the peer stops cleanly, leak-free, after all of the above. */
static void test_peer_exits_clean(void **state)
{
    (void)state;
    const char *why = stop_peer_checked();
    if (why)
        fail_msg("%s", why);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_baseline, start_clock, close_open_fds),
        cmocka_unit_test_setup_teardown(test_garbage_before_ce, start_clock, close_open_fds),
        cmocka_unit_test_setup_teardown(test_truncated_ce, start_clock, close_open_fds),
        cmocka_unit_test_setup_teardown(test_absurd_lengths_after_connect, start_clock, close_open_fds),
        cmocka_unit_test_setup_teardown(test_beyond_mtu, start_clock, close_open_fds),
        cmocka_unit_test_setup_teardown(test_wild_rdma, start_clock, close_open_fds),
        cmocka_unit_test_setup_teardown(test_broken_messages, start_clock, close_open_fds),
        cmocka_unit_test_setup_teardown(test_random_bytes_after_connect, start_clock, close_open_fds),
        cmocka_unit_test_setup_teardown(test_silent_clients_do_not_block, start_clock, close_open_fds),
        cmocka_unit_test(test_peer_exits_clean),
    };
    return cmocka_run_group_tests(tests, start_peer, stop_peer);
}
