/* trafgen: a scenario file (-f) through tg_script_load: a script, or NULL
 * with "FILE:LINE: reason" / "FILE: reason" naming the file. */
#include <string.h>

#include "fuzz.h"
#include "vitcp/trafgen.h"

int LLVMFuzzerTestOneInput(const uint8_t *buf, size_t len)
{
    const char *path = fuzz_scratch_file(buf, len, ".tgs");
    char err[256];
    err[0] = '\0';
    struct tg_script *s = tg_script_load(path, err, sizeof err);
    fuzz_pdus++;
    if (s)
        tg_script_free(s);
    else {
        FUZZ_CHECK(memchr(err, '\0', sizeof err) != NULL, "error not terminated");
        FUZZ_CHECK(strncmp(err, path, strlen(path)) == 0, "error does not name the file");
    }
    return 0;
}
