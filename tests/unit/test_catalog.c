/* The catalog is the project's single source of requirement IDs: IDs are
 * unique, well formed, and every entry says how it is checked. */
#include <ctype.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include "vitcp/catalog.h"
#include "vitcp/findings.h"

static int id_well_formed(const char *id)
{
    static const char *const prefixes[] = {"VITCP-", "IFT-", "EEP-", "WARP-", "VIA-"};
    int ok = 0;
    for (size_t i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++)
        if (strncmp(id, prefixes[i], strlen(prefixes[i])) == 0)
            ok = 1;
    for (const char *p = id; *p; p++)
        if (!(isupper((unsigned char)*p) || isdigit((unsigned char)*p) || *p == '-' || *p == '.'))
            ok = 0;
    return ok;
}

static void test_ids_unique_and_well_formed(void **state)
{
    (void)state;
    assert_true(vw_req_count() > 50);
    for (unsigned i = 1; i <= vw_req_count(); i++) {
        const struct vw_req_info *a = vw_req_info((enum vw_req)i);
        if (!id_well_formed(a->id))
            fail_msg("malformed requirement ID '%s'", a->id);
        assert_true(strlen(a->section) > 0);
        assert_true(strlen(a->text) > 0);
        assert_int_not_equal(a->check, 0);
        if ((a->check & VW_CHECK_UNTESTABLE) && strlen(a->reason) == 0)
            fail_msg("%s is untestable without a reason", a->id);
        for (unsigned j = i + 1; j <= vw_req_count(); j++)
            if (strcmp(a->id, vw_req_id((enum vw_req)j)) == 0)
                fail_msg("duplicate requirement ID '%s'", a->id);
    }
}

static void test_lookup_by_id(void **state)
{
    (void)state;
    assert_int_equal(vw_req_by_id("VITCP-3.6-CRC-ONLY-IF-NEGOTIATED"), VW_REQ_VITCP_3_6_CRC_ONLY_IF_NEGOTIATED);
    assert_int_equal(vw_req_by_id("VITCP-NO-SUCH-RULE"), VW_REQ_NONE);
    assert_int_equal(vw_req_by_id(NULL), VW_REQ_NONE);
    assert_string_equal(vw_req_id(VW_REQ_NONE), "");
    assert_string_equal(vw_req_id((enum vw_req)100000), "");
    assert_string_equal(vw_level_name(VW_LEVEL_MUST), "MUST");
}

static void test_findings_bounded(void **state)
{
    (void)state;
    struct vw_findings f;
    vw_findings_clear(&f);
    for (int i = 0; i < VW_FINDINGS_MAX + 5; i++)
        vw_findings_add(&f, VW_REQ_VITCP_3_2_VERSION, VW_SEV_ERROR, (uint32_t)i, 1, "version %d", i);
    assert_int_equal(f.count, VW_FINDINGS_MAX);
    assert_int_equal(f.dropped, 5);
    assert_string_equal(f.item[3].detail, "version 3");
    assert_true(vw_findings_has(&f, VW_REQ_VITCP_3_2_VERSION));
    assert_false(vw_findings_has(&f, VW_REQ_VITCP_3_6_CRC_VALID));
    vw_findings_add(NULL, VW_REQ_VITCP_3_2_VERSION, VW_SEV_ERROR, 0, 0, "ignored");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ids_unique_and_well_formed),
        cmocka_unit_test(test_lookup_by_id),
        cmocka_unit_test(test_findings_bounded),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
