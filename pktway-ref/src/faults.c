/* The fault table of pktway-node (faults.h). */
#include <string.h>
#include "faults.h"

struct fault_info {
    const char *name, *id, *what;
};

static const struct fault_info table[PN_FAULT_COUNT] = {
    [PN_FAULT_NONE] = {"none", "", "no fault"},
#define PN_FAULT_ROW(sym, name, id, what) [PN_FAULT_##sym] = {name, id, what},
    PN_FAULTS(PN_FAULT_ROW)
#undef PN_FAULT_ROW
};

enum pn_fault pn_fault_by_name(const char *name)
{
    for (unsigned f = 1; name && f < PN_FAULT_COUNT; f++)
        if (strcmp(name, table[f].name) == 0 || strcmp(name, table[f].id) == 0)
            return (enum pn_fault)f;
    return PN_FAULT_NONE;
}

const char *pn_fault_name(enum pn_fault f) { return table[(unsigned)f < PN_FAULT_COUNT ? f : 0].name; }
const char *pn_fault_req_id(enum pn_fault f) { return table[(unsigned)f < PN_FAULT_COUNT ? f : 0].id; }
const char *pn_fault_what(enum pn_fault f) { return table[(unsigned)f < PN_FAULT_COUNT ? f : 0].what; }
