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
 *    reduced to 32 bits with a Barrett reduction.
 *  - Both CRCs by VPCLMULQDQ folding on 512-bit registers (AVX-512): the same
 *    algebra, four 64-byte lanes folded 256 bytes at a time. On CPUs that
 *    issue one 128-bit PCLMULQDQ every other cycle (AMD Zen 4) this is the
 *    only way to checksum near memcpy speed.
 * All constants come from checksum_constants.c at start-up;
 * docs/checksums.md shows the algebra. */
#include "checksum_paths.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))

#include <immintrin.h>
#include <string.h>

#define TARGET_SSE42 __attribute__((target("sse4.2")))
#define TARGET_SSE42_CLMUL __attribute__((target("sse4.2,pclmul")))
#define TARGET_AVX512_CLMUL __attribute__((target("sse4.2,pclmul,avx512f,avx512vl,vpclmulqdq")))

static int has_sse42;
static int has_clmul;
static int has_avx512_clmul;

/* CRC-32C 3-stream block sizes (bytes per stream) and the constants that
 * shift a CRC over one and two blocks of zero bytes. */
enum { CRC32C_LONG_BLOCK = 4096, CRC32C_SHORT_BLOCK = 256 };
static uint64_t crc32c_shift_long_1, crc32c_shift_long_2;
static uint64_t crc32c_shift_short_1, crc32c_shift_short_2;

/* Folding constants of one reflected CRC-32, in the 33-bit form of
 * checksum_constants.c. fold_D = {x^(D+32), x^(D-32)} mod P carries a
 * 128-bit lane D bits forward (first 8 bytes, last 8 bytes). */
struct fold_constants {
    uint64_t fold2048[2]; /* 4 zmm lanes forward 256 bytes */
    uint64_t fold512[2];  /* 4 xmm lanes forward 64 bytes, or one zmm lane */
    uint64_t fold384[2], fold256[2], fold128[2];
    uint64_t x96, x64, mu, poly; /* 128 -> 32 bit reduction */
    const struct vw_crc_slice8_tables *tables; /* for tails under 16 bytes */
};
static struct fold_constants vitcp_fold, crc32c_fold;

static void derive_fold_constants(struct fold_constants *k, uint32_t poly, const struct vw_crc_slice8_tables *tables)
{
    const struct { uint64_t *pair; unsigned distance; } pairs[] = {
        {k->fold2048, 2048}, {k->fold512, 512}, {k->fold384, 384}, {k->fold256, 256}, {k->fold128, 128},
    };
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++) {
        pairs[i].pair[0] = vw_crc_clmul_fold_constant(poly, pairs[i].distance + 32);
        pairs[i].pair[1] = vw_crc_clmul_fold_constant(poly, pairs[i].distance - 32);
    }
    k->x96 = vw_crc_clmul_fold_constant(poly, 96);
    k->x64 = vw_crc_clmul_fold_constant(poly, 64);
    k->mu = vw_crc_barrett_mu(poly);
    k->poly = vw_crc_clmul_poly(poly);
    k->tables = tables;
}

/* A constant multiplying a 32-bit reflected CRC so that one crc32q of the
 * 64-bit product equals the CRC advanced over `bytes` zero bytes:
 * crc32q(0, c*K) = c * K * x^33 (mod P), hence K = x^(8*bytes - 33). */
static uint64_t crc32c_shift_constant(unsigned bytes)
{
    return vw_crc_xpow_mod(VW_CRC32C_POLY_REFLECTED, 8ull * bytes - 33);
}

TARGET_SSE42_CLMUL static void derive_crc32c_pow2_shifts(void);

void vw_crc_x86_init(void)
{
    __builtin_cpu_init();
    has_sse42 = __builtin_cpu_supports("sse4.2") != 0;
    has_clmul = has_sse42 && __builtin_cpu_supports("pclmul") != 0;
    /* __builtin_cpu_supports also checks that the OS saves the zmm state. */
    has_avx512_clmul = has_clmul && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
                       __builtin_cpu_supports("vpclmulqdq");

    crc32c_shift_long_1 = crc32c_shift_constant(CRC32C_LONG_BLOCK);
    crc32c_shift_long_2 = crc32c_shift_constant(2 * CRC32C_LONG_BLOCK);
    crc32c_shift_short_1 = crc32c_shift_constant(CRC32C_SHORT_BLOCK);
    crc32c_shift_short_2 = crc32c_shift_constant(2 * CRC32C_SHORT_BLOCK);

    derive_fold_constants(&vitcp_fold, VW_CRC_VITCP_POLY_REFLECTED, vw_crc_tables_vitcp());
    derive_fold_constants(&crc32c_fold, VW_CRC32C_POLY_REFLECTED, vw_crc_tables_crc32c());
    if (has_clmul)
        derive_crc32c_pow2_shifts();
}

int vw_crc_x86_has_sse42(void) { return has_sse42; }
int vw_crc_x86_has_clmul(void) { return has_clmul; }
int vw_crc_x86_has_avx512_clmul(void) { return has_avx512_clmul; }

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
TARGET_SSE42_CLMUL static inline uint32_t reduce128(const struct fold_constants *c, __m128i x)
{
    const __m128i low32 = _mm_set_epi32(0, 0, 0, -1);
    __m128i k = _mm_set_epi64x((long long)c->x64, (long long)c->x96);
    __m128i s = _mm_xor_si128(_mm_clmulepi64_si128(x, k, 0x00), _mm_srli_si128(x, 8));
    s = _mm_xor_si128(_mm_clmulepi64_si128(_mm_and_si128(s, low32), k, 0x10), _mm_srli_si128(s, 4));
    /* Barrett: q = floor(high half * mu / x^32); remainder = low half + q*P. */
    __m128i b = _mm_set_epi64x((long long)c->poly, (long long)c->mu);
    __m128i q = _mm_clmulepi64_si128(_mm_and_si128(s, low32), b, 0x00);
    __m128i qp = _mm_clmulepi64_si128(_mm_and_si128(q, low32), b, 0x10);
    return (uint32_t)_mm_extract_epi32(_mm_xor_si128(s, qp), 1);
}

static inline __m128i pair128(const uint64_t pair[2])
{
    return _mm_set_epi64x((long long)pair[1], (long long)pair[0]);
}

/* Folds the 16-byte blocks of [p, p+len) into one lane, starting from lane
 * x (which holds the bytes just before p), and finishes with the tables. */
TARGET_SSE42_CLMUL static uint32_t fold128_finish(const struct fold_constants *c, __m128i x, const uint8_t *p, size_t len)
{
    const __m128i k128 = pair128(c->fold128);
    while (len >= 16) {
        x = _mm_xor_si128(fold(x, k128), _mm_loadu_si128((const __m128i *)p));
        p += 16;
        len -= 16;
    }
    return vw_crc_slice8(c->tables, reduce128(c, x), p, len);
}

TARGET_SSE42_CLMUL static uint32_t crc_fold_sse(const struct fold_constants *c, uint32_t reg, const uint8_t *p, size_t len)
{
    if (len < 16)
        return vw_crc_slice8(c->tables, reg, p, len);

    __m128i x;
    if (len >= 64) {
        const __m128i k512 = pair128(c->fold512);
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
        /* The four lanes sit 384, 256, 128 and 0 bits before the end. */
        x = _mm_xor_si128(_mm_xor_si128(fold(x0, pair128(c->fold384)), fold(x1, pair128(c->fold256))),
                          _mm_xor_si128(fold(x2, pair128(c->fold128)), x3));
    } else {
        x = _mm_xor_si128(_mm_loadu_si128((const __m128i *)p), _mm_cvtsi32_si128((int)reg));
        p += 16;
        len -= 16;
    }
    return fold128_finish(c, x, p, len);
}

TARGET_SSE42_CLMUL uint32_t vw_crc_vitcp_clmul(uint32_t reg, const uint8_t *p, size_t len)
{
    return crc_fold_sse(&vitcp_fold, reg, p, len);
}

/* --- 512-bit folding ----------------------------------------------------- */

TARGET_AVX512_CLMUL static inline __m512i fold512(__m512i x, __m512i k, __m512i data)
{
    /* 0x96: three-way XOR in one instruction. */
    return _mm512_ternarylogic_epi64(_mm512_clmulepi64_epi128(x, k, 0x00), _mm512_clmulepi64_epi128(x, k, 0x11),
                                     data, 0x96);
}

TARGET_AVX512_CLMUL static inline __m512i broadcast_pair(const uint64_t pair[2])
{
    return _mm512_broadcast_i32x4(pair128(pair));
}

/* Four zmm accumulators (256 consecutive bytes, z0 first) to one 128-bit
 * lane holding the same CRC state. */
TARGET_AVX512_CLMUL static inline __m128i avx512_to_lane(const struct fold_constants *c, __m512i z0, __m512i z1,
                                                         __m512i z2, __m512i z3)
{
    const __m512i k512 = broadcast_pair(c->fold512);
    __m512i z = fold512(z0, k512, z1);
    z = fold512(z, k512, z2);
    z = fold512(z, k512, z3);
    /* The zmm's four 128-bit lanes sit 384, 256, 128 and 0 bits before the end:
     * one multiply folds the first three (the last gets zero constants). */
    const __m512i k_lanes = _mm512_set_epi64(0, 0, (long long)c->fold128[1], (long long)c->fold128[0],
                                             (long long)c->fold256[1], (long long)c->fold256[0],
                                             (long long)c->fold384[1], (long long)c->fold384[0]);
    __m512i folded = _mm512_xor_si512(_mm512_clmulepi64_epi128(z, k_lanes, 0x00), _mm512_clmulepi64_epi128(z, k_lanes, 0x11));
    return _mm_xor_si128(_mm_xor_si128(_mm512_extracti32x4_epi32(folded, 0), _mm512_extracti32x4_epi32(folded, 1)),
                         _mm_xor_si128(_mm512_extracti32x4_epi32(folded, 2), _mm512_extracti32x4_epi32(z, 3)));
}

TARGET_AVX512_CLMUL static uint32_t crc_fold_avx512(const struct fold_constants *c, uint32_t reg, const uint8_t *p,
                                                   size_t len)
{
    /* Caller guarantees len >= 256. */
    const __m512i k2048 = broadcast_pair(c->fold2048);
    __m512i z0 = _mm512_xor_si512(_mm512_loadu_si512(p), _mm512_zextsi128_si512(_mm_cvtsi32_si128((int)reg)));
    __m512i z1 = _mm512_loadu_si512(p + 64);
    __m512i z2 = _mm512_loadu_si512(p + 128);
    __m512i z3 = _mm512_loadu_si512(p + 192);
    p += 256;
    len -= 256;
    while (len >= 256) {
        z0 = fold512(z0, k2048, _mm512_loadu_si512(p));
        z1 = fold512(z1, k2048, _mm512_loadu_si512(p + 64));
        z2 = fold512(z2, k2048, _mm512_loadu_si512(p + 128));
        z3 = fold512(z3, k2048, _mm512_loadu_si512(p + 192));
        p += 256;
        len -= 256;
    }
    return fold128_finish(c, avx512_to_lane(c, z0, z1, z2, z3), p, len);
}

/* --- CRC-32C: crc32 chains and 512-bit folding side by side --------------- */

/* a * b * x^33 mod P for reflected 32-bit a, b: the carry-less product
 * reduced by one crc32q (see crc32c_shift_constant). Constants of the form
 * x^(n-33) stay in that form: x^(m-33) (*) x^(n-33) = x^(m+n-33). */
TARGET_SSE42_CLMUL static inline uint32_t crc32c_mul33(uint32_t a, uint32_t b)
{
    __m128i prod = _mm_clmulepi64_si128(_mm_cvtsi32_si128((int)a), _mm_cvtsi32_si128((int)b), 0x00);
    return (uint32_t)_mm_crc32_u64(0, (uint64_t)_mm_cvtsi128_si64(prod));
}

/* crc32c_pow2_shift[k] = x^(2^k - 33) mod P, k >= 6 (8-byte multiples). */
static uint32_t crc32c_pow2_shift[64];

TARGET_SSE42_CLMUL static void derive_crc32c_pow2_shifts(void)
{
    crc32c_pow2_shift[6] = vw_crc_xpow_mod(VW_CRC32C_POLY_REFLECTED, 64 - 33);
    for (int k = 7; k < 64; k++)
        crc32c_pow2_shift[k] = crc32c_mul33(crc32c_pow2_shift[k - 1], crc32c_pow2_shift[k - 1]);
}

/* The shift constant of crc32c_shift_constant for any multiple of 8 bytes,
 * in a few multiplies instead of a bit loop. */
TARGET_SSE42_CLMUL static uint32_t crc32c_shift_for(size_t bytes)
{
    uint64_t bits = 8 * (uint64_t)bytes;
    uint32_t k = 0;
    int have = 0;
    for (int i = 6; i < 64; i++)
        if (bits >> i & 1) {
            k = have ? crc32c_mul33(k, crc32c_pow2_shift[i]) : crc32c_pow2_shift[i];
            have = 1;
        }
    return k;
}

/* Per round: 256 bytes folded by VPCLMULQDQ and 3 x 48 bytes by three crc32
 * chains, which run on other execution units. The buffer is split into the
 * folded region, then the three chain regions, then a tail. */
enum { HYBRID_FOLD_BYTES = 256, HYBRID_CHAIN_WORDS = 6, HYBRID_CHAIN_BYTES = 8 * HYBRID_CHAIN_WORDS,
       HYBRID_ROUND_BYTES = HYBRID_FOLD_BYTES + 3 * HYBRID_CHAIN_BYTES, HYBRID_MIN_LEN = 2048 };

TARGET_AVX512_CLMUL static uint32_t crc32c_hybrid(uint32_t reg, const uint8_t *p, size_t len)
{
    const struct fold_constants *c = &crc32c_fold;
    size_t rounds = len / HYBRID_ROUND_BYTES;
    size_t chain_len = rounds * HYBRID_CHAIN_BYTES;
    const uint8_t *fold_p = p, *chain_p = p + rounds * HYBRID_FOLD_BYTES;
    uint64_t c0 = 0, c1 = 0, c2 = 0;

    const __m512i k2048 = broadcast_pair(c->fold2048);
    __m512i z0 = _mm512_xor_si512(_mm512_loadu_si512(fold_p), _mm512_zextsi128_si512(_mm_cvtsi32_si128((int)reg)));
    __m512i z1 = _mm512_loadu_si512(fold_p + 64);
    __m512i z2 = _mm512_loadu_si512(fold_p + 128);
    __m512i z3 = _mm512_loadu_si512(fold_p + 192);
    fold_p += HYBRID_FOLD_BYTES;
    for (size_t round = 0; round < rounds; round++) {
        for (int w = 0; w < HYBRID_CHAIN_WORDS; w++) {
            c0 = _mm_crc32_u64(c0, load64(chain_p));
            c1 = _mm_crc32_u64(c1, load64(chain_p + chain_len));
            c2 = _mm_crc32_u64(c2, load64(chain_p + 2 * chain_len));
            chain_p += 8;
        }
        if (round + 1 < rounds) { /* the first fold block was loaded above */
            z0 = fold512(z0, k2048, _mm512_loadu_si512(fold_p));
            z1 = fold512(z1, k2048, _mm512_loadu_si512(fold_p + 64));
            z2 = fold512(z2, k2048, _mm512_loadu_si512(fold_p + 128));
            z3 = fold512(z3, k2048, _mm512_loadu_si512(fold_p + 192));
            fold_p += HYBRID_FOLD_BYTES;
        }
    }
    uint32_t fold_crc = reduce128(c, avx512_to_lane(c, z0, z1, z2, z3));

    /* crc = fold_crc shifted over 3 chains ^ c0 over 2 ^ c1 over 1 ^ c2. */
    uint32_t shift1 = crc32c_shift_for(chain_len);
    uint32_t shift2 = crc32c_mul33(shift1, shift1);
    uint32_t shift3 = crc32c_mul33(shift2, shift1);
    __m128i joined = _mm_xor_si128(
        _mm_clmulepi64_si128(_mm_cvtsi32_si128((int)fold_crc), _mm_cvtsi32_si128((int)shift3), 0x00),
        _mm_xor_si128(_mm_clmulepi64_si128(_mm_cvtsi64_si128((long long)c0), _mm_cvtsi32_si128((int)shift2), 0x00),
                      _mm_clmulepi64_si128(_mm_cvtsi64_si128((long long)c1), _mm_cvtsi32_si128((int)shift1), 0x00)));
    reg = (uint32_t)_mm_crc32_u64(0, (uint64_t)_mm_cvtsi128_si64(joined)) ^ (uint32_t)c2;
    size_t done = rounds * HYBRID_ROUND_BYTES;
    return vw_crc32c_sse42_1stream(reg, p + done, len - done);
}

enum { AVX512_MIN_LEN = 256 };

TARGET_AVX512_CLMUL uint32_t vw_crc_vitcp_avx512(uint32_t reg, const uint8_t *p, size_t len)
{
    if (len < AVX512_MIN_LEN)
        return crc_fold_sse(&vitcp_fold, reg, p, len);
    return crc_fold_avx512(&vitcp_fold, reg, p, len);
}

/* Short CRC-32C inputs (IFT headers) go to the crc32 instruction, which has
 * no set-up cost. */
TARGET_AVX512_CLMUL uint32_t vw_crc32c_avx512(uint32_t reg, const uint8_t *p, size_t len)
{
    if (len < AVX512_MIN_LEN)
        return vw_crc32c_sse42_1stream(reg, p, len);
    if (len < HYBRID_MIN_LEN)
        return crc_fold_avx512(&crc32c_fold, reg, p, len);
    return crc32c_hybrid(reg, p, len);
}

#else /* not x86-64: no hardware paths; checksum.c never calls these. */

void vw_crc_x86_init(void) {}
int vw_crc_x86_has_sse42(void) { return 0; }
int vw_crc_x86_has_clmul(void) { return 0; }
int vw_crc_x86_has_avx512_clmul(void) { return 0; }
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
uint32_t vw_crc_vitcp_avx512(uint32_t reg, const uint8_t *p, size_t len)
{
    return vw_crc_slice8(vw_crc_tables_vitcp(), reg, p, len);
}
uint32_t vw_crc32c_avx512(uint32_t reg, const uint8_t *p, size_t len)
{
    return vw_crc_slice8(vw_crc_tables_crc32c(), reg, p, len);
}

#endif
