/* The fault table of ift-peer (faults.h). */
#include <string.h>
#include "faults.h"

struct fault_info {
    const char *name, *id, *what;
};

static const struct fault_info table[FAULT_COUNT] = {
    [FAULT_NONE] = {"none", "", "no fault"},
#define IFT_FAULT_ROW(sym, name, id, what) [FAULT_##sym] = {name, id, what},
    IFT_FAULTS(IFT_FAULT_ROW)
#undef IFT_FAULT_ROW
};

enum ift_fault ift_fault_by_name(const char *name)
{
    for (unsigned f = 1; name && f < FAULT_COUNT; f++)
        if (strcmp(name, table[f].name) == 0 || strcmp(name, table[f].id) == 0)
            return (enum ift_fault)f;
    return FAULT_NONE;
}

const char *ift_fault_name(enum ift_fault f) { return table[(unsigned)f < FAULT_COUNT ? f : 0].name; }
const char *ift_fault_req_id(enum ift_fault f) { return table[(unsigned)f < FAULT_COUNT ? f : 0].id; }
const char *ift_fault_what(enum ift_fault f) { return table[(unsigned)f < FAULT_COUNT ? f : 0].what; }
