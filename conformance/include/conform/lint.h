/* Offline lint of a pcap/pcapng capture: its options, its result (each
 * issue names the frame and the requirement ID) and its report. The core
 * and the lint modules it hands the traffic to: conform/protocol.h, "lint". */
#ifndef CONFORM_LINT_H
#define CONFORM_LINT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "conform/protocol.h"
#include "vitcp/findings.h"

struct cf_lint_issue {
    uint64_t frame;
    const struct cf_lint_module *module; /* whose rules (its title is the issue's protocol) */
    unsigned conn;           /* TCP connection number (0 for datagrams) */
    int dir;                 /* 0: the side that sent the connection's first bytes; -1: none */
    enum vw_req req;         /* VW_REQ_NONE for a notice about the capture itself */
    enum vw_severity severity;
    char detail[VW_FINDING_DETAIL_MAX + 40];
};

struct cf_lint_result {
    struct cf_lint_issue *issues;
    size_t count, cap;
    uint64_t frames;
    /* each lint module's counters (cf_lint_modules[m]->counters[k]) */
    uint64_t counts[CF_PROTOCOLS_MAX][CF_LINT_COUNTERS_MAX];
    unsigned errors, warnings, notes;
    double seconds;
};

/* The settings of every lint module, by its place in cf_lint_modules: its
 * port and its options' values (the option's strings, by their place in
 * its options; NULL: not given). */
struct cf_lint_options {
    uint16_t port[CF_PROTOCOLS_MAX];
    const char *value[CF_PROTOCOLS_MAX][CF_LINT_OPTIONS_MAX];
};

/* Every module's defaults. */
void cf_lint_options_init(struct cf_lint_options *o);
/* A lint option of a module (`--port 5995`): 1 taken, 0 no module's, -1 a
 * bad value (why). With takes_value non-NULL only says whether it takes a
 * value (value not needed). */
int cf_lint_set_option(struct cf_lint_options *o, const char *name, const char *value, bool *takes_value,
                       char *why, size_t whylen);
/* Lint a capture. Returns 0 (the result says what was found), or -1 when the
 * file cannot be read at all (reason in err; result holds what was read). */
int cf_lint_file(const char *path, const struct cf_lint_options *o, struct cf_lint_result *res,
                 char *err, size_t errlen);
/* The same over frames already in memory (a live recording), of a link
 * type netio's reader takes (101, LINKTYPE_RAW: bare IP packets); frame
 * numbers count from 1 in the array's order. */
struct cf_lint_frame {
    uint64_t ts_usec;
    const uint8_t *data;
    size_t len;
};
int cf_lint_frames(int linktype, const struct cf_lint_frame *frames, size_t count,
                   const struct cf_lint_options *o, struct cf_lint_result *res, char *err, size_t errlen);
void cf_lint_result_free(struct cf_lint_result *res);

/* Number of issues of at least severity sev naming req. */
size_t cf_lint_count(const struct cf_lint_result *res, enum vw_req req, enum vw_severity sev);
/* The summary's counter of that JSON key (a module's counters[].key); 0 if no module has it. */
uint64_t cf_lint_counter(const struct cf_lint_result *res, const char *key);

/* The report (core/lint_report.c). */
void cf_lint_write_text(FILE *out, const char *path, const struct cf_lint_result *res);
void cf_lint_write_json(FILE *out, const char *path, const struct cf_lint_result *res);
/* The lint module whose issues and counts the report shows first, without
 * a name: the default protocol's (cf_protocol_default). */
const struct cf_lint_module *cf_lint_module_default(void);

#endif
