/* The fault table of pktway-node (faults.h): its rows; the lookups and the
 * --list-faults printer are the shared fault table's (vitcp/fault_table.h). */
#include "faults.h"

static const struct fault_row rows[] = {FAULT_ROW_NONE, PN_FAULTS(FAULT_ROW)};

FAULT_TABLE_DEFINE(pn, enum pn_fault, rows, PN_FAULT_COUNT)
