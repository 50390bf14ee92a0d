/*
 * The gcc build of a harness: a corpus replayer and deterministic mutator.
 *
 *   fuzz_NAME [--runs N] [--min-pdus N] [--max-len N] PATH...
 *
 * Runs every file of the PATHs (files or folders) once as it is, then N
 * mutated inputs made from them in turn: bit flips, random bytes, inserts,
 * deletes, duplicated ranges, splices with another corpus file, 16/32-bit
 * length fields set to edge values, truncation (1-4 of these stacked). The
 * mutations come from VITCP_ROBUST_SEED (robust_common.h), so a run
 * replays exactly. Under ASan/UBSan a report aborts the run; before dying,
 * the input is written to $VITCP_FUZZ_CRASH_DIR (default .) as
 * crash-NAME-ITERATION so it can be replayed alone (fuzz_NAME FILE) or fed
 * to the libFuzzer build. Exit 0 when every input ran and the harness
 * decoded at least --min-pdus PDUs; 1 otherwise; 2 on a bad command line.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "fuzz.h"
#include "robust_common.h"

#ifndef FUZZ_NAME
#define FUZZ_NAME "harness"
#endif

struct corpus {
    uint8_t **data;
    size_t *len;
    size_t n, cap;
};

static const uint8_t *cur_input;
static size_t cur_len;
static uint64_t cur_iter;
static bool cur_mutated;

static void dump_current(void)
{
    static int dumped;
    if (dumped++ || !cur_input)
        return;
    const char *dir = getenv("VITCP_FUZZ_CRASH_DIR");
    char path[512];
    snprintf(path, sizeof path, "%s/crash-%s-%llu", dir && *dir ? dir : ".", FUZZ_NAME,
             (unsigned long long)cur_iter);
    FILE *f = fopen(path, "wb");
    if (f) {
        fwrite(cur_input, 1, cur_len, f);
        fclose(f);
    }
    fprintf(stderr, "%s: input %llu (%s, %zu bytes) failed; written to %s\n", FUZZ_NAME,
            (unsigned long long)cur_iter, cur_mutated ? "mutated" : "corpus file", cur_len, path);
}

/* ASan and UBSan call this before exiting on a report. Weak: a build
 * without sanitizers has no runtime to provide it. */
void __sanitizer_set_death_callback(void (*callback)(void)) __attribute__((weak));

static void on_abort(int sig)
{
    dump_current();
    signal(sig, SIG_DFL);
    raise(sig);
}

static void add_file(struct corpus *c, const char *path, size_t max_len)
{
    size_t len;
    uint8_t *d = rb_read_file(path, &len);
    if (d == NULL) {
        fprintf(stderr, "%s: cannot read %s\n", FUZZ_NAME, path);
        exit(2);
    }
    if (len > max_len)
        len = max_len;
    if (c->n == c->cap) {
        c->cap = c->cap ? 2 * c->cap : 64;
        c->data = realloc(c->data, c->cap * sizeof *c->data);
        c->len = realloc(c->len, c->cap * sizeof *c->len);
        if (!c->data || !c->len)
            abort();
    }
    c->data[c->n] = d;
    c->len[c->n++] = len;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* A folder's regular files in name order (the order must not depend on
 * the file system, or a seed would not replay). */
static void add_path(struct corpus *c, const char *path, size_t max_len)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        fprintf(stderr, "%s: cannot read %s\n", FUZZ_NAME, path);
        exit(2);
    }
    if (!S_ISDIR(st.st_mode)) {
        add_file(c, path, max_len);
        return;
    }
    DIR *d = opendir(path);
    if (!d) {
        fprintf(stderr, "%s: cannot open %s\n", FUZZ_NAME, path);
        exit(2);
    }
    char **names = NULL;
    size_t n = 0, cap = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        char full[4096];
        snprintf(full, sizeof full, "%s/%s", path, e->d_name);
        if (stat(full, &st) != 0 || !S_ISREG(st.st_mode))
            continue;
        if (n == cap) {
            cap = cap ? 2 * cap : 64;
            names = realloc(names, cap * sizeof *names);
        }
        names[n++] = strdup(full);
    }
    closedir(d);
    qsort(names, n, sizeof *names, by_name);
    for (size_t i = 0; i < n; i++) {
        add_file(c, names[i], max_len);
        free(names[i]);
    }
    free(names);
}

/* Values a length or count field is most likely to mishandle. */
static const uint32_t edge_values[] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 12, 14, 16, 18, 23, 24, 28, 63, 64, 127, 128,
                                       139, 140, 255, 256, 1500, 0x7FFF, 0x8000, 0xFFFE, 0xFFFF, 0x10000,
                                       0x7FFFFFFF, 0x80000000u, 0xFFFFFFFFu};

static size_t mutate_once(struct rb_rng *r, uint8_t *buf, size_t len, size_t cap, const struct corpus *c)
{
    switch (rb_below(r, 10)) {
    case 0: /* bit flips */
        for (unsigned k = 1 + (unsigned)rb_below(r, 4); k && len; k--)
            buf[rb_below(r, len)] ^= (uint8_t)(1u << rb_below(r, 8));
        return len;
    case 1: /* random bytes, mostly near the start where the headers are */
        for (unsigned k = 1 + (unsigned)rb_below(r, 3); k && len; k--) {
            size_t lim = rb_below(r, 2) && len > 64 ? 64 : len;
            buf[rb_below(r, lim)] = (uint8_t)rb_next(r);
        }
        return len;
    case 2: { /* insert random bytes */
        size_t n = 1 + (size_t)rb_below(r, rb_below(r, 4) ? 8 : 256);
        if (len + n > cap)
            return len;
        size_t at = (size_t)rb_below(r, len + 1);
        memmove(buf + at + n, buf + at, len - at);
        rb_fill(r, buf + at, n);
        return len + n;
    }
    case 3: { /* delete a range */
        if (len == 0)
            return 0;
        size_t at = (size_t)rb_below(r, len);
        size_t n = 1 + (size_t)rb_below(r, len - at < 64 ? len - at : 64);
        memmove(buf + at, buf + at + n, len - at - n);
        return len - n;
    }
    case 4: { /* duplicate a range (a repeated PDU or header) */
        if (len == 0)
            return 0;
        size_t from = (size_t)rb_below(r, len);
        size_t n = 1 + (size_t)rb_below(r, len - from);
        if (len + n > cap)
            return len;
        uint8_t *range = malloc(n);
        if (range == NULL)
            abort();
        memcpy(range, buf + from, n);
        size_t at = (size_t)rb_below(r, len + 1);
        memmove(buf + at + n, buf + at, len - at);
        memcpy(buf + at, range, n);
        free(range);
        return len + n;
    }
    case 5: { /* splice: our head, another corpus file's tail */
        size_t o = (size_t)rb_below(r, c->n);
        if (c->len[o] == 0)
            return len;
        size_t head = (size_t)rb_below(r, len + 1);
        size_t from = (size_t)rb_below(r, c->len[o]);
        size_t n = c->len[o] - from;
        if (head + n > cap)
            n = cap - head;
        memcpy(buf + head, c->data[o] + from, n);
        return head + n;
    }
    case 6:
    case 7: { /* a 16-bit (or 32-bit) big-endian field set to an edge value */
        bool wide = rb_below(r, 4) == 0;
        size_t w = wide ? 4 : 2;
        if (len < w)
            return len;
        size_t lim = rb_below(r, 3) ? (len < 40 ? len : 40) : len;
        size_t at = (size_t)rb_below(r, lim - w + 1);
        uint32_t v = edge_values[rb_below(r, sizeof edge_values / sizeof edge_values[0])];
        if (rb_below(r, 4) == 0) /* near the true value: off by a few */
            v = (wide ? (uint32_t)buf[at] << 24 | (uint32_t)buf[at + 1] << 16 | (uint32_t)buf[at + 2] << 8 |
                            buf[at + 3]
                      : (uint32_t)buf[at] << 8 | buf[at + 1]) +
                (uint32_t)((int)rb_below(r, 17) - 8);
        for (size_t i = 0; i < w; i++)
            buf[at + i] = (uint8_t)(v >> (8 * (w - 1 - i)));
        return len;
    }
    case 8: /* truncate */
        return len ? (size_t)rb_below(r, len) : 0;
    default: /* extend with junk */ {
        size_t n = (size_t)rb_below(r, 64);
        if (len + n > cap)
            n = cap - len;
        rb_fill(r, buf + len, n);
        return len + n;
    }
    }
}

static void run_one(const uint8_t *data, size_t len, uint64_t iter, bool mutated)
{
    /* exactly len bytes on the heap: a read past the end is an ASan report */
    uint8_t *copy = fuzz_exact_copy(data, len);
    cur_input = copy;
    cur_len = len;
    cur_iter = iter;
    cur_mutated = mutated;
    LLVMFuzzerTestOneInput(copy, len);
    cur_input = NULL;
    free(copy);
}

static unsigned long long parse_count(const char *s, const char *opt)
{
    char *end;
    unsigned long long v = strtoull(s, &end, 0);
    if (*s == '-' || *s == '\0' || *end != '\0') {
        fprintf(stderr, "%s: bad %s '%s'\n", FUZZ_NAME, opt, s);
        exit(2);
    }
    return v;
}

int main(int argc, char **argv)
{
    unsigned long long runs = 10000, min_pdus = 0, max_len = 256 * 1024;
    struct corpus c = {0};
    int i = 1;
    for (; i < argc && argv[i][0] == '-' && argv[i][1] == '-'; i += 2) {
        if (i + 1 >= argc) {
            fprintf(stderr, "%s: %s needs a value\n", FUZZ_NAME, argv[i]);
            return 2;
        }
        if (!strcmp(argv[i], "--runs"))
            runs = parse_count(argv[i + 1], "--runs");
        else if (!strcmp(argv[i], "--min-pdus"))
            min_pdus = parse_count(argv[i + 1], "--min-pdus");
        else if (!strcmp(argv[i], "--max-len"))
            max_len = parse_count(argv[i + 1], "--max-len");
        else {
            fprintf(stderr, "%s: unknown option %s\nusage: %s [--runs N] [--min-pdus N] [--max-len N] PATH...\n",
                    FUZZ_NAME, argv[i], argv[0]);
            return 2;
        }
    }
    for (; i < argc; i++)
        add_path(&c, argv[i], max_len);
    if (c.n == 0) {
        fprintf(stderr, "%s: no corpus files (usage: %s [--runs N] [--min-pdus N] PATH...)\n", FUZZ_NAME, argv[0]);
        return 2;
    }
    if (__sanitizer_set_death_callback)
        __sanitizer_set_death_callback(dump_current);
    signal(SIGABRT, on_abort);
    signal(SIGSEGV, on_abort);

    char tag[64];
    snprintf(tag, sizeof tag, "fuzz %s", FUZZ_NAME);
    struct rb_rng rng = {rb_seed(tag, 0x5EED0F22u)};
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);

    uint64_t iter = 0;
    for (size_t k = 0; k < c.n; k++)
        run_one(c.data[k], c.len[k], iter++, false);
    uint64_t corpus_pdus = fuzz_pdus;

    size_t cap = (size_t)max_len + 512;
    uint8_t *buf = malloc(cap);
    for (unsigned long long m = 0; m < runs; m++) {
        size_t k = (size_t)(m % c.n);
        size_t len = c.len[k] < cap ? c.len[k] : cap;
        memcpy(buf, c.data[k], len);
        /* each mutated input draws its own seed: one input replays alone */
        struct rb_rng ir = {rb_next(&rng)};
        for (unsigned s = 1 + (unsigned)rb_below(&ir, 4); s; s--)
            len = mutate_once(&ir, buf, len, cap - 512, &c);
        run_one(buf, len, iter++, true);
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    printf("%s: %zu corpus files, %llu mutated inputs, %llu executions in %.1f s (%.0f exec/s); "
           "%llu PDUs decoded (%llu of them mutated)\n",
           FUZZ_NAME, c.n, runs, (unsigned long long)iter, secs, secs > 0 ? (double)iter / secs : 0.0,
           (unsigned long long)fuzz_pdus, (unsigned long long)(fuzz_pdus - corpus_pdus));
    free(buf);
    for (size_t k = 0; k < c.n; k++)
        free(c.data[k]);
    free(c.data);
    free(c.len);
    if (fuzz_pdus - corpus_pdus < min_pdus) {
        fprintf(stderr, "%s: only %llu mutated PDUs decoded, below --min-pdus %llu\n", FUZZ_NAME,
                (unsigned long long)(fuzz_pdus - corpus_pdus), min_pdus);
        return 1;
    }
    return 0;
}
