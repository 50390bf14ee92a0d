/* The requirement catalog table, generated from the .def files. */
#include <string.h>
#include "vitcp/catalog.h"

#define MUST VW_LEVEL_MUST
#define MUST_NOT VW_LEVEL_MUST_NOT
#define SHOULD VW_LEVEL_SHOULD
#define SHOULD_NOT VW_LEVEL_SHOULD_NOT
#define MAY VW_LEVEL_MAY
#define IMPLIED VW_LEVEL_IMPLIED
#define DECISION VW_LEVEL_DECISION

static const struct vw_req_info catalog[VW_REQ_COUNT] = {
    [VW_REQ_NONE] = {"", VW_LEVEL_IMPLIED, "", 0, "", ""},
#define VW_REQ(sym, id, level, section, check, text, reason) \
    [VW_REQ_##sym] = {id, level, section, check, text, reason},
#include "vitcp_catalog.def"
#undef VW_REQ
};

const struct vw_req_info *vw_req_info(enum vw_req req)
{
    if ((unsigned)req >= VW_REQ_COUNT)
        return &catalog[VW_REQ_NONE];
    return &catalog[req];
}

const char *vw_req_id(enum vw_req req) { return vw_req_info(req)->id; }

enum vw_req vw_req_by_id(const char *id)
{
    if (!id || !*id)
        return VW_REQ_NONE;
    for (unsigned i = 1; i < VW_REQ_COUNT; i++)
        if (strcmp(catalog[i].id, id) == 0)
            return (enum vw_req)i;
    return VW_REQ_NONE;
}

const char *vw_level_name(enum vw_level level)
{
    static const char *const names[] = {"MUST", "MUST NOT", "SHOULD", "SHOULD NOT",
                                        "MAY", "IMPLIED", "DECISION"};
    if ((unsigned)level >= sizeof names / sizeof names[0])
        return "?";
    return names[level];
}

size_t vw_req_count(void) { return VW_REQ_COUNT - 1; }
