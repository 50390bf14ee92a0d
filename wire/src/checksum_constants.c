/* Polynomial arithmetic over GF(2) that derives the carry-less-multiply
 * constants of a reflected CRC-32 from its generator, instead of pasting
 * magic numbers: the hardware paths compute theirs at start-up from here and
 * the unit tests check this code against published constants of CRC-32. */
#include "vitcp/checksum.h"

static uint32_t reflect32(uint32_t v)
{
    uint32_t r = 0;
    for (int i = 0; i < 32; i++)
        if (v & (1u << i))
            r |= 1u << (31 - i);
    return r;
}

uint32_t vw_crc_xpow_mod(uint32_t poly_reflected, uint64_t n)
{
    /* Reflected domain: bit 31 is x^0 and multiplying by x is a right shift. */
    uint32_t r = 0x80000000u;
    while (n--)
        r = (r >> 1) ^ (poly_reflected & (0u - (r & 1u)));
    return r;
}

uint64_t vw_crc_barrett_mu(uint32_t poly_reflected)
{
    /* Long division of x^64 by P in the normal domain, one quotient bit per
     * step from x^32 down to x^0. After the first step (which clears x^64)
     * the running remainder fits in 64 bits. */
    uint64_t poly_full = (1ull << 32) | reflect32(poly_reflected);
    uint64_t rem = (uint64_t)reflect32(poly_reflected) << 32; /* x^64 - P*x^32 */
    uint64_t quotient = 1ull << 32;
    for (int k = 31; k >= 0; k--) {
        if (rem & (1ull << (32 + k))) {
            quotient |= 1ull << k;
            rem ^= poly_full << k;
        }
    }
    /* 33-bit reflected form: bit j holds the coefficient of x^(32-j). */
    uint64_t mu = 0;
    for (int d = 0; d <= 32; d++)
        if (quotient & (1ull << d))
            mu |= 1ull << (32 - d);
    return mu;
}

uint64_t vw_crc_clmul_fold_constant(uint32_t poly_reflected, unsigned n)
{
    return (uint64_t)vw_crc_xpow_mod(poly_reflected, n) << 1;
}

uint64_t vw_crc_clmul_poly(uint32_t poly_reflected)
{
    return ((uint64_t)poly_reflected << 1) | 1u;
}
