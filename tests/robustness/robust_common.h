/*
 * Shared helpers of the robustness tests: a seeded PRNG (every test prints
 * its seed and takes VITCP_ROBUST_SEED from the environment to replay one),
 * scratch directories, running a tool with a time limit and capturing its
 * stderr, spotting sanitizer reports, and measuring heap use.
 */
#ifndef ROBUST_COMMON_H
#define ROBUST_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ------------------------------------------------------------------ PRNG */

struct rb_rng {
    uint64_t s;
};

/* The seed of a test: VITCP_ROBUST_SEED if set (decimal or 0x hex), else
 * the default the test passes. Printed once so a failure can be replayed. */
uint64_t rb_seed(const char *test, uint64_t dflt);
static inline uint64_t rb_next(struct rb_rng *r)
{
    /* splitmix64: tiny, fast, and the same sequence on every platform */
    uint64_t z = (r->s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
/* Uniform in [0, n) (n > 0). */
static inline uint64_t rb_below(struct rb_rng *r, uint64_t n) { return rb_next(r) % n; }
void rb_fill(struct rb_rng *r, uint8_t *buf, size_t len);
/* out = in[0..len) with 1..max_junk random bytes (NULs included) inserted
 * at a random place; out has room for len + max_junk. The new length. */
size_t rb_insert_junk(struct rb_rng *r, void *out, const void *in, size_t len, size_t max_junk);

/* -------------------------------------------------------------- files */

/* mkdtemp under $TMPDIR or /tmp; the path is written to out. */
void rb_tmpdir(char *out, size_t cap, const char *tag);
/* Remove every file in dir, then dir (one level, as the tests create them);
 * kept when VITCP_ROBUST_KEEP is set (to look at the last input after a failure). */
void rb_rmdir(const char *dir);
/* Whole file into a malloc'd buffer; NULL if unreadable. */
uint8_t *rb_read_file(const char *path, size_t *len);
/* Write len bytes; 0 or -1. */
int rb_write_file(const char *path, const void *data, size_t len);

/* ---------------------------------------------------- running a tool */

struct rb_run {
    int status;      /* exit code, or -1 if killed by a signal / timed out */
    int signal;      /* terminating signal, 0 if none */
    bool timed_out;
    double seconds;
    char *out;       /* captured stdout (NUL-terminated, at most 64 KiB kept) */
    char *err;       /* captured stderr (NUL-terminated, at most 64 KiB kept) */
};

/* Run argv (argv[0] is a path) with no stdin, a time limit and no core
 * dumps; stdout and stderr captured. */
void rb_run(char *const argv[], double timeout_s, struct rb_run *res);
/* The same with stdout going to a file (e.g. /dev/full); res->out stays empty. */
void rb_run_out(char *const argv[], double timeout_s, const char *stdout_path, struct rb_run *res);
void rb_run_free(struct rb_run *res);
/* Does text hold a sanitizer or crash report? */
bool rb_has_sanitizer_report(const char *text);
/* Number of non-empty lines. */
unsigned rb_count_lines(const char *text);

/* ------------------------------------------------------------ memory */

/* Bytes currently allocated on the heap (ASan's allocator when built with
 * it, else mallinfo2). */
size_t rb_heap_bytes(void);

#endif
