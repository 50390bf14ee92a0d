/* Checksums: published check values (VITCP-3.6-CRC-VALID, IFT-4.2-IND-CRC /
 * IFT-5.1-HDR-CRC with the RFC 3720 B.4 vectors, WARP-A-ADLER-VALID), every
 * implementation path against the bitwise reference, chaining, and the
 * derived carry-less-multiply constants.
 *
 * Coverage of "every length at every alignment" stays fast because the
 * reference is computed once per source buffer as a running CRC over its
 * prefixes: ref[n] is the checksum of the first n bytes, so checking a path
 * on (length n, alignment a) costs only that path's run. The data for length
 * n is always the same prefix, copied to a heap block of exactly a + n bytes
 * starting at offset a, so the sanitizer catches any read past its end. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <zlib.h>
#include "vitcp/checksum.h"

enum { EXHAUSTIVE_MAX_LEN = 4096, ALIGNMENTS = 16, LARGE_MAX_LEN = 3 * 3 * 4096 + 3 * 256 + 41 };

struct path {
    enum vw_cksum_algo algo;
    enum vw_cksum_impl impl;
};

static uint8_t *source;            /* LARGE_MAX_LEN pseudo-random bytes */
static uint32_t *reference[3];     /* per algo: checksum of each prefix, 0..LARGE_MAX_LEN */

static uint32_t initial_value(enum vw_cksum_algo algo) { return algo == VW_ALGO_ADLER32 ? 1u : 0u; }

static uint32_t xorshift32(uint32_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 17;
    *s ^= *s << 5;
    return *s;
}

static int setup_reference(void **state)
{
    (void)state;
    source = malloc(LARGE_MAX_LEN);
    if (!source)
        return -1;
    uint32_t seed = 0x1234567u;
    for (size_t i = 0; i < LARGE_MAX_LEN; i++)
        source[i] = (uint8_t)(xorshift32(&seed) >> 13);
    for (int algo = 0; algo < 3; algo++) {
        reference[algo] = malloc((LARGE_MAX_LEN + 1) * sizeof(uint32_t));
        if (!reference[algo])
            return -1;
        uint32_t v = initial_value((enum vw_cksum_algo)algo);
        reference[algo][0] = v;
        for (size_t n = 0; n < LARGE_MAX_LEN; n++) {
            v = vw_cksum_update_impl((enum vw_cksum_algo)algo, VW_IMPL_BITWISE, v, source + n, 1);
            reference[algo][n + 1] = v;
        }
    }
    return 0;
}

static int teardown_reference(void **state)
{
    (void)state;
    free(source);
    for (int algo = 0; algo < 3; algo++)
        free(reference[algo]);
    return 0;
}

/* --- published values ---------------------------------------------------- */

static void test_check_values(void **state)
{
    (void)state;
    const char *digits = "123456789";
    assert_int_equal(vw_crc_vitcp(digits, 9), VW_CRC_VITCP_CHECK);
    assert_int_equal(vw_crc_vitcp(digits, 9), 0xE07E661Eu);
    assert_int_equal(vw_crc32c(digits, 9), 0xE3069283u);
    assert_int_equal(vw_adler32(digits, 9), 0x091E01DEu);
    for (int algo = 0; algo < 3; algo++)
        for (int impl = 0; impl < VW_CKSUM_IMPL_COUNT; impl++) {
            uint32_t expect = algo == VW_ALGO_CRC_VITCP ? 0xE07E661Eu : algo == VW_ALGO_CRC32C ? 0xE3069283u : 0x091E01DEu;
            assert_int_equal(vw_cksum_update_impl(algo, impl, initial_value(algo), digits, 9), expect);
        }
    /* Empty input: the CRCs of nothing are 0, Adler-32 is 1. */
    assert_int_equal(vw_crc_vitcp(digits, 0), 0);
    assert_int_equal(vw_crc32c(digits, 0), 0);
    assert_int_equal(vw_adler32(digits, 0), 1);
}

/* V4: the VI/TCP trailer for "123456789" reads 1E 66 7E E0. */
static void test_vitcp_trailer_bytes(void **state)
{
    (void)state;
    uint8_t trailer[4];
    vw_put_le32(trailer, vw_crc_vitcp("123456789", 9));
    const uint8_t expect[4] = {0x1E, 0x66, 0x7E, 0xE0};
    assert_memory_equal(trailer, expect, 4);
}

static uint32_t reflect32(uint32_t v)
{
    uint32_t r = 0;
    for (int i = 0; i < 32; i++)
        if (v & (1u << i))
            r |= 1u << (31 - i);
    return r;
}

static uint8_t reflect8(uint8_t v)
{
    uint8_t r = 0;
    for (int i = 0; i < 8; i++)
        if (v & (1u << i))
            r |= (uint8_t)(1u << (7 - i));
    return r;
}

/* An independent definition of the VI/TCP CRC: the reflected CRC equals the
 * MSB-first CRC with the same generator of the bit-reversed bytes, reversed. */
static void test_vitcp_matches_msb_first_definition(void **state)
{
    (void)state;
    uint8_t reversed[257];
    for (size_t n = 0; n <= 256; n++) {
        for (size_t i = 0; i < n; i++)
            reversed[i] = reflect8(source[i]);
        assert_int_equal(vw_crc_vitcp(source, n), reflect32(vw_crc_vitcp_msb_first(reversed, n)));
    }
    /* The table path of the MSB-first reading against its bit-by-bit
     * definition, at every length and alignment up to 64 + 8. */
    for (size_t off = 0; off < 8; off++)
        for (size_t n = 0; n <= 64; n++) {
            uint32_t reg = 0xFFFFFFFFu;
            for (size_t i = 0; i < n; i++) {
                reg ^= (uint32_t)source[off + i] << 24;
                for (int k = 0; k < 8; k++)
                    reg = (reg << 1) ^ (VW_CRC_VITCP_POLY_NORMAL & (0u - (reg >> 31)));
            }
            assert_int_equal(vw_crc_vitcp_msb_first(source + off, n), ~reg);
        }
    /* ... and the VI/TCP CRC is not CRC-32C nor zlib's CRC-32 (V3). */
    assert_int_not_equal(vw_crc_vitcp(source, 64), vw_crc32c(source, 64));
    assert_int_not_equal(vw_crc_vitcp(source, 64), (uint32_t)crc32(0, source, 64));
}

/* RFC 3720 appendix B.4, written in iSCSI byte order (I3). */
static void expect_crc32c_bytes(const uint8_t *data, size_t len, const uint8_t wire[4])
{
    for (int impl = 0; impl < VW_CKSUM_IMPL_COUNT; impl++) {
        uint8_t got[4];
        vw_put_le32(got, vw_cksum_update_impl(VW_ALGO_CRC32C, impl, 0, data, len));
        assert_memory_equal(got, wire, 4);
    }
    uint8_t got[4];
    vw_put_le32(got, vw_crc32c(data, len));
    assert_memory_equal(got, wire, 4);
}

static void test_crc32c_rfc3720_vectors(void **state)
{
    (void)state;
    uint8_t buf[48];
    memset(buf, 0x00, 32);
    expect_crc32c_bytes(buf, 32, (const uint8_t[]){0xAA, 0x36, 0x91, 0x8A});
    assert_int_equal(vw_crc32c(buf, 32), 0x8A9136AAu);
    memset(buf, 0xFF, 32);
    expect_crc32c_bytes(buf, 32, (const uint8_t[]){0x43, 0xAB, 0xA8, 0x62});
    for (int i = 0; i < 32; i++)
        buf[i] = (uint8_t)i;
    expect_crc32c_bytes(buf, 32, (const uint8_t[]){0x4E, 0x79, 0xDD, 0x46});
    for (int i = 0; i < 32; i++)
        buf[i] = (uint8_t)(31 - i);
    expect_crc32c_bytes(buf, 32, (const uint8_t[]){0x5C, 0xDB, 0x3F, 0x11});
    static const uint8_t iscsi_read[48] = {
        0x01, 0xC0, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
        0x14, 0x00, 0x00, 0x00, 0x00, 0x00, 0x04, 0x00, 0x00, 0x00, 0x00, 0x14, 0x00, 0x00, 0x00, 0x18,
        0x28, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    };
    expect_crc32c_bytes(iscsi_read, sizeof iscsi_read, (const uint8_t[]){0x56, 0x3A, 0x96, 0xD9});
}

static void test_adler32_vectors(void **state)
{
    (void)state;
    assert_int_equal(vw_adler32("", 0), 0x00000001u);
    assert_int_equal(vw_adler32("a", 1), 0x00620062u);
    assert_int_equal(vw_adler32("abc", 3), 0x024D0127u);
    assert_int_equal(vw_adler32("message digest", 14), 0x29750586u);
    assert_int_equal(vw_adler32("Wikipedia", 9), 0x11E60398u);
    /* Long runs of 0xFF force the modulo in both sums (zlib defers it for
     * 5552 bytes); the reference reduces every byte. */
    enum { LEN = 100000 };
    uint8_t *ff = malloc(LEN);
    assert_non_null(ff);
    memset(ff, 0xFF, LEN);
    assert_int_equal(vw_adler32(ff, LEN), vw_cksum_update_impl(VW_ALGO_ADLER32, VW_IMPL_BITWISE, 1, ff, LEN));
    free(ff);
}

/* --- every path against the reference ------------------------------------ */

static void skip_if_unavailable(const struct path *path)
{
    if (!vw_cksum_impl_available(path->algo, path->impl)) {
        print_message("[  SKIPPED ] %s/%s: not available on this CPU\n", vw_cksum_algo_name(path->algo),
                      vw_cksum_impl_name(path->impl));
        skip();
    }
}

static void check_one(const struct path *path, size_t len, size_t alignment)
{
    uint8_t *block = malloc(alignment + len + 1); /* +1: malloc(0) may be NULL */
    assert_non_null(block);
    memcpy(block + alignment, source, len);
    uint32_t got = vw_cksum_update_impl(path->algo, path->impl, initial_value(path->algo), block + alignment, len);
    free(block);
    if (got != reference[path->algo][len])
        fail_msg("%s/%s length %zu alignment %zu: got %08x, reference %08x", vw_cksum_algo_name(path->algo),
                 vw_cksum_impl_name(path->impl), len, alignment, got, reference[path->algo][len]);
}

/* Every length 0..4096 at every alignment 0..15. */
static void test_path_every_length_every_alignment(void **state)
{
    const struct path *path = *state;
    skip_if_unavailable(path);
    for (size_t len = 0; len <= EXHAUSTIVE_MAX_LEN; len++)
        for (size_t alignment = 0; alignment < ALIGNMENTS; alignment++)
            check_one(path, len, alignment);
}

/* Lengths past 4096 reach the 3 x 4096-byte blocks of the CRC-32C path and
 * long folding runs: a stride of lengths plus every block boundary +-1. */
static void test_path_large_lengths(void **state)
{
    const struct path *path = *state;
    skip_if_unavailable(path);
    uint32_t seed = 99;
    for (size_t len = EXHAUSTIVE_MAX_LEN; len <= LARGE_MAX_LEN; len += 211)
        check_one(path, len, xorshift32(&seed) % ALIGNMENTS);
    static const size_t edges[] = {3 * 256, 3 * 4096, 2 * 3 * 4096, 3 * 3 * 4096, 3 * 3 * 4096 + 3 * 256};
    for (size_t i = 0; i < sizeof edges / sizeof edges[0]; i++)
        for (size_t len = edges[i] - 1; len <= edges[i] + 1; len++)
            for (size_t alignment = 0; alignment < ALIGNMENTS; alignment += 5)
                check_one(path, len, alignment);
    check_one(path, LARGE_MAX_LEN, 3);
}

/* update(update(init, a), b) == checksum(a || b) at every split point. */
static void test_path_incremental_every_split(void **state)
{
    const struct path *path = *state;
    skip_if_unavailable(path);
    static const size_t lengths[] = {1, 2, 15, 16, 17, 63, 64, 65, 79, 128, 200, 769, 1500, 4096, 3 * 4096 + 5};
    for (size_t i = 0; i < sizeof lengths / sizeof lengths[0]; i++) {
        size_t len = lengths[i];
        for (size_t split = 0; split <= len; split++) {
            uint32_t v = vw_cksum_update_impl(path->algo, path->impl, initial_value(path->algo), source, split);
            v = vw_cksum_update_impl(path->algo, path->impl, v, source + split, len - split);
            if (v != reference[path->algo][len])
                fail_msg("%s/%s length %zu split at %zu: %08x != %08x", vw_cksum_algo_name(path->algo),
                         vw_cksum_impl_name(path->impl), len, split, v, reference[path->algo][len]);
        }
    }
}

/* Paths share one chaining value, so a checksum may be started on one path
 * and finished on another; the public functions chain the same way. */
static void test_paths_chain_across(void **state)
{
    (void)state;
    for (int algo = 0; algo < 3; algo++)
        for (int first = 0; first < VW_CKSUM_IMPL_COUNT; first++)
            for (int second = 0; second < VW_CKSUM_IMPL_COUNT; second++) {
                uint32_t v = vw_cksum_update_impl(algo, first, initial_value(algo), source, 1000);
                v = vw_cksum_update_impl(algo, second, v, source + 1000, 777);
                assert_int_equal(v, reference[algo][1777]);
            }
    uint32_t v = vw_crc_vitcp_update(vw_crc_vitcp(source, 100), source + 100, 900);
    assert_int_equal(v, reference[VW_ALGO_CRC_VITCP][1000]);
    v = vw_crc32c_update(vw_crc32c(source, 100), source + 100, 900);
    assert_int_equal(v, reference[VW_ALGO_CRC32C][1000]);
    v = vw_adler32_update(vw_adler32(source, 100), source + 100, 900);
    assert_int_equal(v, reference[VW_ALGO_ADLER32][1000]);
}

/* The default dispatch is the fastest path this CPU has. */
static void test_selected_is_fastest_available(void **state)
{
    (void)state;
    for (int algo = 0; algo < 2; algo++) {
        enum vw_cksum_impl sel = vw_cksum_impl_selected(algo);
        if (vw_cksum_impl_available(algo, VW_IMPL_HW_AVX512))
            assert_int_equal(sel, VW_IMPL_HW_AVX512);
        else if (vw_cksum_impl_available(algo, VW_IMPL_HW))
            assert_int_equal(sel, VW_IMPL_HW);
        else
            assert_int_not_equal(sel, VW_IMPL_BITWISE);
        print_message("[  INFO    ] %s uses the %s path\n", vw_cksum_algo_name(algo), vw_cksum_impl_name(sel));
    }
    assert_false(vw_cksum_impl_available(VW_ALGO_CRC_VITCP, VW_IMPL_HW_1STREAM));
    assert_true(vw_cksum_impl_available(VW_ALGO_CRC32C, VW_IMPL_TABLE));
    assert_string_equal(vw_cksum_impl_name(VW_IMPL_HW_1STREAM), "hw-1stream");
    assert_string_equal(vw_cksum_algo_name(VW_ALGO_CRC_VITCP), "crc-vitcp");
}

/* --- the derived constants ---------------------------------------------- */

/* The generator reproduces the published PCLMULQDQ constants of the Ethernet
 * CRC-32 (Intel's white paper / Linux crc32-pclmul: k1..k5, mu, P'). */
static void test_clmul_constants_match_published_crc32(void **state)
{
    (void)state;
    const uint32_t crc32_reflected = 0xEDB88320u;
    assert_int_equal(vw_crc_clmul_fold_constant(crc32_reflected, 4 * 128 + 32), 0x154442BD4ull);
    assert_int_equal(vw_crc_clmul_fold_constant(crc32_reflected, 4 * 128 - 32), 0x1C6E41596ull);
    assert_int_equal(vw_crc_clmul_fold_constant(crc32_reflected, 128 + 32), 0x1751997D0ull);
    assert_int_equal(vw_crc_clmul_fold_constant(crc32_reflected, 128 - 32), 0x0CCAA009Eull);
    assert_int_equal(vw_crc_clmul_fold_constant(crc32_reflected, 64), 0x163CD6124ull);
    assert_int_equal(vw_crc_barrett_mu(crc32_reflected), 0x1F7011641ull);
    assert_int_equal(vw_crc_clmul_poly(crc32_reflected), 0x1DB710641ull);
}

/* For the VI/TCP generator, x^n mod P agrees with the bitwise CRC: the raw
 * register (start 0, no final XOR) of the byte 01 then k zero bytes is
 * x^(8k + 39) mod P. */
static void test_xpow_matches_bitwise_crc(void **state)
{
    (void)state;
    uint8_t msg[70] = {0x01};
    for (unsigned k = 0; k < 69; k++) {
        uint32_t raw = ~vw_cksum_update_impl(VW_ALGO_CRC_VITCP, VW_IMPL_BITWISE, 0xFFFFFFFFu, msg, k + 1);
        assert_int_equal(vw_crc_xpow_mod(VW_CRC_VITCP_POLY_REFLECTED, 8 * k + 39), raw);
        raw = ~vw_cksum_update_impl(VW_ALGO_CRC32C, VW_IMPL_BITWISE, 0xFFFFFFFFu, msg, k + 1);
        assert_int_equal(vw_crc_xpow_mod(0x82F63B78u, 8 * k + 39), raw);
    }
}

/* mu = floor(x^64 / P): mu * P must be x^64 plus a remainder of degree < 32. */
static void test_barrett_mu_is_quotient(void **state)
{
    (void)state;
    uint64_t mu_reflected = vw_crc_barrett_mu(VW_CRC_VITCP_POLY_REFLECTED);
    uint64_t mu = 0; /* back to the normal domain: bit d = coefficient of x^d */
    for (int j = 0; j <= 32; j++)
        if (mu_reflected & (1ull << j))
            mu |= 1ull << (32 - j);
    uint64_t poly = (1ull << 32) | VW_CRC_VITCP_POLY_NORMAL;
    uint64_t lo = 0, hi = 0; /* 128-bit carry-less product */
    for (int i = 0; i <= 32; i++)
        if (mu & (1ull << i)) {
            lo ^= poly << i;
            hi ^= i ? poly >> (64 - i) : 0;
        }
    assert_int_equal(hi, 1);              /* x^64 */
    assert_int_equal(lo >> 32, 0);        /* nothing between x^32 and x^63 */
    assert_int_equal(vw_crc_clmul_poly(VW_CRC_VITCP_POLY_REFLECTED), ((uint64_t)VW_CRC_VITCP_POLY_REFLECTED << 1) | 1);
}

static const struct path paths[] = {
    {VW_ALGO_CRC_VITCP, VW_IMPL_TABLE}, {VW_ALGO_CRC_VITCP, VW_IMPL_HW},     {VW_ALGO_CRC32C, VW_IMPL_TABLE},
    {VW_ALGO_CRC32C, VW_IMPL_HW},       {VW_ALGO_CRC32C, VW_IMPL_HW_1STREAM}, {VW_ALGO_ADLER32, VW_IMPL_TABLE},
    {VW_ALGO_ADLER32, VW_IMPL_HW},      {VW_ALGO_CRC_VITCP, VW_IMPL_HW_AVX512}, {VW_ALGO_CRC32C, VW_IMPL_HW_AVX512},
};
enum { PATH_COUNT = sizeof paths / sizeof paths[0] };

/* One named test per path and property, so a skipped path shows by name. */
#define PATH_TEST(i, fn, what)                                                                     \
    {.name = path_names[i][what], .test_func = fn, .initial_state = (void *)&paths[i]}
static char path_names[PATH_COUNT][3][64];

int main(void)
{
    static const char *const what[3] = {"every length 0..4096 x every alignment", "large lengths and block edges",
                                        "incremental, split at every point"};
    for (int i = 0; i < PATH_COUNT; i++)
        for (int w = 0; w < 3; w++)
            snprintf(path_names[i][w], sizeof path_names[i][w], "%s/%s: %s", vw_cksum_algo_name(paths[i].algo),
                     vw_cksum_impl_name(paths[i].impl), what[w]);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_check_values),
        cmocka_unit_test(test_vitcp_trailer_bytes),
        cmocka_unit_test(test_vitcp_matches_msb_first_definition),
        cmocka_unit_test(test_crc32c_rfc3720_vectors),
        cmocka_unit_test(test_adler32_vectors),
        PATH_TEST(0, test_path_every_length_every_alignment, 0), PATH_TEST(0, test_path_large_lengths, 1),
        PATH_TEST(0, test_path_incremental_every_split, 2),      PATH_TEST(1, test_path_every_length_every_alignment, 0),
        PATH_TEST(1, test_path_large_lengths, 1),                PATH_TEST(1, test_path_incremental_every_split, 2),
        PATH_TEST(2, test_path_every_length_every_alignment, 0), PATH_TEST(2, test_path_large_lengths, 1),
        PATH_TEST(2, test_path_incremental_every_split, 2),      PATH_TEST(3, test_path_every_length_every_alignment, 0),
        PATH_TEST(3, test_path_large_lengths, 1),                PATH_TEST(3, test_path_incremental_every_split, 2),
        PATH_TEST(4, test_path_every_length_every_alignment, 0), PATH_TEST(4, test_path_large_lengths, 1),
        PATH_TEST(4, test_path_incremental_every_split, 2),      PATH_TEST(5, test_path_every_length_every_alignment, 0),
        PATH_TEST(5, test_path_large_lengths, 1),                PATH_TEST(5, test_path_incremental_every_split, 2),
        PATH_TEST(6, test_path_every_length_every_alignment, 0), PATH_TEST(6, test_path_large_lengths, 1),
        PATH_TEST(6, test_path_incremental_every_split, 2),      PATH_TEST(7, test_path_every_length_every_alignment, 0),
        PATH_TEST(7, test_path_large_lengths, 1),                PATH_TEST(7, test_path_incremental_every_split, 2),
        PATH_TEST(8, test_path_every_length_every_alignment, 0), PATH_TEST(8, test_path_large_lengths, 1),
        PATH_TEST(8, test_path_incremental_every_split, 2),
        cmocka_unit_test(test_paths_chain_across),
        cmocka_unit_test(test_selected_is_fastest_available),
        cmocka_unit_test(test_clmul_constants_match_published_crc32),
        cmocka_unit_test(test_xpow_matches_bitwise_crc),
        cmocka_unit_test(test_barrett_mu_is_quotient),
    };
    return cmocka_run_group_tests(tests, setup_reference, teardown_reference);
}
