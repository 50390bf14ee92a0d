/* The fault table of warp-peer (faults.h): its rows; the lookups and the
 * --list-faults printer are the shared fault table's (vitcp/fault_table.h). */
#include "faults.h"

static const struct fault_row rows[] = {FAULT_ROW_NONE, WARP_FAULTS(FAULT_ROW)};

FAULT_TABLE_DEFINE(warp, enum warp_fault, rows, FAULT_COUNT)
