/* Lookups in a module's vocabulary tables (conform/protocol.h). */
#include <string.h>
#include "conform/protocol.h"

int cf_name_index(const char *const *names, unsigned count, const char *name)
{
    for (unsigned i = 0; i < count; i++)
        if (strcmp(names[i], name) == 0)
            return (int)i;
    return -1;
}

const char *cf_name_at(const char *const *names, unsigned count, unsigned i)
{
    return i < count ? names[i] : "?";
}
