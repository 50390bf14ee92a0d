/* Helpers shared by the harnesses (both the libFuzzer and the replayer builds). */
#include "fuzz.h"

#include <string.h>
#include <unistd.h>

uint64_t fuzz_pdus;

uint8_t *fuzz_exact_copy(const uint8_t *data, size_t size)
{
    uint8_t *p = malloc(size ? size : 1);
    if (p == NULL)
        abort();
    if (size)
        memcpy(p, data, size);
    return p;
}

static char scratch_path[256];

static void remove_scratch(void)
{
    if (scratch_path[0])
        unlink(scratch_path);
}

const char *fuzz_scratch_file(const uint8_t *data, size_t size, const char *suffix)
{
    if (!scratch_path[0]) {
        const char *dir = getenv("TMPDIR");
        snprintf(scratch_path, sizeof scratch_path, "%s/vitcp-fuzz-%ld%s", dir && *dir ? dir : "/tmp",
                 (long)getpid(), suffix);
        atexit(remove_scratch);
    }
    FILE *f = fopen(scratch_path, "wb");
    if (f == NULL || (size && fwrite(data, 1, size, f) != size) || fclose(f) != 0) {
        perror(scratch_path);
        abort();
    }
    return scratch_path;
}
