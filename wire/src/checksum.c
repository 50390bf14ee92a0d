/* Checksums: bitwise reference implementation. The table-driven and hardware
 * paths are selected in vw_cksum_impl_selected(); until they exist every
 * path is the reference. */
#include <zlib.h>
#include "vitcp/checksum.h"

static uint32_t crc_reflected_bitwise(uint32_t poly, uint32_t crc, const uint8_t *p, size_t len)
{
    crc = ~crc;
    while (len--) {
        crc ^= *p++;
        for (int k = 0; k < 8; k++)
            crc = (crc >> 1) ^ (poly & (0u - (crc & 1u)));
    }
    return ~crc;
}

uint32_t vw_cksum_update_impl(enum vw_cksum_algo algo, enum vw_cksum_impl impl, uint32_t prev,
                              const void *buf, size_t len)
{
    (void)impl;
    switch (algo) {
    case VW_ALGO_CRC_VITCP: return crc_reflected_bitwise(VW_CRC_VITCP_POLY_REFLECTED, prev, buf, len);
    case VW_ALGO_CRC32C: return crc_reflected_bitwise(0x82F63B78u, prev, buf, len);
    case VW_ALGO_ADLER32: return (uint32_t)adler32(prev, buf, (uInt)len);
    }
    return 0;
}

int vw_cksum_impl_available(enum vw_cksum_algo algo, enum vw_cksum_impl impl)
{
    (void)algo;
    return impl == VW_IMPL_BITWISE || impl == VW_IMPL_TABLE;
}

enum vw_cksum_impl vw_cksum_impl_selected(enum vw_cksum_algo algo)
{
    (void)algo;
    return VW_IMPL_BITWISE;
}

uint32_t vw_crc_vitcp_update(uint32_t crc, const void *buf, size_t len)
{
    return vw_cksum_update_impl(VW_ALGO_CRC_VITCP, VW_IMPL_BITWISE, crc, buf, len);
}
uint32_t vw_crc_vitcp(const void *buf, size_t len) { return vw_crc_vitcp_update(0, buf, len); }
uint32_t vw_crc32c_update(uint32_t crc, const void *buf, size_t len)
{
    return vw_cksum_update_impl(VW_ALGO_CRC32C, VW_IMPL_BITWISE, crc, buf, len);
}
uint32_t vw_crc32c(const void *buf, size_t len) { return vw_crc32c_update(0, buf, len); }
uint32_t vw_adler32_update(uint32_t adler, const void *buf, size_t len)
{
    return vw_cksum_update_impl(VW_ALGO_ADLER32, VW_IMPL_BITWISE, adler, buf, len);
}
uint32_t vw_adler32(const void *buf, size_t len) { return vw_adler32_update(1, buf, len); }

uint32_t vw_crc_vitcp_msb_first(const void *buf, size_t len)
{
    const uint8_t *p = buf;
    uint32_t crc = 0xFFFFFFFFu;
    while (len--) {
        crc ^= (uint32_t)*p++ << 24;
        for (int k = 0; k < 8; k++)
            crc = (crc << 1) ^ (VW_CRC_VITCP_POLY_NORMAL & (0u - (crc >> 31)));
    }
    return ~crc;
}

const char *vw_cksum_impl_name(enum vw_cksum_impl impl)
{
    switch (impl) {
    case VW_IMPL_BITWISE: return "bitwise";
    case VW_IMPL_TABLE: return "table";
    case VW_IMPL_HW: return "hw";
    case VW_IMPL_HW_1STREAM: return "hw-1stream";
    }
    return "?";
}

const char *vw_cksum_algo_name(enum vw_cksum_algo algo)
{
    switch (algo) {
    case VW_ALGO_CRC_VITCP: return "crc-vitcp";
    case VW_ALGO_CRC32C: return "crc32c";
    case VW_ALGO_ADLER32: return "adler32";
    }
    return "?";
}
