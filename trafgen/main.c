/* vitcp-trafgen: see trafgen/include/vitcp/trafgen.h and docs/trafgen.md. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "vitcp/trafgen.h"

/* Output that cannot be written (stdout on a full disk, a closed pipe) is
 * not lost silently: exit 1, "failed while generating". */
int main(int argc, char **argv)
{
    int rc = tg_main(argc, argv);
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "vitcp-trafgen: writing standard output failed: %s\n", strerror(errno));
        return rc ? rc : 1;
    }
    return rc;
}
