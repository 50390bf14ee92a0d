/* Capture-based cases (NAME.pcapng + NAME.meta): the loader compiles the
 * shipped ones, a mismatch names the case file, the capture PDU and frame
 * with expected beside actual, 'verdict fail' inverts, wildcards silence a
 * field, and damaged metadata is refused with file:line. Runs against the
 * mini responder (tests/conformance/mini_peer.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "conform/capcase.h"
#include "conform/case.h"
#include "conform/engine.h"
#include "conform/report.h"
#include "mini_peer.h"

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    assert_int_equal(fclose(f), 0);
}

/* A meta for a shipped capture, with extra lines. */
static void write_meta(const char *path, const char *capture, const char *extra)
{
    char text[2048];
    snprintf(text, sizeof text, "capture %s/%s\nrequire VITCP-4.3-ACCEPT-ON-MATCH\ndiscriminator run\n%s",
             CONFORM_CASES_DIR, capture, extra);
    write_file(path, text);
}

static struct cf_case *load(const char *meta)
{
    struct cf_case *c = malloc(sizeof *c);
    assert_non_null(c);
    char err[512];
    if (cf_capcase_load(meta, c, err, sizeof err) < 0)
        fail_msg("%s", err);
    return c;
}

static void run_one(const struct cf_case *c, struct cf_result *res)
{
    struct mini_peer p;
    assert_int_equal(mini_peer_start(&p, MINI_CORRECT), 0);
    struct cf_engine e;
    cf_engine_init(&e);
    char target[64];
    snprintf(target, sizeof target, "127.0.0.1:%u", p.port);
    assert_int_equal(cf_engine_set_target(&e, target), 0);
    e.slack_ms = 500;
    cf_engine_run_case(&e, c, res);
    mini_peer_stop(&p);
}

static void shipped_capture_cases_load(void **state)
{
    (void)state;
    struct cf_case_set set;
    char err[512];
    if (cf_case_set_load_dir(CONFORM_CASES_DIR, &set, err, sizeof err) < 0)
        fail_msg("%s", err);
    unsigned captures = 0;
    for (size_t i = 0; i < set.count; i++) {
        const struct cf_case *c = &set.cases[i];
        if (!c->from_capture)
            continue;
        captures++;
        assert_non_null(c->blob);
        assert_true(c->nsteps >= 3);
        assert_int_equal(c->steps[0].kind, CF_STEP_CONNECT);
        assert_int_equal(c->steps[1].kind, CF_STEP_SEND);
        assert_int_equal(c->steps[1].type, VW_VITCP_CONNECT_REQUEST);
        assert_int_equal(c->steps[1].cap_pdu, 1);
    }
    assert_true(captures >= 4);
    cf_case_set_free(&set);
}

/* Without wildcards the mini responder's own choices (RDMA enables, read
 * window, descriptors) differ from the capture's server: the failure names
 * the capture, its PDU and frame, and expected beside actual. */
static void mismatch_names_capture_pdu_and_values(void **state)
{
    (void)state;
    write_meta("cc-strict.meta", "300-capture-connect.pcapng", "");
    struct cf_case *c = load("cc-strict.meta");
    struct cf_result res;
    run_one(c, &res);
    print_message("%s\n", res.message);
    assert_int_equal(res.verdict, CF_FAIL);
    assert_int_equal(res.failed_req, vw_req_by_id("VITCP-4.3-ACCEPT-ON-MATCH"));
    assert_non_null(strstr(res.message, "300-capture-connect.pcapng: capture PDU 2 (frame 5): "));
    assert_non_null(strstr(res.message, "expected ConnectAccept attrs=2, got attrs=26"));
    cf_case_free(c);
    free(c);

    /* The same with 'verdict fail': the difference is what the case wants. */
    write_meta("cc-xfail.meta", "300-capture-connect.pcapng", "verdict fail\n");
    c = load("cc-xfail.meta");
    run_one(c, &res);
    assert_int_equal(res.verdict, CF_PASS);
    assert_non_null(strstr(res.message, "failed as its metadata expects"));
    cf_case_free(c);
    free(c);

    /* Wildcards on exactly the fields that differ: it passes; and then
     * 'verdict fail' fails. */
    write_meta("cc-wild.meta", "300-capture-connect.pcapng", "wildcard attrs window rxposted\n");
    c = load("cc-wild.meta");
    run_one(c, &res);
    if (res.verdict != CF_PASS)
        fail_msg("%s", res.message);
    cf_case_free(c);
    free(c);
    write_meta("cc-wild-xfail.meta", "300-capture-connect.pcapng", "wildcard attrs window rxposted\nverdict fail\n");
    c = load("cc-wild-xfail.meta");
    run_one(c, &res);
    assert_int_equal(res.verdict, CF_FAIL);
    assert_non_null(strstr(res.message, "expects verdict fail"));
    cf_case_free(c);
    free(c);
}

/* Without 'echo', the capture's server Send (100 bytes of its own) is
 * expected; the responder echoes the tester's 3000-byte message instead. */
static void payload_is_compared_with_the_capture(void **state)
{
    (void)state;
    write_meta("cc-send.meta", "301-capture-send-echo.pcapng", "wildcard attrs window rxposted\n");
    struct cf_case *c = load("cc-send.meta");
    struct cf_result res;
    run_one(c, &res);
    print_message("%s\n", res.message);
    assert_int_equal(res.verdict, CF_FAIL);
    assert_non_null(strstr(res.message, "capture PDU 6 (frame 9)"));
    assert_non_null(strstr(res.message, "expected Send"));
    cf_case_free(c);
    free(c);
    /* With the fields where an echo differs from the captured Send as
     * wildcards (length and bytes, immediate data, numbering), it passes. */
    write_meta("cc-send-wild.meta", "301-capture-send-echo.pcapng",
               "wildcard attrs window rxposted payload imm idv msg eom\n");
    c = load("cc-send-wild.meta");
    run_one(c, &res);
    if (res.verdict != CF_PASS)
        fail_msg("%s", res.message);
    cf_case_free(c);
    free(c);
}

static void damaged_metadata_is_refused(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        const char *says;
    } bad[] = {
        {"require VITCP-4.3-ACCEPT-ON-MATCH\nbogus 1\n", "bad.meta:2: unknown directive 'bogus'"},
        {"require NO-SUCH-ID\n", "bad.meta:1: unknown requirement ID 'NO-SUCH-ID'"},
        {"tester client\n", "no 'require' line"},
        {"require VITCP-4.3-ACCEPT-ON-MATCH\ntester middle\n", "bad.meta:2: 'tester' is client or server"},
        {"require VITCP-4.3-ACCEPT-ON-MATCH\nwildcard msg nosuch\n", "bad.meta:2: unknown field 'nosuch'"},
        {"require VITCP-4.3-ACCEPT-ON-MATCH\nwildcard Sned:imm\n", "unknown segment type in 'Sned:imm'"},
        {"require VITCP-4.3-ACCEPT-ON-MATCH\ntiming 0\n", "'timing' must be at least 1 ms"},
        {"require VITCP-4.3-ACCEPT-ON-MATCH\nrole passive\n", "role passive is not supported"},
        {"require VITCP-4.3-ACCEPT-ON-MATCH\ncapture /nonexistent/x.pcapng\n", "/nonexistent/x.pcapng"},
        {"require VITCP-4.3-ACCEPT-ON-MATCH\n", "bad.pcap"}, /* no bad.pcapng / bad.pcap next to it */
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        write_file("bad.meta", bad[i].text);
        struct cf_case *c = malloc(sizeof *c);
        assert_non_null(c);
        char err[512] = "";
        int rc = cf_capcase_load("bad.meta", c, err, sizeof err);
        if (rc != -1 || !strstr(err, bad[i].says))
            fail_msg("meta %zu: rc %d, error '%s'", i, rc, err);
        cf_case_free(c);
        free(c);
    }
    /* the server side cannot be the tester of a capture its client opened */
    write_meta("cc-server.meta", "300-capture-connect.pcapng", "tester server\n");
    struct cf_case *c = malloc(sizeof *c);
    assert_non_null(c);
    char err[512];
    assert_int_equal(cf_capcase_load("cc-server.meta", c, err, sizeof err), -1);
    assert_non_null(strstr(err, "must send the first PDU, a ConnectRequest"));
    free(c);
    /* not a capture at all */
    write_file("junk.pcapng", "not a capture\n");
    write_file("junk.meta", "require VITCP-4.3-ACCEPT-ON-MATCH\n");
    c = malloc(sizeof *c);
    assert_non_null(c);
    assert_int_equal(cf_capcase_load("junk.meta", c, err, sizeof err), -1);
    assert_non_null(strstr(err, "junk.pcapng"));
    free(c);
}

static void run_records_are_not_case_metadata(void **state)
{
    (void)state;
    assert_true(cf_capcase_is_meta_name("300-capture-connect.meta"));
    assert_false(cf_capcase_is_meta_name("x.pcapng.meta"));
    assert_false(cf_capcase_is_meta_name("x.pcap.meta"));
    assert_false(cf_capcase_is_meta_name("x.case"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(shipped_capture_cases_load),
        cmocka_unit_test(mismatch_names_capture_pdu_and_values),
        cmocka_unit_test(payload_is_compared_with_the_capture),
        cmocka_unit_test(damaged_metadata_is_refused),
        cmocka_unit_test(run_records_are_not_case_metadata),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
