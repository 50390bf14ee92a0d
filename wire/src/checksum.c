/* The public checksum API: picks, once per process, the fastest path this
 * CPU can run for each checksum (hardware, else slicing-by-8), and lets
 * tests and benchmarks run any path by name. */
#include <threads.h>
#include <zlib.h>
#include "checksum_paths.h"

static once_flag init_once = ONCE_FLAG_INIT;
static vw_crc_path_fn selected_vitcp;
static vw_crc_path_fn selected_crc32c;
static enum vw_cksum_impl selected_vitcp_impl;
static enum vw_cksum_impl selected_crc32c_impl;

static uint32_t vitcp_table_path(uint32_t reg, const uint8_t *p, size_t len)
{
    return vw_crc_slice8(vw_crc_tables_vitcp(), reg, p, len);
}
static uint32_t crc32c_table_path(uint32_t reg, const uint8_t *p, size_t len)
{
    return vw_crc_slice8(vw_crc_tables_crc32c(), reg, p, len);
}

static void checksum_init(void)
{
    vw_crc_tables_init();
    vw_crc_x86_init();
    /* Fastest first: 512-bit folding, then 128-bit folding / 3 crc32 chains,
     * then one crc32 chain (no PCLMULQDQ to join chains), then tables. */
    if (vw_crc_x86_has_avx512_clmul()) {
        selected_vitcp = vw_crc_vitcp_avx512;
        selected_vitcp_impl = VW_IMPL_HW_AVX512;
        selected_crc32c = vw_crc32c_avx512;
        selected_crc32c_impl = VW_IMPL_HW_AVX512;
    } else if (vw_crc_x86_has_clmul()) {
        selected_vitcp = vw_crc_vitcp_clmul;
        selected_vitcp_impl = VW_IMPL_HW;
        selected_crc32c = vw_crc32c_sse42_3stream;
        selected_crc32c_impl = VW_IMPL_HW;
    } else {
        selected_vitcp = vitcp_table_path;
        selected_vitcp_impl = VW_IMPL_TABLE;
        selected_crc32c = vw_crc_x86_has_sse42() ? vw_crc32c_sse42_1stream : crc32c_table_path;
        selected_crc32c_impl = vw_crc_x86_has_sse42() ? VW_IMPL_HW_1STREAM : VW_IMPL_TABLE;
    }
}

static inline void ensure_init(void) { call_once(&init_once, checksum_init); }

/* Adler-32 by its definition (RFC 1950 8.2), reduced every byte: the
 * reference the zlib path is tested against. */
static uint32_t adler32_reference(uint32_t adler, const uint8_t *p, size_t len)
{
    uint32_t a = adler & 0xFFFFu, b = adler >> 16;
    while (len--) {
        a = (a + *p++) % 65521u;
        b = (b + a) % 65521u;
    }
    return b << 16 | a;
}

/* zlib takes a uInt length: feed huge buffers in pieces. */
static uint32_t adler32_zlib(uint32_t adler, const uint8_t *p, size_t len)
{
    uLong value = adler;
    while (len > 0) {
        uInt piece = len > 0x40000000u ? 0x40000000u : (uInt)len;
        value = adler32(value, p, piece);
        p += piece;
        len -= piece;
    }
    return (uint32_t)value;
}

static vw_crc_path_fn crc_path(enum vw_cksum_algo algo, enum vw_cksum_impl impl)
{
    int vitcp = algo == VW_ALGO_CRC_VITCP;
    if (!vw_cksum_impl_available(algo, impl))
        impl = VW_IMPL_TABLE;
    switch (impl) {
    case VW_IMPL_BITWISE: return NULL;
    case VW_IMPL_TABLE: return vitcp ? vitcp_table_path : crc32c_table_path;
    case VW_IMPL_HW: return vitcp ? vw_crc_vitcp_clmul : vw_crc32c_sse42_3stream;
    case VW_IMPL_HW_1STREAM: return vw_crc32c_sse42_1stream;
    case VW_IMPL_HW_AVX512: return vitcp ? vw_crc_vitcp_avx512 : vw_crc32c_avx512;
    }
    return NULL;
}

uint32_t vw_cksum_update_impl(enum vw_cksum_algo algo, enum vw_cksum_impl impl, uint32_t prev,
                              const void *buf, size_t len)
{
    ensure_init();
    const uint8_t *p = buf;
    if (len == 0)
        return prev;
    switch (algo) {
    case VW_ALGO_ADLER32:
        return impl == VW_IMPL_BITWISE ? adler32_reference(prev, p, len) : adler32_zlib(prev, p, len);
    case VW_ALGO_CRC_VITCP:
    case VW_ALGO_CRC32C: {
        vw_crc_path_fn path = crc_path(algo, impl);
        if (!path) {
            uint32_t poly = algo == VW_ALGO_CRC_VITCP ? VW_CRC_VITCP_POLY_REFLECTED : VW_CRC32C_POLY_REFLECTED;
            return ~vw_crc_bitwise(poly, ~prev, p, len);
        }
        return ~path(~prev, p, len);
    }
    }
    return 0;
}

int vw_cksum_impl_available(enum vw_cksum_algo algo, enum vw_cksum_impl impl)
{
    ensure_init();
    switch (impl) {
    case VW_IMPL_BITWISE:
    case VW_IMPL_TABLE:
        return 1;
    case VW_IMPL_HW:
        /* No SIMD Adler-32 yet: zlib's is the TABLE path. */
        return algo != VW_ALGO_ADLER32 && vw_crc_x86_has_clmul();
    case VW_IMPL_HW_1STREAM:
        return algo == VW_ALGO_CRC32C && vw_crc_x86_has_sse42();
    case VW_IMPL_HW_AVX512:
        return algo != VW_ALGO_ADLER32 && vw_crc_x86_has_avx512_clmul();
    }
    return 0;
}

enum vw_cksum_impl vw_cksum_impl_selected(enum vw_cksum_algo algo)
{
    ensure_init();
    switch (algo) {
    case VW_ALGO_CRC_VITCP: return selected_vitcp_impl;
    case VW_ALGO_CRC32C: return selected_crc32c_impl;
    case VW_ALGO_ADLER32: return VW_IMPL_TABLE;
    }
    return VW_IMPL_TABLE;
}

uint32_t vw_crc_vitcp_update(uint32_t crc, const void *buf, size_t len)
{
    ensure_init();
    return len ? ~selected_vitcp(~crc, buf, len) : crc;
}
uint32_t vw_crc_vitcp(const void *buf, size_t len) { return vw_crc_vitcp_update(0, buf, len); }

uint32_t vw_crc32c_update(uint32_t crc, const void *buf, size_t len)
{
    ensure_init();
    return len ? ~selected_crc32c(~crc, buf, len) : crc;
}
uint32_t vw_crc32c(const void *buf, size_t len) { return vw_crc32c_update(0, buf, len); }

uint32_t vw_adler32_update(uint32_t adler, const void *buf, size_t len)
{
    return len ? adler32_zlib(adler, buf, len) : adler;
}
uint32_t vw_adler32(const void *buf, size_t len) { return vw_adler32_update(1, buf, len); }

uint32_t vw_crc_vitcp_msb_first(const void *buf, size_t len)
{
    ensure_init();
    return ~vw_crc_slice8_msb(vw_crc_tables_vitcp_msb(), 0xFFFFFFFFu, buf, len);
}

const char *vw_cksum_impl_name(enum vw_cksum_impl impl)
{
    switch (impl) {
    case VW_IMPL_BITWISE: return "bitwise";
    case VW_IMPL_TABLE: return "table";
    case VW_IMPL_HW: return "hw";
    case VW_IMPL_HW_1STREAM: return "hw-1stream";
    case VW_IMPL_HW_AVX512: return "hw-avx512";
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
