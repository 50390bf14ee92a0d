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

/* "active", "passive", "api" or "untestable": the primary way a rule is checked. */
const char *cf_check_primary(unsigned check);
/* The protocol prefix of an ID (what comes before its first '-'). */
void cf_req_protocol(const char *id, char *out, size_t n);
/* Does some catalog ID have that prefix (case-insensitive)? known gets the
 * catalog's prefixes, in its order, with commas between. */
bool cf_req_protocol_known(const char *prefix, char *known, size_t n);
bool cf_filter_accepts(const struct cf_list_filter *f, enum vw_req req);
/* Parse a level name ("MUST", "must", "MUST_NOT", "MUST-NOT"); -1 if unknown. */
int cf_level_parse(const char *s);

/* Status of one entry given the loaded cases: "active (N cases)",
 * "passive (lint)", "api (vipl tests)", "untestable", or "NOT COVERED". */
void cf_coverage_status(enum vw_req req, const struct cf_case_set *cases, char *out, size_t n);

void cf_list_write_text(FILE *out, const struct cf_case_set *cases, const struct cf_list_filter *f);
void cf_list_write_json(FILE *out, const struct cf_case_set *cases, const struct cf_list_filter *f);

#endif
