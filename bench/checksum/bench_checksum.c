/* Throughput of every checksum path, with memcpy and zlib's crc32 measured
 * in the same run as yardsticks, and the ratios against the targets of
 * issue 2 (docs/checksums.md explains how to read them).
 *
 * usage: bench_checksum [--min-seconds S]   (default 0.2 per measurement) */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zlib.h>
#include "vitcp/checksum.h"

static volatile uint32_t sink; /* keeps results live */

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

enum subject_kind { SUBJECT_PATH, SUBJECT_MEMCPY, SUBJECT_ZLIB_CRC32 };
struct subject {
    enum subject_kind kind;
    enum vw_cksum_algo algo;
    enum vw_cksum_impl impl;
};

static void run_once(const struct subject *s, uint8_t *dst, const uint8_t *src, size_t len)
{
    switch (s->kind) {
    case SUBJECT_PATH: sink ^= vw_cksum_update_impl(s->algo, s->impl, s->algo == VW_ALGO_ADLER32, src, len); break;
    case SUBJECT_MEMCPY:
        memcpy(dst, src, len);
        sink ^= dst[len / 2];
        break;
    case SUBJECT_ZLIB_CRC32: sink ^= (uint32_t)crc32(0, src, (uInt)len); break;
    }
}

/* Best of five rounds, each repeating the call until min_seconds pass:
 * the best round is the least disturbed by other work on the machine. */
static double measure_gbps(const struct subject *s, uint8_t *dst, const uint8_t *src, size_t len, double min_seconds)
{
    double best = 0;
    run_once(s, dst, src, len); /* warm caches and the once-only set-up */
    for (int round = 0; round < 5; round++) {
        double start = now_seconds(), elapsed;
        size_t calls = 0;
        do {
            run_once(s, dst, src, len);
            calls++;
            elapsed = now_seconds() - start;
        } while (elapsed < min_seconds / 5);
        double gbps = (double)calls * (double)len / elapsed / 1e9;
        if (gbps > best)
            best = gbps;
    }
    return best;
}

static const char *verdict(double ratio, double target) { return ratio >= target ? "met" : "MISSED"; }

static int parse_args(int argc, char **argv, double *min_seconds)
{
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--min-seconds") == 0 && i + 1 < argc) {
            char *end;
            errno = 0;
            *min_seconds = strtod(argv[++i], &end);
            if (errno || *end || !(*min_seconds > 0 && *min_seconds <= 60)) {
                fprintf(stderr, "bench_checksum: --min-seconds wants a number in (0, 60], got '%s'\n", argv[i]);
                return -1;
            }
        } else {
            fprintf(stderr, "usage: bench_checksum [--min-seconds S]\n");
            return -1;
        }
    }
    return 0;
}

int main(int argc, char **argv)
{
    double min_seconds = 0.2;
    if (parse_args(argc, argv, &min_seconds) != 0)
        return 2;

    static const size_t sizes[] = {64 * 1024, 1024 * 1024};
    const size_t max_len = sizes[1];
    uint8_t *src = malloc(max_len), *dst = malloc(max_len);
    if (!src || !dst) {
        fprintf(stderr, "bench_checksum: out of memory\n");
        return 1;
    }
    for (size_t i = 0; i < max_len; i++)
        src[i] = (uint8_t)(i * 2654435761u >> 13);
    memset(dst, 0, max_len);

    printf("selected paths: crc-vitcp=%s crc32c=%s adler32=%s\n",
           vw_cksum_impl_name(vw_cksum_impl_selected(VW_ALGO_CRC_VITCP)),
           vw_cksum_impl_name(vw_cksum_impl_selected(VW_ALGO_CRC32C)),
           vw_cksum_impl_name(vw_cksum_impl_selected(VW_ALGO_ADLER32)));

    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
        size_t len = sizes[si];
        printf("\n== buffer %zu KiB ==\n%-22s %10s\n", len / 1024, "path", "GB/s");
        struct subject memcpy_subject = {SUBJECT_MEMCPY, 0, 0}, zlib_subject = {SUBJECT_ZLIB_CRC32, 0, 0};
        double memcpy_gbps = measure_gbps(&memcpy_subject, dst, src, len, min_seconds);
        double zlib_gbps = measure_gbps(&zlib_subject, dst, src, len, min_seconds);
        printf("%-22s %10.2f\n%-22s %10.2f\n", "memcpy", memcpy_gbps, "zlib crc32", zlib_gbps);

        double gbps[3][VW_CKSUM_IMPL_COUNT] = {{0}};
        for (int algo = 0; algo < 3; algo++)
            for (int impl = 0; impl < VW_CKSUM_IMPL_COUNT; impl++) {
                char name[40];
                snprintf(name, sizeof name, "%s/%s", vw_cksum_algo_name(algo), vw_cksum_impl_name(impl));
                if (!vw_cksum_impl_available(algo, impl)) {
                    printf("%-22s %10s\n", name, "n/a");
                    continue;
                }
                struct subject s = {SUBJECT_PATH, algo, impl};
                /* The bitwise reference is ~100x slower: a shorter run says enough. */
                double seconds = impl == VW_IMPL_BITWISE ? min_seconds / 4 : min_seconds;
                gbps[algo][impl] = measure_gbps(&s, dst, src, len, seconds);
                printf("%-22s %10.2f\n", name, gbps[algo][impl]);
            }

        double vitcp = gbps[VW_ALGO_CRC_VITCP][vw_cksum_impl_selected(VW_ALGO_CRC_VITCP)];
        double crc32c = gbps[VW_ALGO_CRC32C][vw_cksum_impl_selected(VW_ALGO_CRC32C)];
        double crc32c_1stream = gbps[VW_ALGO_CRC32C][VW_IMPL_HW_1STREAM];
        printf("ratios (selected paths):\n");
        printf("  crc-vitcp / zlib crc32        %6.2fx  (target >= 2.0x: %s)\n", vitcp / zlib_gbps,
               verdict(vitcp / zlib_gbps, 2.0));
        if (crc32c_1stream > 0)
            printf("  crc32c / crc32c hw-1stream    %6.2fx  (target >= 2.0x: %s)\n", crc32c / crc32c_1stream,
                   verdict(crc32c / crc32c_1stream, 2.0));
        else
            printf("  crc32c / crc32c hw-1stream       n/a  (no SSE4.2 on this CPU)\n");
        printf("  crc-vitcp / memcpy            %6.2fx  (target >= 0.5x: %s)\n", vitcp / memcpy_gbps,
               verdict(vitcp / memcpy_gbps, 0.5));
        printf("  crc32c / memcpy               %6.2fx  (target >= 0.5x: %s)\n", crc32c / memcpy_gbps,
               verdict(crc32c / memcpy_gbps, 0.5));
    }
    free(src);
    free(dst);
    return 0;
}
