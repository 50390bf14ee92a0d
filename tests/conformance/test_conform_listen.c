/* Listen mode: the tester is the passive side and vipl-peer --connect the
 * implementation, started by --connect-cmd for each passive case. A correct
 * vipl-peer passes every passive case; with a fault the cases naming the
 * broken rule fail, and only with that rule. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "conform/cli.h"

struct run_out {
    int rc;
    char *text;
};

static struct run_out run_listen(const char *fault)
{
    char cmd[1024];
    /* --linger: vipl-peer outlives its disconnect (until the case ends and
     * its group gets SIGTERM), so a TCP connection the disconnect left open
     * shows (active-disconnect-close). */
    snprintf(cmd, sizeof cmd, "%s --connect 127.0.0.1:{port} --linger 3000%s%s", VIPL_PEER_PATH,
             fault ? " --fault " : "",
             fault ? fault : "");
    char *argv[] = {"vitcp-conform", "run", "--listen", "0", "--connect-cmd", cmd,
                    "--cases", CONFORM_CASES_DIR, "--slack", "1000", NULL};
    struct run_out o = {0, NULL};
    size_t n = 0;
    FILE *out = open_memstream(&o.text, &n);
    FILE *err = fopen("/dev/null", "w");
    assert_non_null(out);
    assert_non_null(err);
    o.rc = cf_main(10, argv, out, err);
    fclose(out);
    fclose(err);
    return o;
}

static bool have_peer(void)
{
    if (access(VIPL_PEER_PATH, X_OK) == 0)
        return true;
    print_message("SKIP: vipl-peer is not built (%s)\n", VIPL_PEER_PATH);
    return false;
}

static void correct_implementation_passes(void **state)
{
    (void)state;
    if (!have_peer())
        skip();
    struct run_out o = run_listen(NULL);
    print_message("%s", o.text);
    assert_int_equal(o.rc, 0);
    assert_non_null(strstr(o.text, "PASS    active-request"));
    assert_non_null(strstr(o.text, "PASS    active-reject"));
    assert_non_null(strstr(o.text, "PASS    active-crc-one-way"));
    assert_non_null(strstr(o.text, "PASS    active-disconnect-close"));
    assert_non_null(strstr(o.text, "PASS    capture-active-request")); /* role passive capture case */
    /* only passive cases ran (no --target) */
    assert_null(strstr(o.text, "accept-basic"));
    assert_non_null(strstr(o.text, "Ran 10: 10 passing"));
    free(o.text);
}

static void faults_fail_their_rule(void **state)
{
    (void)state;
    if (!have_peer())
        skip();
    static const struct { const char *fault, *rule; } faults[] = {
        {"skip-msg-num", "VITCP-3.2-MSG-NUM-SEQ"},
        {"ignore-mtu", "VITCP-3.3-MTU-RESPECTED"},
        {"omit-crc", "VITCP-3.6-CRC-ONLY-IF-NEGOTIATED"},
        {"no-close-on-disconnect", "VITCP-2.2.2.2.2-CLOSE-TCP-ON-VI-CLOSE"},
    };
    for (size_t k = 0; k < sizeof faults / sizeof faults[0]; k++) {
        struct run_out o = run_listen(faults[k].fault);
        assert_int_equal(o.rc, 1);
        char want[160];
        snprintf(want, sizeof want, "broke %s", faults[k].rule);
        /* a missing trailer reads as a bad CRC on the wire (C5) */
        if (!strstr(o.text, want) && !(strcmp(faults[k].fault, "omit-crc") == 0 &&
                                       strstr(o.text, "broke VITCP-3.6-CRC-VALID")))
            fail_msg("fault %s: no case broke %s:\n%s", faults[k].fault, faults[k].rule, o.text);
        /* every failing case names the faulted rule (or the CRC reading of a missing trailer, C5) */
        for (const char *p = strstr(o.text, "broke "); p; p = strstr(p + 1, "broke ")) {
            if (strncmp(p, want, strlen(want)) != 0 && strncmp(p, "broke VITCP-3.6-CRC-VALID", 25) != 0)
                fail_msg("fault %s: %.80s", faults[k].fault, p);
        }
        print_message("fault %-22s -> %s\n", faults[k].fault, faults[k].rule);
        free(o.text);
    }
}

static void passive_case_needs_listen(void **state)
{
    (void)state;
    /* a passive case alone without --listen: usage error, not a silent pass */
    char *argv[] = {"vitcp-conform", "run", "--connect-cmd", "true", NULL};
    FILE *null = fopen("/dev/null", "w");
    assert_int_equal(cf_main(4, argv, null, null), 2);
    fclose(null);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(passive_case_needs_listen),
        cmocka_unit_test(correct_implementation_passes),
        cmocka_unit_test(faults_fail_their_rule),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
