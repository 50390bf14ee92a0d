/* vitcp-trafgen: every scenario decodes clean with the wire library; every
 * mutation produces the finding of the rule it names (and only documented
 * consequences); same seed, same bytes; cases regenerate exactly; split and
 * coalesced TCP carry the same stream; live mode delivers the file's bytes;
 * bad command lines exit 2. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <netinet/in.h>
#include <pcap/pcap.h>
#include <time.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "decode.h"
#include "vitcp/ift.h"
#include "vitcp/pcap_reader.h"
#include "vitcp/trafgen.h"

static char dir_path[] = "/tmp/vitcp-trafgen-test-XXXXXX";

static void path_in(char *out, size_t n, const char *name) { snprintf(out, n, "%s/%s", dir_path, name); }

static int gen(const char *scenario, const char *mutation, long target, const struct tg_params *p,
               const char *path, struct tg_result *r)
{
    const struct tg_scenario *sc = tg_find_scenario(scenario);
    assert_non_null(sc);
    const struct tg_mutation *m = mutation ? tg_find_mutation(mutation) : NULL;
    if (mutation)
        assert_non_null(m);
    char err[256];
    struct tg_output *o = tg_output_pcap(path, err, sizeof err);
    assert_non_null(o);
    int rc = tg_run(sc, m, target, p, o, r);
    assert_int_equal(tg_output_close(o, err, sizeof err), 0);
    return rc;
}

static void *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    void *b = malloc((size_t)n + 1);
    assert_non_null(b);
    assert_int_equal(fread(b, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    *len = (size_t)n;
    return b;
}

static void test_every_scenario_decodes_clean(void **state)
{
    (void)state;
    size_t n;
    const struct tg_scenario *s = tg_scenarios(&n);
    assert_true(n >= 16);
    struct tg_params p;
    tg_params_default(&p);
    for (size_t i = 0; i < n; i++) {
        if (strcmp(s[i].name, "vitcp-script") == 0)
            continue; /* needs a file: test_scenario_file */
        char path[128];
        path_in(path, sizeof path, "clean.pcap");
        struct tg_result r;
        assert_int_equal(gen(s[i].name, NULL, 0, &p, path, &r), 0);
        struct decoded d;
        assert_int_equal(decode_capture(path, s[i].proto, &d), 0);
        if (d.pdus != r.pdus || decoded_others(&d, NULL, 0) != 0 || d.gaps) {
            fprintf(stderr, "scenario %s: %u of %u PDUs decoded\n", s[i].name, d.pdus, r.pdus);
            decoded_print(&d);
            fail();
        }
        assert_true(r.pdus >= 2);
    }
}

/* Findings that follow from a mutation by design, beside the one it names. */
struct consequence {
    const char *mutation;
    const char *also[3];
};
static const struct consequence consequences[] = {
    /* The acceptor answers from its own state, not from the broken request. */
    {"VITCP-3.3-ONE-LEVEL", {"VITCP-3.3-LEVEL-MATCH"}},
    {"VITCP-3.3-DISC-LEN-MAX", {"VITCP-3.3-ACCEPT-DISC-COPY"}},
    {"VITCP-3.3-MTU-NONZERO", {"VITCP-3.3-MTU-LESSER"}},
    /* The sender keeps its own count after the jump; its next NOP shows it. */
    {"VITCP-3.2-MSG-NUM-SEQ", {"VITCP-3.2-NOP-MSG-NUM"}},
    /* After a framing error one direction stops decoding; the other side
     * still acknowledges messages the checker never saw. */
    {"VITCP-3.2-SEG-LEN-MIN", {"VITCP-3.2-ACK-ZERO-RD"}},
    {"VITCP-3.2-TYPE-KNOWN", {"VITCP-3.2-ACK-ZERO-RD"}},
    {"VITCP-3-RDMA-HDR-PRESENT", {"VITCP-3.2-ACK-ZERO-RD", "VITCP-3.2-MSG-NUM-SEQ"}}, /* the undecodable message is not counted */
    {"VITCP-3.2-SEG-LEN-HEADERS", {"VITCP-3.2-ACK-ZERO-RD"}},
    /* The cut ConnectRequest is undecodable; the acceptor answers it anyway. */
    {"VITCP-3-CE-HDR-PRESENT", {"VITCP-4-UNEXPECTED-CLOSE"}},
    /* Without a magic the first bytes are not an indication at all. */
    {"IFT-4.1-MAGIC", {"IFT-4.2-PHASE", "IFT-4.2-FRAMES-AFTER-PHASE1"}},
};

static void allowed_for(const char *mut, enum vw_req *allowed, unsigned *n)
{
    allowed[0] = tg_find_mutation(mut)->req;
    *n = 1;
    for (size_t i = 0; i < sizeof consequences / sizeof consequences[0]; i++)
        if (strcmp(consequences[i].mutation, mut) == 0)
            for (int k = 0; k < 3 && consequences[i].also[k]; k++)
                allowed[(*n)++] = vw_req_by_id(consequences[i].also[k]);
}

static void test_every_mutation_produces_its_finding(void **state)
{
    (void)state;
    size_t nm, ns;
    const struct tg_mutation *ms = tg_mutations(&nm);
    const struct tg_scenario *ss = tg_scenarios(&ns);
    assert_true(nm >= 50);
    struct tg_params p;
    tg_params_default(&p);
    unsigned bad = 0;
    for (size_t i = 0; i < nm; i++) {
        const char *name = tg_mutation_name(&ms[i]);
        unsigned tried = 0;
        for (size_t s = 0; s < ns; s++) {
            if (ss[s].proto != ms[i].proto)
                continue;
            char path[128];
            path_in(path, sizeof path, "mut.pcap");
            struct tg_result r;
            if (gen(ss[s].name, name, 0, &p, path, &r) != 0)
                continue; /* no target in this scenario */
            /* The first and the last eligible PDU. */
            for (int pass = 0; pass < 2; pass++) {
                if (pass == 1) {
                    unsigned last = r.eligible - 1;
                    assert_int_equal(gen(ss[s].name, name, (long)last, &p, path, &r), 0);
                }
                assert_int_equal(r.mutated, 1);
                struct decoded d;
                assert_int_equal(decode_capture(path, ss[s].proto, &d), 0);
                enum vw_req allowed[4];
                unsigned na;
                allowed_for(name, allowed, &na);
                if (!decoded_has(&d, ms[i].req) || decoded_others(&d, allowed, na) != 0) {
                    fprintf(stderr, "%s in %s (pass %d): findings\n", name, ss[s].name, pass);
                    decoded_print(&d);
                    bad++;
                }
            }
            tried++;
        }
        if (tried == 0) {
            fprintf(stderr, "mutation %s applies to no scenario\n", name);
            bad++;
        }
    }
    assert_int_equal(bad, 0); /* every failure above is printed before this */
}

static void test_same_seed_same_bytes(void **state)
{
    (void)state;
    struct tg_params p;
    tg_params_default(&p);
    p.seed = 4242;
    char a[128], b[128], c[128];
    path_in(a, sizeof a, "a.pcap");
    path_in(b, sizeof b, "b.pcap");
    path_in(c, sizeof c, "c.pcap");
    struct tg_result r;
    assert_int_equal(gen("vitcp-full", "VITCP-3.6-CRC-VALID", TG_TARGET_SEEDED, &p, a, &r), 0);
    long first = r.first_mutated_pdu;
    assert_int_equal(gen("vitcp-full", "VITCP-3.6-CRC-VALID", TG_TARGET_SEEDED, &p, b, &r), 0);
    assert_int_equal(r.first_mutated_pdu, first);
    p.seed = 4243;
    assert_int_equal(gen("vitcp-full", "VITCP-3.6-CRC-VALID", TG_TARGET_SEEDED, &p, c, &r), 0);
    size_t la, lb, lc;
    void *da = read_file(a, &la), *db = read_file(b, &lb), *dc = read_file(c, &lc);
    assert_int_equal(la, lb);
    assert_memory_equal(da, db, la);
    assert_true(la != lc || memcmp(da, dc, la) != 0); /* another seed, other payload bytes */
    free(da);
    free(db);
    free(dc);
}

static void test_cases_regenerate_exactly(void **state)
{
    (void)state;
    struct tg_params p;
    tg_params_default(&p);
    const struct tg_scenario *sc = tg_find_scenario("vitcp-full");
    size_t n = tg_case_count(sc, &p);
    assert_true(n > 60);
    const struct tg_mutation *m;
    long target;
    assert_int_equal(tg_case_get(sc, &p, 0, &m, &target), 0);
    assert_int_equal(tg_case_get(sc, &p, n + 1, &m, &target), 0);
    assert_int_equal(tg_case_get(sc, &p, 1, &m, &target), 1);
    assert_string_equal(tg_mutation_name(m), "VITCP-3.6-CRC-VALID");
    assert_int_equal(target, 0);
    assert_int_equal(tg_case_get(sc, &p, n, &m, &target), 1);
    /* A case through the command line equals the same mutation and target by hand. */
    char a[128], b[128], num[32];
    path_in(a, sizeof a, "case.pcap");
    path_in(b, sizeof b, "byhand.pcap");
    snprintf(num, sizeof num, "%zu", n / 2);
    assert_int_equal(tg_case_get(sc, &p, n / 2, &m, &target), 1);
    char *argv[] = {"vitcp-trafgen", "vitcp-full", "--case", num, "-w", a, "-q", NULL};
    assert_int_equal(tg_main(7, argv), 0);
    struct tg_result r;
    assert_int_equal(gen("vitcp-full", tg_mutation_name(m), target, &p, b, &r), 0);
    size_t la, lb;
    void *da = read_file(a, &la), *db = read_file(b, &lb);
    assert_int_equal(la, lb);
    assert_memory_equal(da, db, la);
    free(da);
    free(db);
    /* The sidecar names the mutation and how to replay it. */
    char meta[160];
    snprintf(meta, sizeof meta, "%s.meta", a);
    size_t lm;
    char *text = read_file(meta, &lm);
    text[lm] = '\0';
    assert_non_null(strstr(text, tg_mutation_name(m)));
    assert_non_null(strstr(text, "replay: vitcp-trafgen vitcp-full --seed 1"));
    free(text);
}

/* The client's byte stream of a capture, via the reader. */
struct stream {
    uint8_t *data;
    size_t len, cap;
};
static void collect(void *ctx, const struct vn_tcp_event *ev)
{
    struct stream *s = ctx;
    if (ev->kind != VN_TCP_DATA || ev->dir != VN_C2S)
        return;
    if (s->len + ev->len > s->cap) {
        s->cap = (s->len + ev->len) * 2;
        s->data = realloc(s->data, s->cap);
        assert_non_null(s->data);
    }
    memcpy(s->data + s->len, ev->data, ev->len);
    s->len += ev->len;
}
static void client_stream(const char *path, struct stream *s)
{
    memset(s, 0, sizeof *s);
    struct vn_reader_callbacks cb = {collect, NULL, NULL, s, NULL};
    char err[256];
    assert_int_equal(vn_pcap_read(path, &cb, NULL, NULL, err, sizeof err), 0);
}

static void test_split_and_coalesce_carry_the_same_stream(void **state)
{
    (void)state;
    struct tg_params p;
    tg_params_default(&p);
    char path[128];
    path_in(path, sizeof path, "plain.pcap");
    struct tg_result r;
    assert_int_equal(gen("vitcp-full", NULL, 0, &p, path, &r), 0);
    struct stream base;
    client_stream(path, &base);
    assert_true(base.len > 6000);
    struct {
        size_t seg;
        bool coalesce, ipv6, ts;
    } variants[] = {{7, false, false, false}, {1, false, false, true}, {9000, true, false, false},
                    {0, true, true, true}, {333, true, true, false}};
    for (size_t i = 0; i < sizeof variants / sizeof variants[0]; i++) {
        p.tcp_segment = variants[i].seg;
        p.coalesce = variants[i].coalesce;
        p.ipv6 = variants[i].ipv6;
        p.tcp_timestamps = variants[i].ts;
        assert_int_equal(gen("vitcp-full", NULL, 0, &p, path, &r), 0);
        struct stream s;
        client_stream(path, &s);
        assert_int_equal(s.len, base.len);
        assert_memory_equal(s.data, base.data, base.len);
        struct decoded d;
        assert_int_equal(decode_capture(path, TG_VITCP, &d), 0);
        assert_int_equal(d.pdus, r.pdus);
        assert_int_equal(decoded_others(&d, NULL, 0), 0);
        free(s.data);
    }
    free(base.data);
}

/* Loopback listener for live mode. */
struct listener {
    int fd;
    uint16_t port;
    struct stream got;
};
static void *accept_all(void *arg)
{
    struct listener *l = arg;
    int c = accept(l->fd, NULL, NULL);
    if (c < 0)
        return NULL;
    uint8_t buf[65536];
    ssize_t n;
    while ((n = recv(c, buf, sizeof buf, 0)) > 0) {
        if (l->got.len + (size_t)n > l->got.cap) {
            l->got.cap = (l->got.len + (size_t)n) * 2;
            l->got.data = realloc(l->got.data, l->got.cap);
        }
        memcpy(l->got.data + l->got.len, buf, (size_t)n);
        l->got.len += (size_t)n;
    }
    close(c);
    return NULL;
}

static void test_live_connect_delivers_the_file_bytes(void **state)
{
    (void)state;
    struct listener l = {0};
    l.fd = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(l.fd >= 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    assert_int_equal(bind(l.fd, (struct sockaddr *)&a, sizeof a), 0);
    assert_int_equal(listen(l.fd, 1), 0);
    socklen_t al = sizeof a;
    assert_int_equal(getsockname(l.fd, (struct sockaddr *)&a, &al), 0);
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, accept_all, &l), 0);
    char target[64], file[128];
    snprintf(target, sizeof target, "127.0.0.1:%u", ntohs(a.sin_port));
    path_in(file, sizeof file, "live.pcap");
    char *argv_live[] = {"vitcp-trafgen", "vitcp-send", "--seed", "9", "--tcp-segment", "100",
                         "--connect", target, "-q", NULL};
    assert_int_equal(tg_main(9, argv_live), 0);
    pthread_join(t, NULL);
    close(l.fd);
    char *argv_file[] = {"vitcp-trafgen", "vitcp-send", "--seed", "9", "-w", file, "-q", NULL};
    assert_int_equal(tg_main(7, argv_file), 0);
    struct stream s;
    client_stream(file, &s);
    assert_true(s.len > 3000);
    assert_int_equal(l.got.len, s.len);
    assert_memory_equal(l.got.data, s.data, s.len);
    free(s.data);
    free(l.got.data);
}

/* A target that accepts and then never reads: its window fills, and the
 * generator must give up after --send-timeout with exit 1 (issue 18: it
 * blocked for ever). The listener's small receive buffer fills quickly. */
static void test_live_connect_gives_up_on_a_target_that_never_reads(void **state)
{
    (void)state;
    int lfd = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(lfd >= 0);
    int small = 4096;
    assert_int_equal(setsockopt(lfd, SOL_SOCKET, SO_RCVBUF, &small, sizeof small), 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    assert_int_equal(bind(lfd, (struct sockaddr *)&a, sizeof a), 0);
    assert_int_equal(listen(lfd, 1), 0);
    socklen_t al = sizeof a;
    assert_int_equal(getsockname(lfd, (struct sockaddr *)&a, &al), 0);
    char target[64];
    snprintf(target, sizeof target, "127.0.0.1:%u", ntohs(a.sin_port));
    char *argv[] = {"vitcp-trafgen", "vitcp-send", "--msg-size", "1000000", "--count", "64",
                    "--send-timeout", "300", "--connect", target, "-q", NULL};
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    assert_int_equal(tg_main(11, argv), 1);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    /* a generous bound: it gave up instead of blocking until ctest's timeout */
    assert_true(t1.tv_sec - t0.tv_sec < 30);
    close(lfd); /* the accept queue's connection goes with it */
}

static void test_bad_command_lines_exit_2(void **state)
{
    (void)state;
    char file[128];
    path_in(file, sizeof file, "cli.pcap");
    struct {
        int argc;
        char *argv[10];
    } bad[] = {
        {1, {"vitcp-trafgen"}},
        {4, {"vitcp-trafgen", "no-such-scenario", "-w", file}},
        {4, {"vitcp-trafgen", "--bogus", "-w", file}},
        {2, {"vitcp-trafgen", "vitcp-full"}},
        {6, {"vitcp-trafgen", "vitcp-full", "-w", file, "--connect", "127.0.0.1:1"}},
        {5, {"vitcp-trafgen", "vitcp-full", "-w", file, "-s"}},
        {6, {"vitcp-trafgen", "vitcp-full", "-w", file, "--seed", "12abc"}},
        {6, {"vitcp-trafgen", "vitcp-full", "-w", file, "--break", "NOT-A-RULE"}},
        {6, {"vitcp-trafgen", "vitcp-full", "-w", file, "--break", "WARP-A-ADLER-VALID"}},
        {6, {"vitcp-trafgen", "vitcp-full", "-w", file, "--target", "3"}},
        {8, {"vitcp-trafgen", "vitcp-full", "-w", file, "--break", "VITCP-3.6-CRC-VALID", "--target", "9999"}},
        {6, {"vitcp-trafgen", "vitcp-full", "-w", file, "--case", "0"}},
        {6, {"vitcp-trafgen", "vitcp-full", "-w", file, "--case", "999999"}},
        {6, {"vitcp-trafgen", "vitcp-full", "-w", file, "--tcp-segment", "0"}},
        {6, {"vitcp-trafgen", "vitcp-full", "-w", file, "--port", "70000"}},
        {6, {"vitcp-trafgen", "vitcp-connect", "-w", file, "--break", "VITCP-3.2-DFC-DELAY"}},
        {5, {"vitcp-trafgen", "vitcp-full", "extra", "-w", file}},
        {4, {"vitcp-trafgen", "vitcp-full", "--connect", "nohostport"}},
        {3, {"vitcp-trafgen", "--list-cases", "nope"}},
        {6, {"vitcp-trafgen", "vitcp-full", "-w", file, "--mutate-rate", "0.5"}},
        {8, {"vitcp-trafgen", "vitcp-full", "-w", file, "--break", "VITCP-3.6-CRC-VALID", "--mutate-rate", "1.5"}},
        {6, {"vitcp-trafgen", "vitcp-full", "-w", file, "--rate", "0"}},
        {6, {"vitcp-trafgen", "vitcp-full", "-w", file, "--msg-size", "0"}},
        {6, {"vitcp-trafgen", "ift-session", "-w", file, "--ift-flags", "99999"}},
        {6, {"vitcp-trafgen", "vitcp-full", "-w", file, "--send-timeout", "0"}},
        {6, {"vitcp-trafgen", "vitcp-full", "-w", file, "--send-timeout", "5x"}},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int rc = tg_main(bad[i].argc, bad[i].argv);
        if (rc != 2) {
            fprintf(stderr, "case %zu exited %d\n", i, rc);
            fail();
        }
    }
    /* Runtime failures exit 1, with the reason. */
    char *unwritable[] = {"vitcp-trafgen", "vitcp-full", "-w", "/nonexistent-dir/x.pcap", NULL};
    assert_int_equal(tg_main(4, unwritable), 1);
    char *refused[] = {"vitcp-trafgen", "vitcp-full", "--connect", "127.0.0.1:1", NULL};
    assert_int_equal(tg_main(4, refused), 1);
    char *noiface[] = {"vitcp-trafgen", "eep-frames", "-i", "no-such-if0", NULL};
    assert_int_equal(tg_main(4, noiface), 1);
    char *eep_live[] = {"vitcp-trafgen", "eep-frames", "--connect", "127.0.0.1:1", NULL};
    assert_int_equal(tg_main(4, eep_live), 1);
    char *help[] = {"vitcp-trafgen", "--help", NULL};
    assert_int_equal(tg_main(2, help), 0);
}

static void test_mutate_rate_and_rate_limit(void **state)
{
    (void)state;
    struct tg_params p;
    tg_params_default(&p);
    p.count = 20;
    p.mutate_ppm = 200000;
    char a[128], b[128];
    path_in(a, sizeof a, "rate-a.pcap");
    path_in(b, sizeof b, "rate-b.pcap");
    struct tg_result r1, r2;
    assert_int_equal(gen("vitcp-full", "VITCP-3.6-CRC-VALID", TG_TARGET_RATE, &p, a, &r1), 0);
    assert_int_equal(gen("vitcp-full", "VITCP-3.6-CRC-VALID", TG_TARGET_RATE, &p, b, &r2), 0);
    /* About a fifth of the eligible PDUs, the same ones for the same seed. */
    assert_true(r1.mutated > r1.eligible / 10 && r1.mutated < r1.eligible / 3);
    assert_int_equal(r1.mutated, r2.mutated);
    size_t la, lb;
    void *da = read_file(a, &la), *db = read_file(b, &lb);
    assert_int_equal(la, lb);
    assert_memory_equal(da, db, la);
    free(da);
    free(db);
    struct decoded d;
    assert_int_equal(decode_capture(a, TG_VITCP, &d), 0);
    unsigned bad = 0;
    for (unsigned i = 0; i < d.count; i++)
        bad += d.req[i] == VW_REQ_VITCP_3_6_CRC_VALID;
    assert_int_equal(bad, r1.mutated);
    assert_int_equal(decoded_others(&d, (enum vw_req[]){VW_REQ_VITCP_3_6_CRC_VALID}, 1), 0);

    /* --rate paces live output: 8 PDUs at 200/s take at least 35 ms. */
    struct listener l = {0};
    l.fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    assert_int_equal(bind(l.fd, (struct sockaddr *)&sa, sizeof sa), 0);
    assert_int_equal(listen(l.fd, 1), 0);
    socklen_t al = sizeof sa;
    getsockname(l.fd, (struct sockaddr *)&sa, &al);
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, accept_all, &l), 0);
    char target[64];
    snprintf(target, sizeof target, "127.0.0.1:%u", ntohs(sa.sin_port));
    char *argv[] = {"vitcp-trafgen", "vitcp-connect", "--rate", "200", "--connect", target, "-q", NULL};
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    assert_int_equal(tg_main(7, argv), 0);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    pthread_join(t, NULL);
    close(l.fd);
    double ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
    assert_true(ms >= 14.0); /* 4 PDUs: the 4th is due 15 ms after the first */
    assert_int_equal(l.got.len, 164 + 24); /* the client's ConnectRequest and NOP */
    free(l.got.data);
}

/* --flip-rate: one bit per chosen PDU, chosen from the seed, reproducible,
 * and the damage shows in the decoder. */
static void test_flip_rate(void **state)
{
    (void)state;
    struct tg_params p;
    tg_params_default(&p);
    p.flip_ppm = 1000000;
    char a[128], b[128], v[128];
    path_in(a, sizeof a, "flip-a.pcap");
    path_in(b, sizeof b, "flip-b.pcap");
    path_in(v, sizeof v, "flip-valid.pcap");
    struct tg_result r1, r2, rv;
    assert_int_equal(gen("vitcp-full", NULL, TG_TARGET_SEEDED, &p, a, &r1), 0);
    assert_int_equal(gen("vitcp-full", NULL, TG_TARGET_SEEDED, &p, b, &r2), 0);
    assert_int_equal(r1.flipped, r1.pdus);
    assert_int_equal(r1.first_flipped_pdu, 0);
    size_t la, lb, lv;
    void *da = read_file(a, &la), *db = read_file(b, &lb);
    assert_int_equal(la, lb);
    assert_memory_equal(da, db, la);
    p.flip_ppm = 0;
    assert_int_equal(gen("vitcp-full", NULL, TG_TARGET_SEEDED, &p, v, &rv), 0);
    assert_int_equal(rv.flipped, 0);
    assert_int_equal(rv.first_flipped_pdu, -1);
    void *dv = read_file(v, &lv);
    assert_true(la == lv && memcmp(da, dv, la) != 0); /* same sizes, other bytes */
    struct decoded d;
    decode_capture(a, TG_VITCP, &d);
    assert_true(d.count > 0 || d.fatal != VW_REQ_NONE); /* every PDU has a flipped bit */
    free(da);
    free(db);
    free(dv);
}

/* -i: frames injected with libnet on the loopback interface arrive as the
 * file mode writes them. Skipped without CAP_NET_RAW. */
static void test_libnet_injection_on_loopback(void **state)
{
    (void)state;
    char err[PCAP_ERRBUF_SIZE];
    pcap_t *cap = pcap_open_live("lo", 65535, 0, 50, err);
    if (cap == NULL || pcap_datalink(cap) != DLT_EN10MB) {
        if (cap)
            pcap_close(cap);
        skip();
    }
    struct bpf_program prog;
    assert_int_equal(pcap_compile(cap, &prog, "tcp port 25995", 1, PCAP_NETMASK_UNKNOWN), 0);
    assert_int_equal(pcap_setfilter(cap, &prog), 0);
    pcap_freecode(&prog);
    assert_int_equal(pcap_setnonblock(cap, 1, err), 0);
    char *argv[] = {"vitcp-trafgen", "vitcp-send", "--port", "25995", "-i", "lo", "-q", NULL};
    int rc = tg_main(7, argv);
    if (rc == 1) { /* no permission to inject */
        pcap_close(cap);
        skip();
    }
    assert_int_equal(rc, 0);
    struct stream live = {0};
    struct vn_reader_callbacks cb = {collect, NULL, NULL, &live, NULL};
    struct vn_reader *rd = vn_reader_new(DLT_EN10MB, &cb, NULL);
    for (int idle = 0; idle < 10;) {
        struct pcap_pkthdr *h;
        const u_char *d;
        int got = pcap_next_ex(cap, &h, &d);
        if (got == 1) {
            vn_reader_feed(rd, 0, d, h->caplen, h->len);
            idle = 0;
        } else {
            idle++;
            struct timespec ts = {0, 20000000};
            nanosleep(&ts, NULL);
        }
    }
    vn_reader_finish(rd);
    vn_reader_free(rd);
    pcap_close(cap);
    char file[128];
    path_in(file, sizeof file, "inject.pcap");
    char *argv_file[] = {"vitcp-trafgen", "vitcp-send", "--port", "25995", "-w", file, "-q", NULL};
    assert_int_equal(tg_main(7, argv_file), 0);
    struct stream s;
    client_stream(file, &s);
    assert_int_equal(live.len, s.len);
    assert_memory_equal(live.data, s.data, s.len);
    free(live.data);
    free(s.data);
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void test_scenario_file(void **state)
{
    (void)state;
    char script[128], out[128];
    path_in(script, sizeof script, "steps.txt");
    path_in(out, sizeof out, "steps.pcap");
    write_text(script, "# a storage exchange\n"
                       "connect crc rdma-write rdma-read dfc\n"
                       "send c2s 2500 imm   # 3 segments with 1024-byte payloads\n"
                       "write c2s 100\n"
                       "read c2s 3000\n"
                       "nop s2c\n"
                       "send s2c 0\n"
                       "close\n");
    char err[256];
    struct tg_script *s = tg_script_load(script, err, sizeof err);
    assert_non_null(s);
    struct tg_params p;
    tg_params_default(&p);
    p.script = s;
    struct tg_result r;
    assert_int_equal(gen("vitcp-script", NULL, 0, &p, out, &r), 0);
    /* CE 2 + send 3 + write 1 + read request 1 + response 3 + nop 1 + empty send 1 */
    assert_int_equal(r.pdus, 12);
    struct decoded d;
    assert_int_equal(decode_capture(out, TG_VITCP, &d), 0);
    assert_int_equal(d.pdus, 12);
    assert_int_equal(decoded_others(&d, NULL, 0), 0);
    /* Mutations apply to scripted scenarios too. */
    assert_int_equal(gen("vitcp-script", "VITCP-3.6-CRC-VALID", 2, &p, out, &r), 0);
    assert_int_equal(decode_capture(out, TG_VITCP, &d), 0);
    assert_true(decoded_has(&d, VW_REQ_VITCP_3_6_CRC_VALID));
    tg_script_free(s);
    char *argv[] = {"vitcp-trafgen", "-f", script, "-w", out, "-q", NULL};
    assert_int_equal(tg_main(6, argv), 0);

    /* Errors name the file and line, and exit 2. */
    const char *bad[] = {
        "send c2s 10\n",                   /* no connect first */
        "connect\nsend sideways 10\n",     /* bad direction */
        "connect\nsend c2s ten\n",         /* bad count */
        "connect\nread c2s 0\n",           /* empty read */
        "connect\nfly c2s 1\n",            /* unknown step */
        "connect turbo\n",                  /* unknown option */
        "connect\nclose\nsend c2s 1\n",   /* after close */
        "connect\nconnect\n",              /* twice */
        "# nothing\n",                       /* empty */
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        write_text(script, bad[i]);
        err[0] = '\0';
        assert_null(tg_script_load(script, err, sizeof err));
        assert_non_null(strstr(err, script));
        assert_int_equal(tg_main(6, argv), 2);
    }
    char *missing[] = {"vitcp-trafgen", "-f", "/nonexistent/steps.txt", "-w", out, NULL};
    assert_int_equal(tg_main(5, missing), 2);
    char *noscript[] = {"vitcp-trafgen", "vitcp-script", "-w", out, "-q", NULL};
    assert_int_equal(tg_main(5, noscript), 1);
}

static void test_libnet_output_reports_bad_interface(void **state)
{
    (void)state;
    char err[256] = "";
    assert_null(tg_output_libnet("no-such-if0", err, sizeof err));
    assert_non_null(strstr(err, "no-such-if0"));
}

static int setup(void **state)
{
    (void)state;
    return mkdtemp(dir_path) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir_path);
    return system(cmd) == 0 ? 0 : -1;
}

/* pcapng: the run record in the section comment, the rule on the mutated
 * PDU's frame; the capture decodes like the pcap one. --ift-flags sets the
 * indication bits and so the CRCs frames carry. */
static void test_pcapng_and_ift_flags(void **state)
{
    (void)state;
    char ng[128];
    path_in(ng, sizeof ng, "m.pcapng");
    char *argv[] = {"vitcp-trafgen", "vitcp-full", "--break", "VITCP-3.6-CRC-VALID", "--target", "3",
                    "-q", "--no-meta", "-w", ng};
    assert_int_equal(tg_main(10, argv), 0);
    size_t len;
    char *b = read_file(ng, &len);
    assert_memory_equal(b, "\x0a\x0d\x0d\x0a", 4);
    b[len] = '\0';
    /* Texts inside binary: search with memmem. */
    assert_non_null(memmem(b, len, "seed: 1\n", 8));
    const char *replay = "replay: vitcp-trafgen vitcp-full --seed 1";
    assert_non_null(memmem(b, len, replay, strlen(replay)));
    const char *per_pdu = "VITCP-3.6-CRC-VALID: trailer CRC with every bit inverted (PDU 5, eligible PDU 3)";
    assert_non_null(memmem(b, len, per_pdu, strlen(per_pdu)));
    free(b);
    struct decoded d;
    assert_int_equal(decode_capture(ng, TG_VITCP, &d), 0);
    assert_true(decoded_has(&d, VW_REQ_VITCP_3_6_CRC_VALID));
    assert_int_equal(decoded_others(&d, (enum vw_req[]){VW_REQ_VITCP_3_6_CRC_VALID}, 1), 0);

    /* --ift-flags R,HC: header CRCs only; a clean decode, and no payload CRC to break. */
    char ift[128];
    path_in(ift, sizeof ift, "hc.pcap");
    char *argv_hc[] = {"vitcp-trafgen", "ift-session", "--ift-flags", "R,HC", "-q", "--no-meta", "-w", ift};
    assert_int_equal(tg_main(8, argv_hc), 0);
    assert_int_equal(decode_capture(ift, TG_IFT, &d), 0);
    assert_int_equal(decoded_others(&d, NULL, 0), 0);
    assert_true(d.pdus >= 9);
    struct tg_result r0, r1;
    struct tg_params p;
    tg_params_default(&p);
    assert_int_equal(gen("ift-session", NULL, 0, &p, ift, &r0), 0);
    p.ift_flags_set = true;
    p.ift_flags = VW_IFT_FLAG_R | VW_IFT_FLAG_HC;
    assert_int_equal(gen("ift-session", NULL, 0, &p, ift, &r1), 0);
    assert_int_equal(r1.bytes + 4 * (r1.pdus - 2), r0.bytes); /* 4 bytes less per frame */
    char *argv_pc[] = {"vitcp-trafgen", "ift-session", "--ift-flags", "R,HC", "--break", "IFT-5.1-PAYLOAD-CRC",
                       "-q", "-w", ift};
    assert_int_equal(tg_main(9, argv_pc), 2);
    char *argv_bad[] = {"vitcp-trafgen", "ift-session", "--ift-flags", "HC,XX", "-w", ift};
    assert_int_equal(tg_main(6, argv_bad), 2);
    char *argv_trail[] = {"vitcp-trafgen", "ift-session", "--ift-flags", "HC,", "-w", ift};
    assert_int_equal(tg_main(6, argv_trail), 2);
    char *argv_ph[] = {"vitcp-trafgen", "ift-session", "--ift-flags", "0x80000000", "-w", ift};
    assert_int_equal(tg_main(6, argv_ph), 2);
    char *argv_ng_live[] = {"vitcp-trafgen", "vitcp-send", "--pcapng", "--connect", "127.0.0.1:1"};
    assert_int_equal(tg_main(5, argv_ng_live), 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_scenario_decodes_clean),
        cmocka_unit_test(test_every_mutation_produces_its_finding),
        cmocka_unit_test(test_same_seed_same_bytes),
        cmocka_unit_test(test_cases_regenerate_exactly),
        cmocka_unit_test(test_split_and_coalesce_carry_the_same_stream),
        cmocka_unit_test(test_live_connect_delivers_the_file_bytes),
        cmocka_unit_test(test_live_connect_gives_up_on_a_target_that_never_reads),
        cmocka_unit_test(test_bad_command_lines_exit_2),
        cmocka_unit_test(test_mutate_rate_and_rate_limit),
        cmocka_unit_test(test_flip_rate),
        cmocka_unit_test(test_libnet_injection_on_loopback),
        cmocka_unit_test(test_scenario_file),
        cmocka_unit_test(test_pcapng_and_ift_flags),
        cmocka_unit_test(test_libnet_output_reports_bad_interface),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
