/*
 * Shared by every fuzz harness. A harness defines LLVMFuzzerTestOneInput
 * and nothing else; it builds either with clang's libFuzzer
 * (-fsanitize=fuzzer) or with replay_main.c, the gcc corpus replayer and
 * deterministic mutator. See docs/robustness.md, "Fuzzing campaign".
 */
#ifndef VITCP_FUZZ_H
#define VITCP_FUZZ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* PDUs (or case/script/capture files) the harness passed through a decoder
 * or parser; the replayer prints it, so CI can show what it reached. */
extern uint64_t fuzz_pdus;

/* A harness's own oracle (beyond the sanitizers): a broken promise of the
 * library aborts, like a sanitizer report, so both fuzzers keep the input. */
#define FUZZ_CHECK(cond, what)                                                                 \
    do {                                                                                       \
        if (!(cond)) {                                                                         \
            fprintf(stderr, "FUZZ CHECK FAILED %s:%d: %s (%s)\n", __FILE__, __LINE__, what, #cond); \
            abort();                                                                           \
        }                                                                                      \
    } while (0)

/* Does p[0..n) lie inside buf[0..len)? (NULL with n 0 does.) */
static inline bool fuzz_inside(const void *p, size_t n, const uint8_t *buf, size_t len)
{
    if (p == NULL)
        return n == 0;
    const uint8_t *q = p;
    return q >= buf && (size_t)(q - buf) <= len && n <= len - (size_t)(q - buf);
}

/* A fresh heap block holding exactly data[0..size), so ASan catches a read
 * one byte past the end even when the caller's buffer is larger. */
uint8_t *fuzz_exact_copy(const uint8_t *data, size_t size);

/* Writes data to this process's scratch file (one per process, removed at
 * exit) and returns its path: for parsers that only read files. */
const char *fuzz_scratch_file(const uint8_t *data, size_t size, const char *suffix);

/* A tiny deterministic PRNG seeded from the input, for chunking a stream
 * the same way every time the same input runs. */
static inline uint32_t fuzz_hash(const uint8_t *d, size_t n)
{
    uint32_t h = 2166136261u; /* FNV-1a */
    for (size_t i = 0; i < n; i++)
        h = (h ^ d[i]) * 16777619u;
    return h;
}
static inline uint32_t fuzz_rand(uint32_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 17;
    *s ^= *s << 5;
    return *s;
}

#endif
