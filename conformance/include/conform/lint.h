/*
 * Offline lint: reads a pcap/pcapng capture (netio's reader, with TCP
 * reassembly), finds the VI/TCP connections (default port 5995 or a
 * plausible first segment), and runs the same wire-library session checks
 * the active engine uses on every segment of both directions. Each
 * violation names the frame and the requirement ID.
 */
#ifndef CONFORM_LINT_H
#define CONFORM_LINT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "vitcp/findings.h"

struct cf_lint_issue {
    uint64_t frame;
    unsigned conn;
    int dir;                 /* 0: the side that opened the connection */
    enum vw_req req;         /* VW_REQ_NONE for a notice about the capture itself */
    enum vw_severity severity;
    char detail[VW_FINDING_DETAIL_MAX + 40];
};

struct cf_lint_result {
    struct cf_lint_issue *issues;
    size_t count, cap;
    uint64_t frames, connections, vitcp_connections, segments, bytes;
    unsigned errors, warnings, notes;
    double seconds;
};

struct cf_lint_options {
    uint16_t vitcp_port;     /* default VW_VITCP_DEFAULT_PORT (V1) */
};

void cf_lint_options_init(struct cf_lint_options *o);
/* Lint a capture. Returns 0 (the result says what was found), or -1 when the
 * file cannot be read at all (reason in err; result holds what was read). */
int cf_lint_file(const char *path, const struct cf_lint_options *o, struct cf_lint_result *res,
                 char *err, size_t errlen);
void cf_lint_result_free(struct cf_lint_result *res);

/* Number of issues of at least severity sev naming req. */
size_t cf_lint_count(const struct cf_lint_result *res, enum vw_req req, enum vw_severity sev);

void cf_lint_write_text(FILE *out, const char *path, const struct cf_lint_result *res);
void cf_lint_write_json(FILE *out, const char *path, const struct cf_lint_result *res);

#endif
