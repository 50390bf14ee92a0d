/*
 * Coverage of the requirement catalog: for every entry, where it is checked
 * (active cases that name it, passive lint, API tests) or why it cannot be.
 * `vitcp-conform list` prints it.
 */
#ifndef CONFORM_COVERAGE_H
#define CONFORM_COVERAGE_H

#include <stdbool.h>
#include <stdio.h>
#include "conform/case.h"

struct cf_list_filter {
    const char *protocol; /* a catalog prefix of IDs (case-insensitive), or NULL */
    int level;            /* enum vw_level, or -1 for all */
};

/* Does some catalog ID have that prefix (case-insensitive)? known gets the
 * catalog's prefixes, in its order, with commas between. */
bool cf_req_protocol_known(const char *prefix, char *known, size_t n);
/* Parse a level name ("MUST", "must", "MUST_NOT", "MUST-NOT"); -1 if unknown. */
int cf_level_parse(const char *s);

void cf_list_write_text(FILE *out, const struct cf_case_set *cases, const struct cf_list_filter *f);
void cf_list_write_json(FILE *out, const struct cf_case_set *cases, const struct cf_list_filter *f);

#endif
