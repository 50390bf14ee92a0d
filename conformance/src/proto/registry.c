/* The protocol table: every module vitcp-conform has (conform/protocol.h).
 * It lives with the modules, above the core: adding a protocol is one line
 * here and one module in src/proto/. */
#include "conform/protocol.h"

#include <stdio.h>
#include <strings.h>

#include "conform/proto/eep.h"
#include "conform/proto/vitcp.h"
#include "conform/proto/warp.h"
#include "conform/proto/ift.h"

const struct conform_protocol *const cf_protocols[] = {
    &cf_proto_vitcp, /* the first is the default */
    &cf_proto_warp,
    &cf_proto_ift,
    &cf_proto_eep,
    NULL,
};

const struct conform_protocol *cf_protocol_find(const char *name)
{
    for (const struct conform_protocol *const *p = cf_protocols; *p; p++)
        if (strcasecmp((*p)->name, name) == 0)
            return *p;
    return NULL;
}

const struct conform_protocol *cf_protocol_default(void)
{
    return cf_protocols[0];
}

const char *cf_protocol_names(void)
{
    static char names[128];
    if (!names[0]) {
        size_t o = 0;
        for (const struct conform_protocol *const *p = cf_protocols; *p && o < sizeof names; p++)
            o += (size_t)snprintf(names + o, sizeof names - o, "%s%s", p == cf_protocols ? "" : ", ", (*p)->name);
    }
    return names;
}
