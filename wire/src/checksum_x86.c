/* x86-64 hardware paths, compiled with per-function target attributes so
 * the library builds for any x86-64 and picks these only when the CPU has
 * the instructions (vw_crc_x86_init, called once from checksum.c).
 *
 *  - CRC-32C with the SSE4.2 crc32 instruction. Its latency is 3 cycles and
 *    it can start one per cycle, so one dependent chain (the 1-stream path,
 *    kept as the baseline) uses a third of the unit; the 3-stream path runs
 *    three chains over three adjacent blocks and joins them with one
 *    carry-less multiply per block (a CRC shifted over n zero bytes).
 *  - VI/TCP CRC (generator 0x82608EDB reflected, no instruction for it) by
 *    PCLMULQDQ folding: four 128-bit lanes folded 64 bytes at a time, then
 *    reduced to 32 bits with a Barrett reduction. All constants come from
 *    checksum_constants.c at start-up; docs/checksums.md shows the algebra. */
#include "checksum_paths.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))

#include <immintrin.h>
#include <string.h>

#define TARGET_SSE42 __attribute__((target("sse4.2")))
#define TARGET_SSE42_CLMUL __attribute__((target("sse4.2,pclmul")))

static int has_sse42;
static int has_clmul;

/* CRC-32C 3-stream block sizes (bytes per stream) and the constants that
 * shift a CRC over one and two blocks of zero bytes. */
enum { CRC32C_LONG_BLOCK = 4096, CRC32C_SHORT_BLOCK = 256 };
static uint64_t crc32c_shift_long_1, crc32c_shift_long_2;
static uint64_t crc32c_shift_short_1, crc32c_shift_short_2;

/* VI/TCP CRC folding constants. */
static uint64_t vitcp_fold512_lo, vitcp_fold512_hi; /* 4 lanes forward 512 bits */
static uint64_t vitcp_fold128_lo, vitcp_fold128_hi; /* 1 lane forward 128 bits */
static uint64_t vitcp_x96, vitcp_x64, vitcp_mu, vitcp_poly;

/* A constant multiplying a 32-bit reflected CRC so that one crc32q of the
 * 64-bit product equals the CRC advanced over `bytes` zero bytes:
 * crc32q(0, c*K) = c * K * x^33 (mod P), hence K = x^(8*bytes - 33). */
static uint64_t crc32c_shift_constant(unsigned bytes)
{
    return vw_crc_xpow_mod(VW_CRC32C_POLY_REFLECTED, 8ull * bytes - 33);
}

void vw_crc_x86_init(void)
{
    __builtin_cpu_init();
    has_sse42 = __builtin_cpu_supports("sse4.2") != 0;
    has_clmul = has_sse42 && __builtin_cpu_supports("pclmul") != 0;

    crc32c_shift_long_1 = crc32c_shift_constant(CRC32C_LONG_BLOCK);
    crc32c_shift_long_2 = crc32c_shift_constant(2 * CRC32C_LONG_BLOCK);
    crc32c_shift_short_1 = crc32c_shift_constant(CRC32C_SHORT_BLOCK);
    crc32c_shift_short_2 = crc32c_shift_constant(2 * CRC32C_SHORT_BLOCK);

    const uint32_t p = VW_CRC_VITCP_POLY_REFLECTED;
    vitcp_fold512_lo = vw_crc_clmul_fold_constant(p, 512 + 32);
    vitcp_fold512_hi = vw_crc_clmul_fold_constant(p, 512 - 32);
    vitcp_fold128_lo = vw_crc_clmul_fold_constant(p, 128 + 32);
    vitcp_fold128_hi = vw_crc_clmul_fold_constant(p, 128 - 32);
    vitcp_x96 = vw_crc_clmul_fold_constant(p, 96);
    vitcp_x64 = vw_crc_clmul_fold_constant(p, 64);
    vitcp_mu = vw_crc_barrett_mu(p);
    vitcp_poly = vw_crc_clmul_poly(p);
}

int vw_crc_x86_has_sse42(void) { return has_sse42; }
int vw_crc_x86_has_clmul(void) { return has_clmul; }

static inline uint64_t load64(const uint8_t *p)
{
    uint64_t v;
    memcpy(&v, p, sizeof v); /* unaligned-safe; one mov */
    return v;
}

TARGET_SSE42 uint32_t vw_crc32c_sse42_1stream(uint32_t reg, const uint8_t *p, size_t len)
{
    uint64_t c = reg;
    while (len >= 8) {
        c = _mm_crc32_u64(c, load64(p));
        p += 8;
        len -= 8;
    }
    while (len--)
        c = _mm_crc32_u8((uint32_t)c, *p++);
    return (uint32_t)c;
}

/* Runs three chains over blocks [p, p+block), [p+block, p+2*block),
 * [p+2*block, p+3*block) and joins them:
 * crc = shift(c0, 2*block) ^ shift(c1, block) ^ c2, where the two shifts are
 * carry-less products reduced together by one crc32q. */
TARGET_SSE42_CLMUL static inline uint32_t crc32c_three_blocks(uint32_t reg, const uint8_t *p, size_t block,
                                                              uint64_t shift_1, uint64_t shift_2)
{
    uint64_t c0 = reg, c1 = 0, c2 = 0;
    const uint8_t *end = p + block;
    do {
        c0 = _mm_crc32_u64(c0, load64(p));
        c1 = _mm_crc32_u64(c1, load64(p + block));
        c2 = _mm_crc32_u64(c2, load64(p + 2 * block));
        p += 8;
    } while (p < end);
    __m128i a = _mm_clmulepi64_si128(_mm_cvtsi64_si128((long long)c0), _mm_cvtsi64_si128((long long)shift_2), 0x00);
    __m128i b = _mm_clmulepi64_si128(_mm_cvtsi64_si128((long long)c1), _mm_cvtsi64_si128((long long)shift_1), 0x00);
    uint64_t joined = (uint64_t)_mm_cvtsi128_si64(_mm_xor_si128(a, b));
    return (uint32_t)_mm_crc32_u64(0, joined) ^ (uint32_t)c2;
}

TARGET_SSE42_CLMUL uint32_t vw_crc32c_sse42_3stream(uint32_t reg, const uint8_t *p, size_t len)
{
    while (len >= 3 * CRC32C_LONG_BLOCK) {
        reg = crc32c_three_blocks(reg, p, CRC32C_LONG_BLOCK, crc32c_shift_long_1, crc32c_shift_long_2);
        p += 3 * CRC32C_LONG_BLOCK;
        len -= 3 * CRC32C_LONG_BLOCK;
    }
    while (len >= 3 * CRC32C_SHORT_BLOCK) {
        reg = crc32c_three_blocks(reg, p, CRC32C_SHORT_BLOCK, crc32c_shift_short_1, crc32c_shift_short_2);
        p += 3 * CRC32C_SHORT_BLOCK;
        len -= 3 * CRC32C_SHORT_BLOCK;
    }
    return vw_crc32c_sse42_1stream(reg, p, len);
}

/* One 128-bit lane X (first byte in bit 0..7, i.e. reflected) carried D bits
 * forward: its first 8 bytes times x^(D+32), its last 8 bytes times x^(D-32)
 * (the constants pair k holds them low/high). */
TARGET_SSE42_CLMUL static inline __m128i fold(__m128i x, __m128i k)
{
    return _mm_xor_si128(_mm_clmulepi64_si128(x, k, 0x00), _mm_clmulepi64_si128(x, k, 0x11));
}

/* The raw CRC register of the 16 bytes X with a zero start register, i.e.
 * X(x) * x^32 mod P, in three steps: 128 -> 96 bits (first 8 bytes times
 * x^96), 96 -> 64 bits (first 4 bytes times x^64), then Barrett. */
TARGET_SSE42_CLMUL static inline uint32_t reduce128(__m128i x)
{
    const __m128i low32 = _mm_set_epi32(0, 0, 0, -1);
    __m128i k = _mm_set_epi64x((long long)vitcp_x64, (long long)vitcp_x96);
    __m128i s = _mm_xor_si128(_mm_clmulepi64_si128(x, k, 0x00), _mm_srli_si128(x, 8));
    s = _mm_xor_si128(_mm_clmulepi64_si128(_mm_and_si128(s, low32), k, 0x10), _mm_srli_si128(s, 4));
    /* Barrett: q = floor(high half * mu / x^32); remainder = low half + q*P. */
    __m128i b = _mm_set_epi64x((long long)vitcp_poly, (long long)vitcp_mu);
    __m128i q = _mm_clmulepi64_si128(_mm_and_si128(s, low32), b, 0x00);
    __m128i qp = _mm_clmulepi64_si128(_mm_and_si128(q, low32), b, 0x10);
    return (uint32_t)_mm_extract_epi32(_mm_xor_si128(s, qp), 1);
}

TARGET_SSE42_CLMUL uint32_t vw_crc_vitcp_clmul(uint32_t reg, const uint8_t *p, size_t len)
{
    const struct vw_crc_slice8_tables *tables = vw_crc_tables_vitcp();
    if (len < 16)
        return vw_crc_slice8(tables, reg, p, len);

    __m128i x;
    if (len >= 64) {
        const __m128i k512 = _mm_set_epi64x((long long)vitcp_fold512_hi, (long long)vitcp_fold512_lo);
        __m128i x0 = _mm_xor_si128(_mm_loadu_si128((const __m128i *)p), _mm_cvtsi32_si128((int)reg));
        __m128i x1 = _mm_loadu_si128((const __m128i *)(p + 16));
        __m128i x2 = _mm_loadu_si128((const __m128i *)(p + 32));
        __m128i x3 = _mm_loadu_si128((const __m128i *)(p + 48));
        p += 64;
        len -= 64;
        while (len >= 64) {
            x0 = _mm_xor_si128(fold(x0, k512), _mm_loadu_si128((const __m128i *)p));
            x1 = _mm_xor_si128(fold(x1, k512), _mm_loadu_si128((const __m128i *)(p + 16)));
            x2 = _mm_xor_si128(fold(x2, k512), _mm_loadu_si128((const __m128i *)(p + 32)));
            x3 = _mm_xor_si128(fold(x3, k512), _mm_loadu_si128((const __m128i *)(p + 48)));
            p += 64;
            len -= 64;
        }
        const __m128i k128 = _mm_set_epi64x((long long)vitcp_fold128_hi, (long long)vitcp_fold128_lo);
        x = _mm_xor_si128(fold(x0, k128), x1);
        x = _mm_xor_si128(fold(x, k128), x2);
        x = _mm_xor_si128(fold(x, k128), x3);
    } else {
        x = _mm_xor_si128(_mm_loadu_si128((const __m128i *)p), _mm_cvtsi32_si128((int)reg));
        p += 16;
        len -= 16;
    }
    const __m128i k128 = _mm_set_epi64x((long long)vitcp_fold128_hi, (long long)vitcp_fold128_lo);
    while (len >= 16) {
        x = _mm_xor_si128(fold(x, k128), _mm_loadu_si128((const __m128i *)p));
        p += 16;
        len -= 16;
    }
    return vw_crc_slice8(tables, reduce128(x), p, len);
}

#else /* not x86-64: no hardware paths; checksum.c never calls these. */

void vw_crc_x86_init(void) {}
int vw_crc_x86_has_sse42(void) { return 0; }
int vw_crc_x86_has_clmul(void) { return 0; }
uint32_t vw_crc32c_sse42_1stream(uint32_t reg, const uint8_t *p, size_t len)
{
    return vw_crc_slice8(vw_crc_tables_crc32c(), reg, p, len);
}
uint32_t vw_crc32c_sse42_3stream(uint32_t reg, const uint8_t *p, size_t len)
{
    return vw_crc_slice8(vw_crc_tables_crc32c(), reg, p, len);
}
uint32_t vw_crc_vitcp_clmul(uint32_t reg, const uint8_t *p, size_t len)
{
    return vw_crc_slice8(vw_crc_tables_vitcp(), reg, p, len);
}

#endif
