/* Internal: the implementation paths behind vitcp/checksum.h. Every path
 * works on the raw CRC register (the public value inverted), so paths can
 * hand a partial result to each other (the hardware paths finish their tails
 * with the table path). */
#ifndef VITCP_CHECKSUM_PATHS_H
#define VITCP_CHECKSUM_PATHS_H

#include <stddef.h>
#include <stdint.h>
#include "vitcp/checksum.h"

typedef uint32_t (*vw_crc_path_fn)(uint32_t reg, const uint8_t *p, size_t len);

/* Slicing-by-8 tables of one reflected CRC-32: t[0] is the classic byte
 * table, t[k][b] the register contribution of byte b followed by k zero bytes. */
struct vw_crc_slice8_tables {
    uint32_t t[8][256];
};

/* Fill the tables of both CRCs; called once, before any path runs. */
void vw_crc_tables_init(void);
const struct vw_crc_slice8_tables *vw_crc_tables_vitcp(void);
const struct vw_crc_slice8_tables *vw_crc_tables_crc32c(void);
/* MSB-first tables: t[k][b] the contribution of byte b followed by k zero
 * bytes, shifting left. */
const struct vw_crc_slice8_tables *vw_crc_tables_vitcp_msb(void);

uint32_t vw_crc_bitwise(uint32_t poly_reflected, uint32_t reg, const uint8_t *p, size_t len);
uint32_t vw_crc_slice8(const struct vw_crc_slice8_tables *tables, uint32_t reg, const uint8_t *p, size_t len);
uint32_t vw_crc_slice8_msb(const struct vw_crc_slice8_tables *tables, uint32_t reg, const uint8_t *p, size_t len);

/* x86-64 paths: checksum_x86.c. vw_crc_x86_init() detects the CPU and
 * derives the constants; the *_available() answers are valid after it. */
void vw_crc_x86_init(void);
int vw_crc_x86_has_sse42(void);
int vw_crc_x86_has_clmul(void);
int vw_crc_x86_has_avx512_clmul(void);
uint32_t vw_crc32c_sse42_1stream(uint32_t reg, const uint8_t *p, size_t len);
uint32_t vw_crc32c_sse42_3stream(uint32_t reg, const uint8_t *p, size_t len);
uint32_t vw_crc_vitcp_clmul(uint32_t reg, const uint8_t *p, size_t len);
uint32_t vw_crc_vitcp_avx512(uint32_t reg, const uint8_t *p, size_t len);
uint32_t vw_crc32c_avx512(uint32_t reg, const uint8_t *p, size_t len);

#endif
