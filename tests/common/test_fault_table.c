/* The shared fault table (common/, vitcp/fault_table.h): lookups by name and
 * by requirement ID, bounds-checked accessors, the --list-faults printer
 * (its exact bytes, and a stream that cannot be written); and, as a
 * program's rows on it, ift-peer's: every name is unique and found again,
 * every ID is in the catalog (warp-peer's and pktway-node's are tested in
 * tests/warp and tests/pktway). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "vitcp/catalog.h"
#include "vitcp/fault_table.h"

#include "faults.h" /* ift-peer's */

#define TEST_FAULTS(X)                                            \
    X(ONE, "one", "TEST-1-ONE", "the first")                      \
    X(TWO, "two", "TEST-2-TWO", "the second")                     \
    X(THREE, "three", "TEST-3-THREE", "the third, with a longer name")

enum test_fault {
    T_NONE = 0,
#define T_ENUM(sym, name, id, what) T_##sym,
    TEST_FAULTS(T_ENUM)
#undef T_ENUM
    T_COUNT
};

FAULT_TABLE_DECLARE(t, enum test_fault);
static const struct fault_row rows[] = {FAULT_ROW_NONE, TEST_FAULTS(FAULT_ROW)};
FAULT_TABLE_DEFINE(t, enum test_fault, rows, T_COUNT)

static void test_lookup(void **state)
{
    (void)state;
    assert_int_equal(t_fault_by_name("one"), T_ONE);
    assert_int_equal(t_fault_by_name("three"), T_THREE);
    assert_int_equal(t_fault_by_name("TEST-2-TWO"), T_TWO);
    assert_int_equal(t_fault_by_name("none"), T_NONE); /* not a fault */
    assert_int_equal(t_fault_by_name(""), T_NONE);     /* none's ID is "", and none is never found */
    assert_int_equal(t_fault_by_name("On"), T_NONE);
    assert_int_equal(t_fault_by_name("one "), T_NONE);
    assert_int_equal(t_fault_by_name(NULL), T_NONE);
}

static void test_accessors(void **state)
{
    (void)state;
    assert_string_equal(t_fault_name(T_TWO), "two");
    assert_string_equal(t_fault_req_id(T_THREE), "TEST-3-THREE");
    assert_string_equal(t_fault_what(T_ONE), "the first");
    assert_string_equal(t_fault_name(T_NONE), "none");
    assert_string_equal(t_fault_req_id(T_NONE), "");
    /* out of range: row 0, never a read past the table */
    assert_string_equal(t_fault_name(T_COUNT), "none");
    assert_string_equal(t_fault_what((enum test_fault)1000), "no fault");
    assert_string_equal(t_fault_req_id((enum test_fault)-1), "");
}

static void test_list(void **state)
{
    (void)state;
    FILE *f = tmpfile();
    assert_non_null(f);
    assert_int_equal(t_fault_list(f), 0);
    char buf[256] = {0};
    rewind(f);
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    const char *want = "one TEST-1-ONE\ntwo TEST-2-TWO\nthree TEST-3-THREE\n";
    assert_int_equal(n, strlen(want));
    assert_string_equal(buf, want);
}

static void test_list_write_fails(void **state)
{
    (void)state;
    FILE *f = fopen("/dev/full", "w");
    if (!f)
        skip();
    setvbuf(f, NULL, _IONBF, 0); /* every row written at once: the first fails */
    assert_int_equal(t_fault_list(f), -1);
    fclose(f);
}

typedef const char *(*field_fn)(unsigned f);
static const char *ift_name(unsigned f) { return ift_fault_name((enum ift_fault)f); }
static const char *ift_id(unsigned f) { return ift_fault_req_id((enum ift_fault)f); }
static unsigned ift_find(const char *s) { return (unsigned)ift_fault_by_name(s); }

/* A program's rows: named uniquely, found again by name, IDs in the catalog;
 * the number of rows is where the name turns to "none" again. */
static unsigned check_rows(const char *prog, field_fn name, field_fn id, unsigned (*find)(const char *))
{
    unsigned n = 1;
    while (strcmp(name(n), "none") != 0) {
        if (vw_req_by_id(id(n)) == VW_REQ_NONE)
            fail_msg("%s fault %s names %s, not in the catalog", prog, name(n), id(n));
        if (find(name(n)) != n)
            fail_msg("%s fault %s is not found by its name", prog, name(n));
        for (unsigned g = 1; g < n; g++)
            if (!strcmp(name(g), name(n)))
                fail_msg("%s has two faults named %s", prog, name(n));
        n++;
    }
    assert_string_equal(name(0), "none");
    return n;
}

static void test_program_rows(void **state)
{
    (void)state;
    assert_int_equal(check_rows("ift-peer", ift_name, ift_id, ift_find), FAULT_COUNT);
    assert_int_equal(ift_fault_by_name("IFT-4.2-VTAG-RANDOM"), FAULT_FIXED_VTAG);
    assert_int_equal(ift_fault_by_name("nonsense"), FAULT_NONE);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lookup),           cmocka_unit_test(test_accessors),
        cmocka_unit_test(test_list),             cmocka_unit_test(test_list_write_fails),
        cmocka_unit_test(test_program_rows),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
