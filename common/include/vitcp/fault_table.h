/*
 * The fault table of a reference program (ift-peer, warp-peer,
 * pktway-node): its deliberate faults, each named by the requirement ID of
 * the rule it breaks. Each program keeps its rows in its own X-macro
 * (faults.h: X(SYM, "name", "REQ-ID", "what it does")) and its enum; this
 * helper holds what was the same in all three: the lookup by name or ID,
 * the bounds-checked accessors and the --list-faults printer.
 *
 * A program's faults.c:
 *     static const struct fault_row rows[] = {FAULT_ROW_NONE, MY_FAULTS(FAULT_ROW)};
 *     FAULT_TABLE_DEFINE(my, enum my_fault, rows, MY_FAULT_COUNT)
 * which defines my_fault_by_name, my_fault_name, my_fault_req_id,
 * my_fault_what and my_fault_list (declare them with FAULT_TABLE_DECLARE).
 */
#ifndef VITCP_FAULT_TABLE_H
#define VITCP_FAULT_TABLE_H

#include <stdio.h>

struct fault_row {
    const char *name, *id, *what;
};

/* Row 0 of every table: no fault. */
#define FAULT_ROW_NONE {"none", "", "no fault"}
/* One row from an X-macro entry; the rows follow the enum's order. */
#define FAULT_ROW(sym, name, id, what) {name, id, what},

/* The row whose name or requirement ID is `name` (rows 1..n-1); 0 if none. */
unsigned fault_table_find(const struct fault_row *rows, unsigned n, const char *name);
/* Row f, or row 0 when f is out of range. */
const struct fault_row *fault_table_row(const struct fault_row *rows, unsigned n, unsigned f);
/* "NAME ID\n" for rows 1..n-1 (--list-faults); 0, or -1 when writing failed. */
int fault_table_print(const struct fault_row *rows, unsigned n, FILE *out);

#define FAULT_TABLE_DECLARE(prefix, type)                                                              \
    type prefix##_fault_by_name(const char *name); /* name or requirement ID; 0 (none) if unknown */ \
    const char *prefix##_fault_name(type f);       /* "none" for none */                               \
    const char *prefix##_fault_req_id(type f);                                                         \
    const char *prefix##_fault_what(type f);                                                           \
    int prefix##_fault_list(FILE *out) /* --list-faults */

#define FAULT_TABLE_DEFINE(prefix, type, rows, count)                                                  \
    _Static_assert(sizeof(rows) / sizeof((rows)[0]) == (count), "one row for each fault and none");  \
    type prefix##_fault_by_name(const char *name) { return (type)fault_table_find(rows, count, name); } \
    const char *prefix##_fault_name(type f) { return fault_table_row(rows, count, (unsigned)f)->name; } \
    const char *prefix##_fault_req_id(type f) { return fault_table_row(rows, count, (unsigned)f)->id; } \
    const char *prefix##_fault_what(type f) { return fault_table_row(rows, count, (unsigned)f)->what; } \
    int prefix##_fault_list(FILE *out) { return fault_table_print(rows, count, out); }

#endif
