/*
 * The three checksums of the protocols, each with a portable table-driven
 * path and, where the CPU has it, a hardware path chosen at run time.
 *
 *  - VI/TCP CRC (spec-decisions V3): reflected CRC-32, generator 0xDB710641
 *    (reflected 0x82608EDB), init and final XOR 0xFFFFFFFF.
 *    CRC("123456789") = 0xE07E661E. Written least significant byte first (V4).
 *  - CRC-32C (IFT, spec-decisions I3): Castagnoli, as iSCSI (RFC 3720).
 *    CRC("123456789") = 0xE3069283. Written least significant byte first.
 *  - Adler-32 (WARP, W3): zlib's, initial value 1, written big-endian.
 *
 * The *_update functions chain like zlib's: pass the previous result (0 for
 * the CRCs, 1 for Adler-32, or use the one-shot functions) and more bytes.
 */
#ifndef VITCP_CHECKSUM_H
#define VITCP_CHECKSUM_H

#include <stddef.h>
#include <stdint.h>

#define VW_CRC_VITCP_POLY_NORMAL 0xDB710641u
#define VW_CRC_VITCP_POLY_REFLECTED 0x82608EDBu
#define VW_CRC_VITCP_CHECK 0xE07E661Eu
#define VW_CRC32C_CHECK 0xE3069283u
#define VW_CRC32C_POLY_REFLECTED 0x82F63B78u
#define VW_ADLER32_CHECK 0x091E01DEu

uint32_t vw_crc_vitcp(const void *buf, size_t len);
uint32_t vw_crc_vitcp_update(uint32_t crc, const void *buf, size_t len);
uint32_t vw_crc32c(const void *buf, size_t len);
uint32_t vw_crc32c_update(uint32_t crc, const void *buf, size_t len);
uint32_t vw_adler32(const void *buf, size_t len);
uint32_t vw_adler32_update(uint32_t adler, const void *buf, size_t len);

/* The other readings of the VI/TCP CRC that other implementations of the
 * draft may have chosen (V4): the MSB-first (non-reflected) CRC with the same
 * generator, init and final XOR. Used to name a mismatch, never to accept. */
uint32_t vw_crc_vitcp_msb_first(const void *buf, size_t len);

/* Implementation paths, for tests and benchmarks. */
enum vw_cksum_algo { VW_ALGO_CRC_VITCP, VW_ALGO_CRC32C, VW_ALGO_ADLER32 };
enum vw_cksum_impl {
    VW_IMPL_BITWISE, /* reference: one bit at a time */
    VW_IMPL_TABLE,   /* portable: slicing-by-8 (or better) */
    VW_IMPL_HW,      /* CRC-32C: SSE4.2 crc32, 3 streams; VI/TCP: PCLMULQDQ folding */
    VW_IMPL_HW_1STREAM, /* CRC-32C only: one dependent chain of crc32q, the baseline */
    VW_IMPL_HW_AVX512, /* both CRCs: VPCLMULQDQ folding on 512-bit registers */
};
#define VW_CKSUM_IMPL_COUNT 5
/* 1 if the path can run on this CPU (BITWISE and TABLE always can). */
int vw_cksum_impl_available(enum vw_cksum_algo algo, enum vw_cksum_impl impl);
/* Run one path explicitly; crc/adler chained as the *_update functions.
 * An unavailable path falls back to TABLE. */
uint32_t vw_cksum_update_impl(enum vw_cksum_algo algo, enum vw_cksum_impl impl,
                              uint32_t prev, const void *buf, size_t len);
/* The path the *_update functions use on this CPU. */
enum vw_cksum_impl vw_cksum_impl_selected(enum vw_cksum_algo algo);
const char *vw_cksum_impl_name(enum vw_cksum_impl impl);
const char *vw_cksum_algo_name(enum vw_cksum_algo algo);

/* Constants of carry-less-multiply (PCLMULQDQ) CRC folding, derived from the
 * reflected generator (docs/checksums.md shows where each is used). The
 * 33-bit forms put the coefficient of x^(32-j) in bit j, as the reflected
 * folding code multiplies them.
 *  vw_crc_xpow_mod: x^n mod P, reflected 32-bit (bit j = coefficient of x^(31-j)).
 *  vw_crc_clmul_fold_constant: x^n mod P in the 33-bit form; folding a
 *    128-bit block forward by D bits uses n = D+32 (first 8 bytes) and D-32.
 *  vw_crc_barrett_mu: floor(x^64 / P) in the 33-bit form.
 *  vw_crc_clmul_poly: P itself (x^32 included) in the 33-bit form. */
uint32_t vw_crc_xpow_mod(uint32_t poly_reflected, uint64_t n);
uint64_t vw_crc_clmul_fold_constant(uint32_t poly_reflected, unsigned n);
uint64_t vw_crc_barrett_mu(uint32_t poly_reflected);
uint64_t vw_crc_clmul_poly(uint32_t poly_reflected);

/* Byte placement helpers. */
static inline void vw_put_le32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v; p[1] = (uint8_t)(v >> 8); p[2] = (uint8_t)(v >> 16); p[3] = (uint8_t)(v >> 24);
}
static inline uint32_t vw_get_le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

#endif
