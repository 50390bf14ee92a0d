/* Lint: a good VI/TCP capture has zero errors; each malformed capture fails
 * exactly the named rule; garbage files give a clear error. Captures are
 * built here with netio's writer and the wire library's encoder. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include "conform/lint.h"
#include "vitcp/pcap_writer.h"
#include "vitcp/vitcp.h"

enum flaw { GOOD, WRONG_OFFSET, BAD_CRC, MTU_GREATER, DATA_AFTER_REJECT };

static void put(struct vn_tcp_flow *f, enum vn_dir dir, struct vw_vitcp_enc *enc)
{
    uint8_t buf[70000];
    size_t n = vw_vitcp_encode(enc, buf, sizeof buf);
    assert_true(n > 0);
    assert_int_equal(vn_tcp_send(f, dir, buf, n), 0);
}

static void ce(struct vw_vitcp_enc *e, unsigned type, uint32_t mtu, uint8_t *opts)
{
    vw_vitcp_enc_init(e, type, false);
    e->ce.attrs = VW_VITCP_ATTR_RELIABLE_DELIVERY;
    e->ce.mtu = mtu;
    e->ce.rdma_read_window = 0; /* no RDMA Read Enable (V18) */
    e->ce.options = opts;
    e->ce.options_len = vw_vitcp_opts_build(opts, 16, true, false, true);
    e->trailer = VW_VITCP_TRAILER_CRC;
}

static void write_capture(const char *path, enum flaw flaw, unsigned messages)
{
    char err[256];
    struct vn_pcap_writer *w = vn_pcap_open(path, err, sizeof err);
    assert_non_null(w);
    struct vn_tcp_flow f;
    assert_int_equal(vn_tcp_flow_init(&f, vn_pcap_sink(w), "10.0.0.1", 40000, "10.0.0.2", 5995), 0);
    assert_int_equal(vn_tcp_handshake(&f), 0);
    uint8_t opts[16];
    struct vw_vitcp_enc e;
    ce(&e, VW_VITCP_CONNECT_REQUEST, 65536, opts);
    e.hdr.msg_num = 100;
    put(&f, VN_C2S, &e);
    if (flaw == DATA_AFTER_REJECT) {
        vw_vitcp_enc_init(&e, VW_VITCP_CONNECT_REJECT, false);
        put(&f, VN_S2C, &e);
        vw_vitcp_enc_init(&e, VW_VITCP_SEND, false);
        e.hdr.msg_num = 101;
        put(&f, VN_C2S, &e);
        vn_tcp_close(&f);
        vn_pcap_close(w);
        return;
    }
    ce(&e, VW_VITCP_CONNECT_ACCEPT, flaw == MTU_GREATER ? 70000 : 65536, opts);
    e.hdr.msg_num = 500;
    e.hdr.msg_ack = 100;
    put(&f, VN_S2C, &e);
    static uint8_t data[3000];
    for (size_t i = 0; i < sizeof data; i++)
        data[i] = (uint8_t)i;
    for (unsigned m = 0; m < messages; m++) {
        /* A two-segment Send from each side. */
        for (int dir = 0; dir < 2; dir++) {
            for (int s = 0; s < 2; s++) {
                vw_vitcp_enc_init(&e, VW_VITCP_SEND, true);
                e.hdr.msg_num = (dir ? 500u : 100u) + 1 + m;
                e.hdr.data_offset = s ? 1500 : 0;
                if (flaw == WRONG_OFFSET && m == 0 && dir == 1 && s == 1)
                    e.hdr.data_offset = 1400;
                if (flaw == BAD_CRC && m == 0 && dir == 0 && s == 1)
                    e.trailer = VW_VITCP_TRAILER_BAD_CRC;
                if (!s)
                    e.hdr.flags &= (uint8_t)~VW_VITCP_FLAG_EOM;
                e.payload = data + (s ? 1500 : 0);
                e.payload_len = 1500;
                put(&f, dir ? VN_S2C : VN_C2S, &e);
            }
        }
    }
    vn_tcp_close(&f);
    assert_int_equal(vn_pcap_close(w), 0);
}

/* Distinct requirement IDs among the errors. */
static size_t error_rules(const struct cf_lint_result *r, enum vw_req *out, size_t cap)
{
    size_t n = 0;
    for (size_t i = 0; i < r->count; i++) {
        if (r->issues[i].severity != VW_SEV_ERROR)
            continue;
        bool seen = false;
        for (size_t k = 0; k < n; k++)
            seen |= out[k] == r->issues[i].req;
        if (!seen && n < cap)
            out[n++] = r->issues[i].req;
    }
    return n;
}

static void good_capture_has_no_errors(void **state)
{
    (void)state;
    write_capture("lint-good.pcap", GOOD, 3);
    struct cf_lint_result r;
    char err[256];
    assert_int_equal(cf_lint_file("lint-good.pcap", NULL, &r, err, sizeof err), 0);
    for (size_t i = 0; i < r.count; i++)
        print_message("  %s %s\n", vw_req_id(r.issues[i].req), r.issues[i].detail);
    assert_int_equal(r.errors, 0);
    assert_int_equal(r.vitcp_connections, 1);
    assert_int_equal(r.segments, 2 + 3 * 4);
    cf_lint_result_free(&r);
}

static void each_malformed_capture_fails_exactly_its_rule(void **state)
{
    (void)state;
    static const struct { enum flaw flaw; const char *rule; } flaws[] = {
        {WRONG_OFFSET, "VITCP-3.2-DATA-OFFSET-NEXT"},
        {BAD_CRC, "VITCP-3.6-CRC-VALID"},
        {MTU_GREATER, "VITCP-3.3-MTU-LESSER"},
        {DATA_AFTER_REJECT, "VITCP-4-CLOSE-AFTER-REFUSE"},
    };
    for (size_t k = 0; k < sizeof flaws / sizeof flaws[0]; k++) {
        write_capture("lint-bad.pcap", flaws[k].flaw, 2);
        struct cf_lint_result r;
        char err[256];
        assert_int_equal(cf_lint_file("lint-bad.pcap", NULL, &r, err, sizeof err), 0);
        enum vw_req rules[8];
        size_t n = error_rules(&r, rules, 8);
        if (n != 1 || strcmp(vw_req_id(rules[0]), flaws[k].rule) != 0) {
            for (size_t i = 0; i < r.count; i++)
                print_message("  frame %llu %s %s\n", (unsigned long long)r.issues[i].frame,
                              vw_req_id(r.issues[i].req), r.issues[i].detail);
            fail_msg("%s: %zu distinct error rules, first %s", flaws[k].rule, n, n ? vw_req_id(rules[0]) : "-");
        }
        assert_true(r.issues[0].frame > 0);
        cf_lint_result_free(&r);
    }
}

static void garbage_file_is_a_clear_error(void **state)
{
    (void)state;
    FILE *f = fopen("lint-garbage.pcap", "wb");
    assert_non_null(f);
    fputs("this is not a capture file at all, just text\n", f);
    fclose(f);
    struct cf_lint_result r;
    char err[256] = "";
    assert_int_equal(cf_lint_file("lint-garbage.pcap", NULL, &r, err, sizeof err), -1);
    assert_true(strlen(err) > 0);
    cf_lint_result_free(&r);
}

/* Throughput: the issue asks for at least 100 MB/s of capture. */
static void lint_throughput(void **state)
{
    (void)state;
    write_capture("lint-big.pcap", GOOD, 4000);
    FILE *f = fopen("lint-big.pcap", "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    double mb = (double)ftell(f) / 1e6;
    fclose(f);
    struct cf_lint_result r;
    char err[256];
    assert_int_equal(cf_lint_file("lint-big.pcap", NULL, &r, err, sizeof err), 0);
    assert_int_equal(r.errors, 0);
    print_message("lint: %.1f MB in %.3f s = %.0f MB/s (this build's flags)\n", mb, r.seconds, mb / r.seconds);
    cf_lint_result_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(good_capture_has_no_errors),
        cmocka_unit_test(each_malformed_capture_fails_exactly_its_rule),
        cmocka_unit_test(garbage_file_is_a_clear_error),
        cmocka_unit_test(lint_throughput),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
