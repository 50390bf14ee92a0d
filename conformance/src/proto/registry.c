/* The protocol table: every module vitcp-conform has (conform/protocol.h).
 * It lives with the modules, above the core: adding a protocol is one line
 * here and one module in src/proto/. */
#include "conform/protocol.h"

#include <stdio.h>
#include <strings.h>

#include "conform/lint.h"
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

/* The lint modules: the order a connection's ports and first bytes are
 * tried in (lint.h). IFT's magic is the surest sign, a plausible VI/TCP
 * header the weakest; a port configured for two modules is the first's. */
const struct cf_lint_module *const cf_lint_modules[] = {
    &cf_lint_ift,
    &cf_lint_warp,
    &cf_lint_vitcp,
    &cf_lint_eep,
    NULL,
};

const struct cf_lint_module *cf_lint_module_default(void)
{
    for (const struct cf_lint_module *const *m = cf_lint_modules; *m; m++)
        if ((*m)->protocol == cf_protocol_default())
            return *m;
    return NULL;
}

_Static_assert(sizeof cf_lint_modules / sizeof *cf_lint_modules - 1 <= CF_PROTOCOLS_MAX,
               "a lint result keeps the counts of at most CF_PROTOCOLS_MAX modules");
