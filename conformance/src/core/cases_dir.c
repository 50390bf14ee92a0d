/* The default cases folder: installed beside the program, else the source tree. */
#include "conform/cases_dir.h"
#include "conform/case.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#ifndef CF_CASES_DIR
#define CF_CASES_DIR "conformance/cases"
#endif
/* From the installed program's folder to the installed cases, e.g.
 * "../share/vitcp/cases" (computed by CMake from the install layout). */
#ifndef CF_CASES_INSTALL_REL
#define CF_CASES_INSTALL_REL "../share/vitcp/cases"
#endif

const char *cf_default_cases_dir(void)
{
    static char installed[PATH_MAX];
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0) {
        exe[n] = '\0';
        char *slash = strrchr(exe, '/');
        if (slash) {
            *slash = '\0';
            int w = snprintf(installed, sizeof installed, "%s/%s", exe, CF_CASES_INSTALL_REL);
            if (w > 0 && (size_t)w < sizeof installed && cf_is_directory(installed))
                return installed;
        }
    }
    return CF_CASES_DIR;
}
