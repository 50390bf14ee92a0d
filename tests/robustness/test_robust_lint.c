/*
 * `vitcp-conform lint` on damaged captures: the binary (built with the
 * sanitizers) must exit 0, 1 or 2 within a time limit, say why on stderr
 * when it exits 2, print its summary otherwise, and never report a
 * sanitizer error or die from a signal. Captures are the valid samples of
 * captures/ and a hand-built pcapng, damaged by the seeded mutations of
 * pcap_mutate.c (VITCP_ROBUST_SEED replays a run).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "pcap_mutate.h"
#include "robust_common.h"

static const char *const bases[] = {"vitcp-full.pcap", "vitcp-full-ipv6.pcap", "vitcp-retx-differs.pcap",
                                    "vitcp-rdma-read.pcap", "vitcp-full-coalesced.pcap", "vitcp-dfc.pcap",
                                    "ift-session.pcap", "eep-frames.pcap"};
#define NBASES (sizeof bases / sizeof bases[0])

/* A JSON document as a whole: an object, braces and brackets balanced
 * outside strings. */
static bool looks_like_json(const char *s)
{
    int depth = 0;
    bool in_str = false, esc = false, started = false;
    for (const char *p = s; *p; p++) {
        if (in_str) {
            if (esc)
                esc = false;
            else if (*p == '\\')
                esc = true;
            else if (*p == '"')
                in_str = false;
            continue;
        }
        if (*p == '"')
            in_str = true;
        else if (*p == '{' || *p == '[')
            depth++, started = true;
        else if (*p == '}' || *p == ']')
            depth--;
        if (depth < 0)
            return false;
        if (started && depth == 0) {
            for (p++; *p; p++)
                if (*p != ' ' && *p != '\n')
                    return false;
            return true;
        }
    }
    return false;
}

static void lint_one(const char *path, bool json, const char *what, unsigned *by_status)
{
    char bin[] = VITCP_CONFORM_BIN, cmd[] = "lint", js[] = "--json", p[1024];
    snprintf(p, sizeof p, "%s", path);
    char *argv[] = {bin, cmd, json ? js : p, json ? p : NULL, NULL};
    struct rb_run res;
    rb_run(argv, 30.0, &res);
    if (res.timed_out)
        fail_msg("%s: lint did not finish in 30 s", what);
    if (res.signal)
        fail_msg("%s: lint died from signal %d; stderr: %.500s", what, res.signal, res.err);
    if (rb_has_sanitizer_report(res.err) || rb_has_sanitizer_report(res.out))
        fail_msg("%s: sanitizer report: %.2000s", what, res.err);
    if (res.status < 0 || res.status > 2)
        fail_msg("%s: exit status %d; stderr: %.500s", what, res.status, res.err);
    if (res.status == 2 && (strncmp(res.err, "vitcp-conform: ", 15) != 0 || rb_count_lines(res.err) < 1))
        fail_msg("%s: exit 2 without a 'vitcp-conform: ' message, stderr: '%.500s'", what, res.err);
    if (res.status != 2 && !json && strstr(res.out, "lint ") == NULL)
        fail_msg("%s: exit %d without the summary line", what, res.status);
    if (json && res.status != 2 && !looks_like_json(res.out))
        fail_msg("%s: --json output is not one JSON document: %.300s", what, res.out);
    by_status[res.status]++;
    rb_run_free(&res);
}

static void test_lint_mutated_captures(void **state)
{
    (void)state;
    char dir[512], path[700];
    rb_tmpdir(dir, sizeof dir, "lint");
    snprintf(path, sizeof path, "%s/m.pcap", dir);
    uint8_t *base[NBASES + 1];
    size_t blen[NBASES + 1], maxlen = 0;
    for (size_t i = 0; i < NBASES; i++) {
        char p[1024];
        snprintf(p, sizeof p, "%s/%s", CAPTURES_DIR, bases[i]);
        base[i] = rb_read_file(p, &blen[i]);
        assert_non_null(base[i]);
        if (blen[i] > maxlen)
            maxlen = blen[i];
    }
    base[NBASES] = rb_build_pcapng(&blen[NBASES]);
    uint8_t *mut = malloc(maxlen + RB_MUTATE_SLACK);
    unsigned by_status[3] = {0, 0, 0};

    /* The unmutated samples lint cleanly or with the findings they were made for. */
    for (size_t i = 0; i <= NBASES; i++) {
        assert_int_equal(rb_write_file(path, base[i], blen[i]), 0);
        lint_one(path, false, i < NBASES ? bases[i] : "pcapng", by_status);
    }
    assert_int_equal(by_status[2], 0);

    struct rb_rng r = {rb_seed("lint mutations", 0x5EED0101u)};
    const unsigned n = 120;
    for (unsigned it = 0; it < n; it++) {
        size_t b = (size_t)rb_below(&r, NBASES + 1);
        uint64_t iter_seed = rb_next(&r);
        struct rb_rng ir = {iter_seed};
        char desc[200], what[400];
        size_t len = rb_pcap_mutate(&ir, it % RB_MUT_COUNT, base[b], blen[b], mut,
                                    blen[b] + RB_MUTATE_SLACK, desc, sizeof desc);
        assert_int_equal(rb_write_file(path, mut, len), 0);
        snprintf(what, sizeof what, "iteration %u (iteration seed 0x%016llx) %s: %s", it,
                 (unsigned long long)iter_seed, b < NBASES ? bases[b] : "pcapng", desc);
        lint_one(path, it % 4 == 3, what, by_status);
    }
    fprintf(stderr, "# lint of %u damaged captures: exit 0: %u, 1: %u, 2: %u\n", n, by_status[0],
            by_status[1], by_status[2]);
    /* The damage is varied enough to reach all three outcomes. */
    assert_true(by_status[0] > 0 && by_status[1] > 0 && by_status[2] > 0);
    for (size_t i = 0; i <= NBASES; i++)
        free(base[i]);
    free(mut);
    rb_rmdir(dir);
}

/* Inputs that are not captures at all. */
static void test_lint_not_captures(void **state)
{
    (void)state;
    char dir[512], path[700];
    rb_tmpdir(dir, sizeof dir, "lint2");
    unsigned by_status[3] = {0, 0, 0};
    snprintf(path, sizeof path, "%s/empty.pcap", dir);
    assert_int_equal(rb_write_file(path, "", 0), 0);
    lint_one(path, false, "empty file", by_status);
    snprintf(path, sizeof path, "%s/text.pcap", dir);
    assert_int_equal(rb_write_file(path, "hello, world\n", 13), 0);
    lint_one(path, false, "text file", by_status);
    lint_one(dir, false, "a directory", by_status);
    lint_one("/nonexistent/x.pcap", false, "missing file", by_status);
    lint_one("/dev/null", true, "/dev/null", by_status);
    assert_int_equal(by_status[2], 5);
    rb_rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lint_not_captures),
        cmocka_unit_test(test_lint_mutated_captures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
