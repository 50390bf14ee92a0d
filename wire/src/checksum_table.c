/* The portable paths of the two CRCs: a bitwise reference (the definition,
 * one bit at a time) and slicing-by-8, which folds eight bytes per step with
 * eight independent table lookups. Tables are filled once, at first use, by
 * the call_once in checksum.c. */
#include "checksum_paths.h"

static struct vw_crc_slice8_tables vitcp_tables;
static struct vw_crc_slice8_tables crc32c_tables;
static struct vw_crc_slice8_tables vitcp_msb_tables; /* MSB-first reading (V4) */

uint32_t vw_crc_bitwise(uint32_t poly_reflected, uint32_t reg, const uint8_t *p, size_t len)
{
    while (len--) {
        reg ^= *p++;
        for (int k = 0; k < 8; k++)
            reg = (reg >> 1) ^ (poly_reflected & (0u - (reg & 1u)));
    }
    return reg;
}

static void fill_slice8(struct vw_crc_slice8_tables *tables, uint32_t poly_reflected)
{
    for (unsigned b = 0; b < 256; b++) {
        uint8_t byte = (uint8_t)b;
        tables->t[0][b] = vw_crc_bitwise(poly_reflected, 0, &byte, 1);
    }
    for (unsigned k = 1; k < 8; k++)
        for (unsigned b = 0; b < 256; b++) {
            uint32_t prev = tables->t[k - 1][b];
            tables->t[k][b] = (prev >> 8) ^ tables->t[0][prev & 0xFFu];
        }
}

/* The same for an MSB-first (non-reflected) CRC: t[0][b] is byte b shifted
 * through the register from the top. */
static void fill_slice8_msb(struct vw_crc_slice8_tables *tables, uint32_t poly_normal)
{
    for (unsigned b = 0; b < 256; b++) {
        uint32_t reg = (uint32_t)b << 24;
        for (int k = 0; k < 8; k++)
            reg = (reg << 1) ^ (poly_normal & (0u - (reg >> 31)));
        tables->t[0][b] = reg;
    }
    for (unsigned k = 1; k < 8; k++)
        for (unsigned b = 0; b < 256; b++) {
            uint32_t prev = tables->t[k - 1][b];
            tables->t[k][b] = (prev << 8) ^ tables->t[0][prev >> 24];
        }
}

void vw_crc_tables_init(void)
{
    fill_slice8(&vitcp_tables, VW_CRC_VITCP_POLY_REFLECTED);
    fill_slice8(&crc32c_tables, VW_CRC32C_POLY_REFLECTED);
    fill_slice8_msb(&vitcp_msb_tables, VW_CRC_VITCP_POLY_NORMAL);
}

const struct vw_crc_slice8_tables *vw_crc_tables_vitcp(void) { return &vitcp_tables; }
const struct vw_crc_slice8_tables *vw_crc_tables_crc32c(void) { return &crc32c_tables; }
const struct vw_crc_slice8_tables *vw_crc_tables_vitcp_msb(void) { return &vitcp_msb_tables; }

/* Little-endian loads byte by byte: no alignment or host byte-order
 * assumption; compilers turn them into single loads on x86 and ARM. */
static inline uint32_t load_le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

uint32_t vw_crc_slice8(const struct vw_crc_slice8_tables *tables, uint32_t reg, const uint8_t *p, size_t len)
{
    const uint32_t(*t)[256] = tables->t;
    while (len >= 8) {
        uint32_t lo = load_le32(p) ^ reg;
        uint32_t hi = load_le32(p + 4);
        reg = t[7][lo & 0xFFu] ^ t[6][(lo >> 8) & 0xFFu] ^ t[5][(lo >> 16) & 0xFFu] ^ t[4][lo >> 24] ^
              t[3][hi & 0xFFu] ^ t[2][(hi >> 8) & 0xFFu] ^ t[1][(hi >> 16) & 0xFFu] ^ t[0][hi >> 24];
        p += 8;
        len -= 8;
    }
    while (len--)
        reg = (reg >> 8) ^ t[0][(reg ^ *p++) & 0xFFu];
    return reg;
}

static inline uint32_t load_be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | (uint32_t)p[3];
}

uint32_t vw_crc_slice8_msb(const struct vw_crc_slice8_tables *tables, uint32_t reg, const uint8_t *p, size_t len)
{
    const uint32_t(*t)[256] = tables->t;
    while (len >= 8) {
        uint32_t hi = load_be32(p) ^ reg;
        uint32_t lo = load_be32(p + 4);
        reg = t[7][hi >> 24] ^ t[6][(hi >> 16) & 0xFFu] ^ t[5][(hi >> 8) & 0xFFu] ^ t[4][hi & 0xFFu] ^
              t[3][lo >> 24] ^ t[2][(lo >> 16) & 0xFFu] ^ t[1][(lo >> 8) & 0xFFu] ^ t[0][lo & 0xFFu];
        p += 8;
        len -= 8;
    }
    while (len--)
        reg = (reg << 8) ^ t[0][(reg >> 24) ^ *p++];
    return reg;
}
