/* The fault table of warp-peer (faults.h). */
#include <string.h>
#include "faults.h"

struct fault_info {
    const char *name, *id, *what;
};

static const struct fault_info table[FAULT_COUNT] = {
    [FAULT_NONE] = {"none", "", "no fault"},
#define WARP_FAULT_ROW(sym, name, id, what) [FAULT_##sym] = {name, id, what},
    WARP_FAULTS(WARP_FAULT_ROW)
#undef WARP_FAULT_ROW
};

enum warp_fault warp_fault_by_name(const char *name)
{
    for (unsigned f = 1; name && f < FAULT_COUNT; f++)
        if (strcmp(name, table[f].name) == 0 || strcmp(name, table[f].id) == 0)
            return (enum warp_fault)f;
    return FAULT_NONE;
}

const char *warp_fault_name(enum warp_fault f) { return table[(unsigned)f < FAULT_COUNT ? f : 0].name; }
const char *warp_fault_req_id(enum warp_fault f) { return table[(unsigned)f < FAULT_COUNT ? f : 0].id; }
const char *warp_fault_what(enum warp_fault f) { return table[(unsigned)f < FAULT_COUNT ? f : 0].what; }
