/* Lint: a good VI/TCP capture has zero errors; each malformed capture fails
 * exactly the named rule; garbage files give a clear error. Captures are
 * built here with netio's writer and the wire library's encoder, and the
 * samples in captures/ (VI/TCP, IFT, WARP, PacketWay EEP) are linted
 * against what captures/README.md says each one breaks. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include "conform/cli.h"
#include "conform/lint.h"
#include "conform/proto/eep.h"
#include "conform/proto/warp.h"
#include "vitcp/ift.h"
#include "vitcp/pcap_writer.h"
#include "vitcp/pktway.h"
#include "vitcp/vitcp.h"
#include "vitcp/warp.h"

static struct vn_pcap_writer *open_writer(const char *path)
{
    char err[256];
    struct vn_pcap_writer *w = vn_pcap_open(path, err, sizeof err);
    assert_non_null(w);
    return w;
}

/* Lint path into *r (freed by the caller); the test fails if lint cannot read it. */
static void lint_ok(const char *path, const struct cf_lint_options *o, struct cf_lint_result *r)
{
    char err[256];
    if (cf_lint_file(path, o, r, err, sizeof err) != 0)
        fail_msg("lint %s: %s", path, err);
}

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
    struct vn_pcap_writer *w = open_writer(path);
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
    lint_ok("lint-good.pcap", NULL, &r);
    for (size_t i = 0; i < r.count; i++)
        print_message("  %s %s\n", vw_req_id(r.issues[i].req), r.issues[i].detail);
    assert_int_equal(r.errors, 0);
    assert_int_equal(cf_lint_counter(&r, "vitcp_connections"), 1);
    assert_int_equal(cf_lint_counter(&r, "segments"), 2 + 3 * 4);
    cf_lint_result_free(&r);
}

static void each_malformed_capture_fails_exactly_its_rule(void **state)
{
    (void)state;
    /* also: the reaction fault the capture shows besides (V26: the peer
     * ACKs the bad segment and the connection goes on) */
    static const struct { enum flaw flaw; const char *rule; const char *also; } flaws[] = {
        {WRONG_OFFSET, "VITCP-3.2-DATA-OFFSET-NEXT", NULL},
        {BAD_CRC, "VITCP-3.6-CRC-VALID", "VITCP-3.6-BAD-CRC-REACTION"},
        {MTU_GREATER, "VITCP-3.3-MTU-LESSER", NULL},
        {DATA_AFTER_REJECT, "VITCP-4-CLOSE-AFTER-REFUSE", NULL},
    };
    for (size_t k = 0; k < sizeof flaws / sizeof flaws[0]; k++) {
        write_capture("lint-bad.pcap", flaws[k].flaw, 2);
        struct cf_lint_result r;
        lint_ok("lint-bad.pcap", NULL, &r);
        enum vw_req rules[8];
        size_t n = error_rules(&r, rules, 8);
        size_t want = flaws[k].also ? 2 : 1;
        if (n != want || strcmp(vw_req_id(rules[0]), flaws[k].rule) != 0 ||
            (flaws[k].also && strcmp(vw_req_id(rules[1]), flaws[k].also) != 0)) {
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
    /* Frames in memory of a link type the reader does not take: the same. */
    static const uint8_t junk[] = {1, 2, 3};
    struct cf_lint_frame fr = {1, junk, sizeof junk};
    assert_int_equal(cf_lint_frames(9999, &fr, 1, NULL, &r, err, sizeof err), -1);
    assert_non_null(strstr(err, "link type 9999"));
    assert_int_equal(r.frames, 0);
    cf_lint_result_free(&r);
    /* Bare IP (LINKTYPE_RAW): a junk packet is a frame, not an error. */
    assert_int_equal(cf_lint_frames(101, &fr, 1, NULL, &r, err, sizeof err), 0);
    assert_int_equal(r.frames, 1);
    assert_int_equal(r.errors, 0);
    cf_lint_result_free(&r);
}

/* One VI segment in one TCP segment, with URG and urgent pointer up when
 * urg is set. */
static void put_urgent(struct vn_tcp_flow *f, enum vn_dir dir, struct vw_vitcp_enc *enc, bool urg, uint16_t up)
{
    uint8_t buf[4096];
    size_t n = vw_vitcp_encode(enc, buf, sizeof buf);
    assert_true(n > 0);
    uint8_t flags = VN_TCP_ACK | VN_TCP_PSH | (urg ? VN_TCP_URG : 0);
    assert_int_equal(vn_tcp_raw(f, dir, flags, f->next_off[dir], urg ? up : 0, NULL, 0, buf, n), 0);
}

/* Urgent pointers (3.7, V23): at a segment's first byte is fine, one past
 * it is the BSD reading, elsewhere is wrong, and none without the peer's
 * Urgent Marker option. */
static void urgent_pointers(void **state)
{
    (void)state;
    static const struct { bool offered; uint16_t up; const char *rule; } cases[] = {
        {true, 0, NULL},
        {true, 1, "VITCP-3.7-URGENT-RFC1122"},
        {true, 5, "VITCP-3.7-URGENT-FIRST-BYTE"},
        {false, 0, "VITCP-3.7-URGENT-ONLY-IF-OFFERED"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        struct vn_pcap_writer *w = open_writer("lint-urgent.pcap");
        struct vn_tcp_flow f;
        assert_int_equal(vn_tcp_flow_init(&f, vn_pcap_sink(w), "10.0.0.1", 40000, "10.0.0.2", 5995), 0);
        assert_int_equal(vn_tcp_handshake(&f), 0);
        uint8_t opts[16];
        struct vw_vitcp_enc e;
        for (int dir = 0; dir < 2; dir++) {
            vw_vitcp_enc_init(&e, dir ? VW_VITCP_CONNECT_ACCEPT : VW_VITCP_CONNECT_REQUEST, false);
            e.ce.attrs = VW_VITCP_ATTR_RELIABLE_DELIVERY;
            e.ce.mtu = 65536;
            e.ce.options = opts;
            /* the server offers the option only in the cases that say so */
            e.ce.options_len = vw_vitcp_opts_build(opts, sizeof opts, false, dir == 0 || cases[k].offered, true);
            e.hdr.msg_num = dir ? 500 : 100;
            e.hdr.msg_ack = dir ? 100 : 0;
            put_urgent(&f, dir ? VN_S2C : VN_C2S, &e, false, 0);
        }
        static uint8_t data[64];
        vw_vitcp_enc_init(&e, VW_VITCP_SEND, false);
        e.hdr.msg_num = 101;
        e.payload = data;
        e.payload_len = sizeof data;
        put_urgent(&f, VN_C2S, &e, true, cases[k].up);
        vn_tcp_close(&f);
        assert_int_equal(vn_pcap_close(w), 0);

        struct cf_lint_result r;
        lint_ok("lint-urgent.pcap", NULL, &r);
        enum vw_req rules[8];
        size_t n = error_rules(&r, rules, 8);
        bool ok = cases[k].rule ? n == 1 && strcmp(vw_req_id(rules[0]), cases[k].rule) == 0 : n == 0;
        if (!ok) {
            for (size_t i = 0; i < r.count; i++)
                print_message("  frame %llu %s %s\n", (unsigned long long)r.issues[i].frame,
                              vw_req_id(r.issues[i].req), r.issues[i].detail);
            fail_msg("urgent case %zu: expected %s, %zu distinct error rules", k,
                     cases[k].rule ? cases[k].rule : "none", n);
        }
        if (cases[k].rule)
            assert_int_equal(r.issues[0].frame, 6); /* the Send's frame */
        cf_lint_result_free(&r);
    }
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
    lint_ok("lint-big.pcap", NULL, &r);
    assert_int_equal(r.errors, 0);
    print_message("lint: %.1f MB in %.3f s = %.0f MB/s (this build's flags)\n", mb, r.seconds, mb / r.seconds);
    cf_lint_result_free(&r);
}

/* ------------------------------------------- the samples in captures/ */

/* A lint module's option, as `lint --NAME VALUE` sets it. */
static void set_option(struct cf_lint_options *o, const char *name, const char *value)
{
    char why[200] = "";
    if (cf_lint_set_option(o, name, value, NULL, why, sizeof why) != 1)
        fail_msg("%s %s: %s", name, value, why);
}

/* The lint module's place in cf_lint_modules (its counts in a result). */
static unsigned module_index(const struct cf_lint_module *m)
{
    unsigned i = 0;
    while (cf_lint_modules[i] && cf_lint_modules[i] != m)
        i++;
    assert_non_null(cf_lint_modules[i]);
    return i;
}

static void print_issues(const struct cf_lint_result *r)
{
    for (size_t i = 0; i < r->count; i++)
        print_message("    frame %llu %s %s %s\n", (unsigned long long)r->issues[i].frame,
                      vw_severity_name(r->issues[i].severity), vw_req_id(r->issues[i].req),
                      r->issues[i].detail);
}

/*
 * Every row of captures/README.md's table that names a committed file: a
 * capture made with `--break ID` must show ID (at any severity: TxErr and
 * markers are notes in the wire library) and no other rule as a warning or
 * error; the others must show no warning or error at all.
 */
static void sample_captures_yield_their_named_rules(void **state)
{
    (void)state;
    FILE *readme = fopen(CAPTURES_DIR "/README.md", "r");
    assert_non_null(readme);
    char line[1024];
    unsigned checked = 0, broken = 0, failed = 0;
    bool seen_proto[CF_PROTOCOLS_MAX] = {false}; /* by cf_lint_modules index */
    while (fgets(line, sizeof line, readme)) {
        char name[128], rule[96] = "";
        if (strncmp(line, "| ", 2) != 0 || sscanf(line, "| %127[^ |]", name) != 1 || !strstr(name, ".pcap"))
            continue; /* header rows and "(build only)" files */
        const char *br = strstr(line, "--break ");
        if (br && sscanf(br, "--break %95[A-Z0-9.-]", rule) != 1)
            fail_msg("%s: cannot read the --break rule", name);
        enum vw_req want = VW_REQ_NONE;
        if (rule[0]) {
            want = vw_req_by_id(rule);
            assert_int_not_equal(want, VW_REQ_NONE);
            broken++;
        }
        /* "also `ID`": a rule the broken capture shows besides (a reaction:
         * the generated peer carries on after the fault, I12) */
        enum vw_req also = VW_REQ_NONE;
        const char *al = strstr(line, "also `");
        char also_id[96];
        if (al && sscanf(al, "also `%95[A-Z0-9.-]", also_id) == 1) {
            also = vw_req_by_id(also_id);
            assert_int_not_equal(also, VW_REQ_NONE);
        }
        char path[512];
        snprintf(path, sizeof path, "%s/%s", CAPTURES_DIR, name);
        struct cf_lint_result r;
        lint_ok(path, NULL, &r);
        bool ok = true, found = want == VW_REQ_NONE, found_also = also == VW_REQ_NONE;
        for (size_t i = 0; i < r.count; i++) {
            const struct cf_lint_issue *is = &r.issues[i];
            seen_proto[module_index(is->module)] = true;
            if (is->req == want && want != VW_REQ_NONE)
                found = true;
            else if (is->req == also && also != VW_REQ_NONE)
                found_also = true;
            else if (is->severity >= VW_SEV_WARN)
                ok = false;
        }
        found = found && found_also;
        uint64_t traffic = 0;
        for (unsigned m = 0; cf_lint_modules[m]; m++) {
            seen_proto[m] |= r.counts[m][0] != 0; /* its connections or messages */
            traffic += r.counts[m][0];
        }
        if (traffic == 0) {
            print_message("%s: no VI/TCP, IFT, WARP or EEP traffic recognised\n", name);
            ok = false;
        }
        if (!ok || !found) {
            print_message("%s: expected %s only, got:\n", name, rule[0] ? rule : "no warning or error");
            print_issues(&r);
            failed++;
        }
        checked++;
        cf_lint_result_free(&r);
    }
    fclose(readme);
    print_message("%u sample captures linted, %u of them broken on purpose\n", checked, broken);
    assert_true(checked >= 30);
    assert_true(broken >= 10);
    for (unsigned m = 0; cf_lint_modules[m]; m++)
        assert_true(seen_proto[m]);
    assert_int_equal(failed, 0);
}

/* A few exact findings of the samples: frame numbers, protocol, rule. */
static void sample_findings_name_frame_and_protocol(void **state)
{
    (void)state;
    static const struct {
        const char *file;
        const char *proto;
        const char *rule;
        uint64_t frame;
        unsigned errors; /* 0: one */
    } want[] = {
        {"ift-bad-hdr-crc.pcap", "ift", "IFT-5.1-HDR-CRC", 6, 2},
        {"warp-bad-adler.pcap", "warp", "WARP-A-ADLER-VALID", 5, 1},
        {"eep-oversized-dl.pcap", "eep", "EEP-6H-DL-FITS", 3, 1},
        {"eep-frames-udp.pcap", "eep", NULL, 0, 0},
    };
    for (size_t k = 0; k < sizeof want / sizeof *want; k++) {
        char path[512];
        snprintf(path, sizeof path, "%s/%s", CAPTURES_DIR, want[k].file);
        struct cf_lint_result r;
        lint_ok(path, NULL, &r);
        if (!want[k].rule) {
            assert_int_equal(cf_lint_counter(&r, "eep_messages"), 11);
            assert_int_equal(r.errors, 0);
        } else {
            assert_int_equal(r.errors, want[k].errors ? want[k].errors : 1);
            const struct cf_lint_issue *is = NULL;
            for (size_t i = 0; i < r.count; i++)
                if (r.issues[i].severity == VW_SEV_ERROR && !is)
                    is = &r.issues[i]; /* the first: the fault (a reaction to it comes later) */
            assert_non_null(is);
            assert_string_equal(vw_req_id(is->req), want[k].rule);
            assert_string_equal(is->module->protocol->name, want[k].proto);
            assert_int_equal(is->frame, want[k].frame);
        }
        cf_lint_result_free(&r);
    }
}

/* ------------------------------- ports and recognition, built captures */

static void put_warp(struct vn_tcp_flow *f, enum vn_dir dir, uint32_t ssn)
{
    static const uint8_t payload[40] = {1, 2, 3};
    struct vw_warp_enc e;
    vw_warp_enc_init(&e, VW_WARP_SEND, payload, sizeof payload);
    e.flags = VW_WARP_FLAG_L;
    e.ssn = ssn;
    uint8_t buf[128];
    size_t n = vw_warp_encode(&e, buf, sizeof buf);
    assert_true(n > 0);
    assert_int_equal(vn_tcp_send(f, dir, buf, n), 0);
}

/* WARP has no magic: only its port (5997 or --warp-port) selects it. */
static void warp_on_another_port_needs_the_option(void **state)
{
    (void)state;
    struct vn_pcap_writer *w = open_writer("lint-warp.pcap");
    struct vn_tcp_flow f;
    assert_int_equal(vn_tcp_flow_init(&f, vn_pcap_sink(w), "10.0.0.1", 40000, "10.0.0.2", 7001), 0);
    assert_int_equal(vn_tcp_handshake(&f), 0);
    put_warp(&f, VN_C2S, 10);
    put_warp(&f, VN_C2S, 11);
    put_warp(&f, VN_C2S, 13); /* skips 12 */
    put_warp(&f, VN_S2C, 1);
    vn_tcp_close(&f);
    assert_int_equal(vn_pcap_close(w), 0);

    struct cf_lint_result r;
    lint_ok("lint-warp.pcap", NULL, &r);
    assert_int_equal(cf_lint_counter(&r, "warp_connections"), 0);
    assert_int_equal(r.errors, 0);
    cf_lint_result_free(&r);

    struct cf_lint_options o;
    cf_lint_options_init(&o);
    set_option(&o, "--warp-port", "7001");
    lint_ok("lint-warp.pcap", &o, &r);
    assert_int_equal(cf_lint_counter(&r, "warp_connections"), 1);
    assert_int_equal(cf_lint_counter(&r, "warp_chunks"), 4);
    assert_int_equal(r.errors, 1);
    assert_int_equal(cf_lint_count(&r, VW_REQ_WARP_W4_SSN_NEXT, VW_SEV_ERROR), 1);
    assert_ptr_equal(r.issues[0].module, &cf_lint_warp);
    assert_int_equal(r.issues[0].frame, 6); /* handshake 1-3, chunks 4, 5, 6 */
    cf_lint_result_free(&r);
}

/* A WARP Send without its Last chunk: an error once both sides closed with
 * FIN (WARP-SUMMARY-L-LAST, vw_warp_framer_finish), nothing when the capture
 * merely ends. */
static void warp_open_send_at_close(void **state)
{
    (void)state;
    for (int closed = 0; closed < 2; closed++) {
        struct vn_pcap_writer *w = open_writer("lint-warp-open.pcap");
        struct vn_tcp_flow f;
        assert_int_equal(vn_tcp_flow_init(&f, vn_pcap_sink(w), "10.0.0.1", 40000, "10.0.0.2", VW_WARP_DEFAULT_PORT), 0);
        assert_int_equal(vn_tcp_handshake(&f), 0);
        put_warp(&f, VN_C2S, 1);
        struct vw_warp_enc e;
        vw_warp_enc_init(&e, VW_WARP_SEND, (const uint8_t *)"no last bit", 11);
        e.ssn = 2;
        uint8_t buf[64];
        size_t n = vw_warp_encode(&e, buf, sizeof buf);
        assert_int_equal(vn_tcp_send(&f, VN_C2S, buf, n), 0);
        if (closed)
            vn_tcp_close(&f);
        assert_int_equal(vn_pcap_close(w), 0);
        struct cf_lint_result r;
        lint_ok("lint-warp-open.pcap", NULL, &r);
        assert_int_equal(cf_lint_counter(&r, "warp_chunks"), 2);
        assert_int_equal(cf_lint_count(&r, VW_REQ_WARP_SUMMARY_L_LAST, VW_SEV_ERROR), closed);
        assert_int_equal(r.errors, closed);
        cf_lint_result_free(&r);
    }
}

static void put_ind(struct vn_tcp_flow *f, enum vn_dir dir, unsigned phase, uint16_t vtag)
{
    struct vw_ift_ind_enc e;
    vw_ift_ind_enc_init(&e, phase, vtag, false, false);
    uint8_t buf[64];
    assert_int_equal(vw_ift_ind_encode(&e, buf, sizeof buf), 64);
    assert_int_equal(vn_tcp_send(f, dir, buf, sizeof buf), 0);
}

/* IFT is recognised by its adaption indication on any port; on its own
 * port a stream that does not start with one breaks IFT-4-INDICATION-FIRST. */
static void ift_by_magic_and_indication_first(void **state)
{
    (void)state;
    struct vn_pcap_writer *w = open_writer("lint-ift.pcap");
    struct vn_tcp_flow f;
    assert_int_equal(vn_tcp_flow_init(&f, vn_pcap_sink(w), "10.0.0.1", 40000, "10.0.0.2", 7000), 0);
    assert_int_equal(vn_tcp_handshake(&f), 0);
    put_ind(&f, VN_C2S, 0, 0x1111);
    put_ind(&f, VN_S2C, 1, 0x2222);
    uint8_t ddp[VW_DDP_UNTAGGED_HDR_LEN] = {0x41, 0x43}, payload[100] = {0};
    struct vw_ift_frame_enc fe;
    vw_ift_frame_enc_init(&fe, 0x2222, false, false, ddp, sizeof ddp, payload, sizeof payload);
    uint8_t buf[256];
    size_t n = vw_ift_frame_encode(&fe, buf, sizeof buf);
    assert_true(n > 0);
    assert_int_equal(vn_tcp_send(&f, VN_C2S, buf, n), 0);
    vn_tcp_close(&f);
    /* second connection, on 5996, without indications */
    struct vn_tcp_flow g;
    assert_int_equal(vn_tcp_flow_init(&g, vn_pcap_sink(w), "10.0.0.1", 40001, "10.0.0.2", 5996), 0);
    assert_int_equal(vn_tcp_handshake(&g), 0);
    assert_int_equal(vn_tcp_send(&g, VN_C2S, buf, n), 0);
    vn_tcp_close(&g);
    assert_int_equal(vn_pcap_close(w), 0);

    struct cf_lint_result r;
    lint_ok("lint-ift.pcap", NULL, &r);
    print_issues(&r);
    assert_int_equal(cf_lint_counter(&r, "ift_connections"), 2);
    assert_int_equal(cf_lint_counter(&r, "ift_pdus"), 3);
    assert_int_equal(r.errors, 1);
    assert_int_equal(cf_lint_count(&r, VW_REQ_IFT_4_INDICATION_FIRST, VW_SEV_ERROR), 1);
    cf_lint_result_free(&r);

    /* --ift-port elsewhere: the second connection is no longer IFT */
    struct cf_lint_options o;
    cf_lint_options_init(&o);
    set_option(&o, "--ift-port", "1");
    lint_ok("lint-ift.pcap", &o, &r);
    assert_int_equal(cf_lint_counter(&r, "ift_connections"), 1);
    assert_int_equal(r.errors, 0);
    cf_lint_result_free(&r);
}

/* TCP segmentation does not change IFT framing: segments that end four
 * bytes before a frame's end (where a layout with one CRC fewer would end)
 * leave frames that keep their announcement alone, and a last frame that
 * broke it is still framed at the close and reported at its own packet. */
static void ift_segmentation_keeps_framing(void **state)
{
    (void)state;
    struct vn_pcap_writer *w = open_writer("lint-ift-segments.pcap");
    struct vn_tcp_flow f;
    assert_int_equal(vn_tcp_flow_init(&f, vn_pcap_sink(w), "10.0.0.1", 40000, "10.0.0.2", 5996), 0);
    assert_int_equal(vn_tcp_handshake(&f), 0);
    struct vw_ift_ind_enc ie;
    uint8_t ind[64];
    vw_ift_ind_enc_init(&ie, 0, 0x1111, true, true);
    assert_int_equal(vw_ift_ind_encode(&ie, ind, sizeof ind), 64);
    assert_int_equal(vn_tcp_send(&f, VN_C2S, ind, sizeof ind), 0); /* frame 4 */
    vw_ift_ind_enc_init(&ie, 1, 0x2222, true, true);
    assert_int_equal(vw_ift_ind_encode(&ie, ind, sizeof ind), 64);
    assert_int_equal(vn_tcp_send(&f, VN_S2C, ind, sizeof ind), 0); /* frame 5 */
    uint8_t ddp[VW_DDP_UNTAGGED_HDR_LEN] = {0x41, 0x43}, payload[100] = {0};
    uint8_t stream[512];
    size_t ends[3], n = 0;
    for (int i = 0; i < 3; i++) {
        struct vw_ift_frame_enc fe;
        vw_ift_frame_enc_init(&fe, 0x2222, true, i < 2, ddp, sizeof ddp, payload, sizeof payload);
        size_t len = vw_ift_frame_encode(&fe, stream + n, sizeof stream - n);
        assert_true(len > 0);
        n += len;
        ends[i] = n;
    }
    /* frames 6, 7, 8: the last holds the end of frame 2 and frame 3, which
     * carries no payload CRC although its sender announced PC */
    const size_t cuts[4] = {0, ends[0] - 4, ends[1] - 4, ends[2]};
    for (int i = 0; i < 3; i++)
        assert_int_equal(vn_tcp_send(&f, VN_C2S, stream + cuts[i], cuts[i + 1] - cuts[i]), 0);
    vn_tcp_close(&f);
    assert_int_equal(vn_pcap_close(w), 0);

    struct cf_lint_result r;
    char err[256];
    assert_int_equal(cf_lint_file("lint-ift-segments.pcap", NULL, &r, err, sizeof err), 0);
    print_issues(&r);
    assert_int_equal(cf_lint_counter(&r, "ift_connections"), 1);
    assert_int_equal(cf_lint_counter(&r, "ift_pdus"), 5);
    assert_int_equal(r.errors, 1);
    assert_int_equal(cf_lint_count(&r, VW_REQ_IFT_5_1_CRC_AS_NEGOTIATED, VW_SEV_ERROR), 1);
    for (size_t i = 0; i < r.count; i++)
        if (r.issues[i].req == VW_REQ_IFT_5_1_CRC_AS_NEGOTIATED)
            assert_int_equal(r.issues[i].frame, 8);
    cf_lint_result_free(&r);
}

/* A NOP before the ConnectRequest breaks VITCP-4.2-REQUEST-FIRST at the NOP
 * (the state machine leaves Incoming only on a ConnectRequest); the CE
 * exchange that follows still negotiates CRC, so its data is clean (issue
 * 22: the request was blamed under UNEXPECTED-CLOSE and every later data
 * segment under CRC-ONLY-IF-NEGOTIATED). */
static void early_nop_breaks_only_request_first(void **state)
{
    (void)state;
    struct vn_pcap_writer *w = open_writer("lint-early-nop.pcap");
    struct vn_tcp_flow f;
    assert_int_equal(vn_tcp_flow_init(&f, vn_pcap_sink(w), "10.0.0.1", 40000, "10.0.0.2", 5995), 0);
    assert_int_equal(vn_tcp_handshake(&f), 0);
    struct vw_vitcp_enc e;
    vw_vitcp_enc_init(&e, VW_VITCP_NOP, false);
    e.hdr.msg_num = 99;
    put(&f, VN_C2S, &e);
    uint8_t opts[16];
    ce(&e, VW_VITCP_CONNECT_REQUEST, 65536, opts);
    e.hdr.msg_num = 100;
    put(&f, VN_C2S, &e);
    ce(&e, VW_VITCP_CONNECT_ACCEPT, 65536, opts);
    e.hdr.msg_num = 500;
    e.hdr.msg_ack = 100;
    put(&f, VN_S2C, &e);
    static const uint8_t data[100] = {1, 2, 3};
    vw_vitcp_enc_init(&e, VW_VITCP_SEND, true); /* CRC: both CE segments offered it */
    e.hdr.msg_num = 101;
    e.payload = data;
    e.payload_len = sizeof data;
    put(&f, VN_C2S, &e);
    vn_tcp_close(&f);
    assert_int_equal(vn_pcap_close(w), 0);
    struct cf_lint_result r;
    lint_ok("lint-early-nop.pcap", NULL, &r);
    print_issues(&r);
    assert_int_equal(cf_lint_count(&r, VW_REQ_VITCP_4_REQUEST_FIRST, VW_SEV_ERROR), 1);
    assert_int_equal(r.issues[0].frame, 4);
    assert_int_equal(r.errors, 1);
    cf_lint_result_free(&r);
}

/* An R-bit disagreement handled as decision I8 says (B answers phase 1,
 * then resets) is clean: the disagreement is a note. A B that carries on
 * with data after it breaks IFT-4.2-R-AGREE at that frame (issue 22). */
static void ift_r_disagreement_judged_by_the_reaction(void **state)
{
    (void)state;
    for (int carry_on = 0; carry_on < 2; carry_on++) {
        struct vn_pcap_writer *w = open_writer("lint-ift-r.pcap");
        struct vn_tcp_flow f;
        assert_int_equal(vn_tcp_flow_init(&f, vn_pcap_sink(w), "10.0.0.1", 40000, "10.0.0.2", 5996), 0);
        assert_int_equal(vn_tcp_handshake(&f), 0);
        put_ind(&f, VN_C2S, 0, 0x1111); /* R=1 */
        struct vw_ift_ind_enc e;
        vw_ift_ind_enc_init(&e, 1, 0x2222, false, false);
        e.flags &= ~VW_IFT_FLAG_R; /* B chooses R=0 */
        uint8_t ind[64];
        assert_int_equal(vw_ift_ind_encode(&e, ind, sizeof ind), 64);
        assert_int_equal(vn_tcp_send(&f, VN_S2C, ind, sizeof ind), 0);
        if (carry_on) {
            uint8_t ddp[VW_DDP_UNTAGGED_HDR_LEN] = {0x41, 0x43}, payload[40] = {0}, buf[128];
            struct vw_ift_frame_enc fe;
            vw_ift_frame_enc_init(&fe, 0x1111, false, false, ddp, sizeof ddp, payload, sizeof payload);
            size_t n = vw_ift_frame_encode(&fe, buf, sizeof buf);
            assert_true(n > 0);
            assert_int_equal(vn_tcp_send(&f, VN_S2C, buf, n), 0);
            vn_tcp_close(&f);
        } else {
            assert_int_equal(vn_tcp_rst(&f, VN_S2C), 0);
        }
        assert_int_equal(vn_pcap_close(w), 0);
        struct cf_lint_result r;
        lint_ok("lint-ift-r.pcap", NULL, &r);
        print_issues(&r);
        assert_int_equal(cf_lint_counter(&r, "ift_connections"), 1);
        /* cf_lint_count counts at the severity and above */
        assert_int_equal(cf_lint_count(&r, VW_REQ_IFT_4_2_R_AGREE, VW_SEV_NOTE), carry_on ? 2 : 1);
        assert_int_equal(cf_lint_count(&r, VW_REQ_IFT_4_2_R_AGREE, VW_SEV_ERROR), carry_on ? 1 : 0);
        assert_int_equal(r.errors, carry_on ? 1 : 0);
        cf_lint_result_free(&r);
    }
}

/* The listening side's port decides, as in Wireshark (issue 18, item 11):
 * a VI/TCP client whose source port happens to be IFT's 5996 is VI/TCP,
 * and an IFT server on 5996 reached from source port 5995 is IFT. */
static void listening_port_decides_the_protocol(void **state)
{
    (void)state;
    struct vn_pcap_writer *w = open_writer("lint-ports.pcap");
    struct vn_tcp_flow f;
    assert_int_equal(vn_tcp_flow_init(&f, vn_pcap_sink(w), "10.0.0.1", 5996, "10.0.0.2", 5995), 0);
    assert_int_equal(vn_tcp_handshake(&f), 0);
    uint8_t opts[16];
    struct vw_vitcp_enc e;
    ce(&e, VW_VITCP_CONNECT_REQUEST, 65536, opts);
    put(&f, VN_C2S, &e);
    ce(&e, VW_VITCP_CONNECT_ACCEPT, 65536, opts);
    put(&f, VN_S2C, &e);
    vn_tcp_close(&f);
    assert_int_equal(vn_tcp_flow_init(&f, vn_pcap_sink(w), "10.0.0.1", 5995, "10.0.0.2", 5996), 0);
    assert_int_equal(vn_tcp_handshake(&f), 0);
    put_ind(&f, VN_C2S, 0, 0x1111);
    put_ind(&f, VN_S2C, 1, 0x2222);
    vn_tcp_close(&f);
    assert_int_equal(vn_pcap_close(w), 0);
    struct cf_lint_result r;
    lint_ok("lint-ports.pcap", NULL, &r);
    print_issues(&r);
    assert_int_equal(cf_lint_counter(&r, "vitcp_connections"), 1);
    assert_int_equal(cf_lint_counter(&r, "ift_connections"), 1);
    assert_int_equal(r.errors, 0);
    cf_lint_result_free(&r);
}

/* EEP over UDP on another port needs --eep-port; a datagram that is no
 * EEP message names the decoder's rule. */
static void eep_udp_port_option(void **state)
{
    (void)state;
    struct vn_pcap_writer *w = open_writer("lint-eep.pcap");
    struct vn_endpoint a, b;
    assert_int_equal(vn_endpoint_set(&a, "10.0.0.1", 40000), 0);
    assert_int_equal(vn_endpoint_set(&b, "10.0.0.2", 7002), 0);
    static const uint8_t data[20] = {9, 8, 7};
    struct vw_eep_enc e;
    vw_eep_enc_init(&e, 0x000102, 0x000304, vw_eep_types_default.pt_ipv4, data, sizeof data);
    uint8_t buf[128];
    size_t n = vw_eep_encode(&e, buf, sizeof buf);
    assert_true(n > 0);
    assert_int_equal(vn_udp_send(vn_pcap_sink(w), &a, &b, buf, n), 0);
    assert_int_equal(vn_udp_send(vn_pcap_sink(w), &a, &b, buf, 12), 0); /* cut short */
    assert_int_equal(vn_pcap_close(w), 0);

    struct cf_lint_result r;
    lint_ok("lint-eep.pcap", NULL, &r);
    assert_int_equal(cf_lint_counter(&r, "eep_messages"), 0);
    assert_int_equal(r.errors, 0);
    cf_lint_result_free(&r);
    struct cf_lint_options o;
    cf_lint_options_init(&o);
    set_option(&o, "--eep-port", "7002");
    lint_ok("lint-eep.pcap", &o, &r);
    print_issues(&r);
    assert_int_equal(cf_lint_counter(&r, "eep_messages"), 2);
    assert_int_equal(r.errors, 1);
    assert_int_equal(cf_lint_count(&r, VW_REQ_EEP_4A_TRUNCATED, VW_SEV_ERROR), 1);
    assert_int_equal(r.issues[0].frame, 2);
    assert_ptr_equal(r.issues[0].module, &cf_lint_eep);
    cf_lint_result_free(&r);
}

/* Many WARP connections open at once: each holds framing buffers, so past
 * 1024 open ones lint notes the limit instead of growing without bound. */
static void many_open_warp_connections_are_bounded(void **state)
{
    (void)state;
    struct vn_pcap_writer *w = open_writer("lint-many-warp.pcap");
    enum { N = 1100 };
    static struct vn_tcp_flow f[N];
    for (unsigned i = 0; i < N; i++) {
        assert_int_equal(vn_tcp_flow_init(&f[i], vn_pcap_sink(w), "10.0.0.1", (uint16_t)(20000 + i), "10.0.0.2",
                                          VW_WARP_DEFAULT_PORT), 0);
        assert_int_equal(vn_tcp_handshake(&f[i]), 0);
        put_warp(&f[i], VN_C2S, 1);
    }
    for (unsigned i = 0; i < N; i++)
        vn_tcp_close(&f[i]);
    assert_int_equal(vn_pcap_close(w), 0);
    struct cf_lint_result r;
    lint_ok("lint-many-warp.pcap", NULL, &r);
    assert_int_equal(cf_lint_counter(&r, "warp_connections"), 1024);
    assert_int_equal(cf_lint_counter(&r, "warp_chunks"), 1024);
    assert_int_equal(r.errors, 0);
    bool noted = false;
    for (size_t i = 0; i < r.count; i++)
        noted |= strstr(r.issues[i].detail, "more than 1024 IFT/WARP connections open") != NULL;
    assert_true(noted);
    cf_lint_result_free(&r);
}

/* The lint modules' table (C80) fits the protocols' table: each lint
 * module is a registered protocol's, no two the same one's; no two
 * share an option; the default protocol has one; lint's usage names every
 * option once. */
static void lint_modules_match_the_protocols(void **state)
{
    (void)state;
    assert_non_null(cf_lint_module_default());
    assert_ptr_equal(cf_lint_module_default()->protocol, cf_protocol_default());
    const char *names[4 * CF_PROTOCOLS_MAX];
    size_t nnames = 0;
    unsigned m = 0;
    for (; cf_lint_modules[m]; m++) {
        const struct cf_lint_module *lm = cf_lint_modules[m];
        if (cf_protocol_find(lm->protocol->name) != lm->protocol)
            fail_msg("lint module %s is no registered protocol's", lm->title);
        for (unsigned k = 0; k < m; k++)
            if (cf_lint_modules[k]->protocol == lm->protocol)
                fail_msg("two lint modules of protocol %s", lm->protocol->name);
        assert_non_null(lm->help);
        assert_non_null(lm->counters[0].key);
        if (lm->port_option)
            names[nnames++] = lm->port_option;
        for (const struct cf_option *o = lm->options; o && o->name; o++) {
            assert_true(o - lm->options < CF_LINT_OPTIONS_MAX);
            names[nnames++] = o->name;
        }
    }
    assert_true(m <= CF_PROTOCOLS_MAX);
    for (size_t i = 0; i < nnames; i++)
        for (size_t j = i + 1; j < nnames; j++)
            if (strcmp(names[i], names[j]) == 0)
                fail_msg("two lint modules take %s", names[i]);
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    assert_non_null(out);
    char *argv[] = {(char *)"vitcp-conform", (char *)"lint", (char *)"--help", NULL};
    assert_int_equal(cf_main(3, argv, out, stderr), 0);
    fclose(out);
    for (size_t i = 0; i < nnames; i++) {
        char want[64];
        snprintf(want, sizeof want, "[%s ", names[i]);
        const char *at = strstr(text, want);
        if (!at || strstr(at + 1, want))
            fail_msg("lint's usage does not name %s once: %s", names[i], text);
    }
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(good_capture_has_no_errors),
        cmocka_unit_test(each_malformed_capture_fails_exactly_its_rule),
        cmocka_unit_test(garbage_file_is_a_clear_error),
        cmocka_unit_test(urgent_pointers),
        cmocka_unit_test(lint_throughput),
        cmocka_unit_test(sample_captures_yield_their_named_rules),
        cmocka_unit_test(sample_findings_name_frame_and_protocol),
        cmocka_unit_test(warp_on_another_port_needs_the_option),
        cmocka_unit_test(warp_open_send_at_close),
        cmocka_unit_test(ift_by_magic_and_indication_first),
        cmocka_unit_test(ift_segmentation_keeps_framing),
        cmocka_unit_test(eep_udp_port_option),
        cmocka_unit_test(listening_port_decides_the_protocol),
        cmocka_unit_test(ift_r_disagreement_judged_by_the_reaction),
        cmocka_unit_test(early_nop_breaks_only_request_first),
        cmocka_unit_test(many_open_warp_connections_are_bounded),
        cmocka_unit_test(lint_modules_match_the_protocols),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
