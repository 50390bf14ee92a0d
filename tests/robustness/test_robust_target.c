/*
 * `vitcp-conform run` against a hostile target: a server in this process
 * that closes at once, sends garbage, announces a 64 KiB segment and
 * stalls, answers with absurd CE fields, floods, resets, or never answers.
 * The tester (built with the sanitizers) must end every run with a verdict
 * (exit 1) or a usage/unreachable error (exit 2) in bounded time, with no
 * signal and no sanitizer report (seeded: VITCP_ROBUST_SEED).
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "robust_common.h"
#include "vitcp/vitcp.h"

enum mode { M_CLOSE, M_GARBAGE, M_STALL_BIG, M_FLOOD_JUNK, M_SILENT, M_BAD_CE, M_RESET, M_NOP_FLOOD, M_COUNT };
static const char *const mode_name[M_COUNT] = {"close at once", "garbage", "64 KiB segment announced, then silence",
                                               "accept then junk flood", "silent", "absurd ConnectAccept",
                                               "reset after the request", "NOP flood"};

static int listen_fd;
static uint16_t port;
static volatile int mode;
static volatile int stop_server;
static uint64_t seed;

static void send_all(int fd, const void *b, size_t n)
{
    const uint8_t *p = b;
    while (n) {
        ssize_t k = send(fd, p, n, MSG_NOSIGNAL);
        if (k <= 0)
            return;
        p += k, n -= (size_t)k;
    }
}

static void read_some(int fd, int ms)
{
    uint8_t b[4096];
    struct pollfd p = {fd, POLLIN, 0};
    if (poll(&p, 1, ms) > 0)
        (void)recv(fd, b, sizeof b, 0);
}

static size_t accept_seg(uint8_t *buf, size_t cap, bool absurd)
{
    struct vw_vitcp_enc e;
    vw_vitcp_enc_init(&e, VW_VITCP_CONNECT_ACCEPT, false);
    e.hdr.msg_num = 5000;
    e.ce.attrs = VW_VITCP_ATTR_RELIABLE_DELIVERY;
    e.ce.mtu = absurd ? 0 : 65536;
    if (absurd) {
        e.ce.calling_disc_len = 0xFFFF;
        e.ce.called_disc_len = 0x8000;
        e.ce.rdma_read_window = 0xFFFF;
        e.ce.attrs = 0xFFFF;
    }
    return vw_vitcp_encode(&e, buf, cap);
}

static void serve(int fd, struct rb_rng *r)
{
    static uint8_t buf[1 << 20];
    switch (mode) {
    case M_CLOSE:
        break;
    case M_GARBAGE: {
        size_t n = 1 + (size_t)rb_below(r, 3000);
        rb_fill(r, buf, n);
        send_all(fd, buf, n);
        read_some(fd, 200);
        break;
    }
    case M_STALL_BIG: {
        read_some(fd, 1000);
        size_t n = accept_seg(buf, sizeof buf, false);
        buf[2] = 0xFF, buf[3] = 0xFF; /* Segment Length 65535, 164 bytes sent */
        send_all(fd, buf, n);
        read_some(fd, 8000); /* until the tester gives up and closes */
        break;
    }
    case M_FLOOD_JUNK: {
        read_some(fd, 1000);
        size_t n = accept_seg(buf, sizeof buf, false);
        send_all(fd, buf, n);
        rb_fill(r, buf, sizeof buf);
        for (int i = 0; i < 4; i++)
            send_all(fd, buf, sizeof buf);
        break;
    }
    case M_SILENT:
        read_some(fd, 8000);
        break;
    case M_BAD_CE: {
        read_some(fd, 1000);
        size_t n = accept_seg(buf, sizeof buf, true);
        send_all(fd, buf, n);
        read_some(fd, 3000);
        break;
    }
    case M_RESET: {
        read_some(fd, 1000);
        struct linger l = {1, 0};
        setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof l);
        break;
    }
    case M_NOP_FLOOD: {
        read_some(fd, 1000);
        size_t n = accept_seg(buf, sizeof buf, false);
        struct vw_vitcp_enc e;
        vw_vitcp_enc_init(&e, VW_VITCP_NOP, false);
        e.hdr.msg_num = 5000;
        size_t k = vw_vitcp_encode(&e, buf + n, 64);
        size_t total = n;
        for (total = n + k; total + k <= sizeof buf; total += k)
            memcpy(buf + total, buf + n, k);
        send_all(fd, buf, total);
        break;
    }
    }
    close(fd);
}

static void *server(void *arg)
{
    (void)arg;
    struct rb_rng r = {seed};
    while (!stop_server) {
        struct pollfd p = {listen_fd, POLLIN, 0};
        if (poll(&p, 1, 100) <= 0)
            continue;
        int fd = accept(listen_fd, NULL, NULL);
        if (fd >= 0)
            serve(fd, &r);
    }
    return NULL;
}

/* Does some case's "frames" list in the JSON report hold a frame number? */
static bool names_a_frame(const char *json)
{
    for (const char *p = json; (p = strstr(p, "\"frames\": [")) != NULL; p++)
        if (p[11] >= '1' && p[11] <= '9')
            return true;
    return false;
}

static void test_hostile_targets(void **state)
{
    (void)state;
    seed = rb_seed("hostile target", 0x5EED0601u);
    listen_fd = socket(AF_INET, SOCK_STREAM, 0);
    int one = 1;
    setsockopt(listen_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    assert_int_equal(bind(listen_fd, (struct sockaddr *)&a, sizeof a), 0);
    assert_int_equal(listen(listen_fd, 16), 0);
    socklen_t l = sizeof a;
    getsockname(listen_fd, (struct sockaddr *)&a, &l);
    port = ntohs(a.sin_port);
    pthread_t th;
    pthread_create(&th, NULL, server, NULL);
    char dir[512], capture[700], json[700], target[64];
    rb_tmpdir(dir, sizeof dir, "target");
    snprintf(capture, sizeof capture, "%s/c.pcap", dir);
    snprintf(json, sizeof json, "%s/r.json", dir);
    snprintf(target, sizeof target, "127.0.0.1:%u", port);
    for (int m = 0; m < M_COUNT; m++) {
        mode = m;
        char *argv[] = {(char *)CONFORM_BIN, (char *)"run", (char *)"--target", target, (char *)"--only",
                        (char *)"accept-basic", (char *)"--only", (char *)"multi-segment", (char *)"--slack",
                        (char *)"500", (char *)"--capture", capture, (char *)"--json", json, NULL};
        struct rb_run res;
        rb_run(argv, 60.0, &res);
        fprintf(stderr, "# target that does '%s': exit %d in %.1f s\n", mode_name[m], res.status, res.seconds);
        if (res.timed_out)
            fail_msg("'%s': vitcp-conform run did not finish in 60 s", mode_name[m]);
        if (res.signal)
            fail_msg("'%s': vitcp-conform died from signal %d: %.2000s", mode_name[m], res.signal, res.err);
        if (rb_has_sanitizer_report(res.err))
            fail_msg("'%s': sanitizer report: %.3000s", mode_name[m], res.err);
        if (res.status != 1 && res.status != 2)
            fail_msg("'%s': exit %d (a hostile target cannot pass); stdout %.500s", mode_name[m], res.status,
                     res.out);
        if (res.status == 1) {
            /* the verdicts were written */
            size_t n;
            uint8_t *j = rb_read_file(json, &n);
            if (j == NULL || n == 0)
                fail_msg("'%s': no JSON report", mode_name[m]);
            /* bytes did arrive: the verdict says what, not "nothing arrived",
             * and names the frames they came in (issue 18, item 5) */
            char *text = malloc(n + 1); /* rb_read_file's bytes are not a string */
            assert_non_null(text);
            memcpy(text, j, n);
            text[n] = '\0';
            free(j);
            if ((m == M_GARBAGE || m == M_STALL_BIG) && (strstr(text, "nothing arrived") || !names_a_frame(text)))
                fail_msg("'%s': the report hides the bytes that arrived: %.1500s", mode_name[m], text);
            free(text);
        }
        rb_run_free(&res);
    }
    stop_server = 1;
    pthread_join(th, NULL);
    close(listen_fd);
    rb_rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_hostile_targets)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
