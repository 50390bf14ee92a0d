/* vitcp-conform: a thin main over the conformance library (conform/cli.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "conform/cli.h"

int main(int argc, char **argv)
{
    int rc = cf_main(argc, argv, stdout, stderr);
    /* A report that could not be written is a failure, not a silent pass. */
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "vitcp-conform: writing standard output failed: %s\n", strerror(errno ? errno : EIO));
        return rc ? rc : 1;
    }
    return rc;
}
