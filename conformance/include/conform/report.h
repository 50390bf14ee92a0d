/*
 * The conformance report: one result per case (verdict, the requirement IDs
 * it covers, the one it broke, the capture frames that prove it), and the
 * writers for the terminal, JSON (a stable interface) and JUnit XML.
 */
#ifndef CONFORM_REPORT_H
#define CONFORM_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include "vitcp/catalog.h"

enum cf_verdict {
    CF_PASS,
    CF_FAIL,
    CF_TIMEOUT,
    CF_SKIP,
    CF_NOT_APPLICABLE,
    CF_ADVISORY, /* differs from a project decision on what the draft leaves open: never fails a run */
    CF_INCONCLUSIVE, /* the run's impairment destroyed the case's evidence (C61, datagram links): never fails */
};

#define CF_MAX_REQS 12
#define CF_MAX_FRAMES 16
#define CF_ID_MAX 64
#define CF_MESSAGE_MAX 1024

struct cf_result {
    char id[CF_ID_MAX];      /* case id */
    char file[256];          /* case file, for the failure line */
    char section[32];        /* draft section it exercises */
    char protocol[16];       /* its protocol module's name */
    enum vw_req reqs[CF_MAX_REQS];
    unsigned nreqs;
    enum vw_level level;     /* strongest level among reqs */
    enum cf_verdict verdict;
    bool rule_broken;        /* the fail came from a rule the target's bytes broke (its session), not a step */
    enum vw_req failed_req;  /* the requirement a fail/timeout breaks (advisory: the decision differed from) */
    unsigned frames[CF_MAX_FRAMES]; /* frame numbers in the run's capture */
    unsigned nframes;
    char message[CF_MESSAGE_MAX];
    char impaired[200];      /* what the run's impairment did to the case's packets (C61; "" none) */
    double seconds;
};

struct cf_summary {
    unsigned ran, passed, failed, timed_out, skipped, not_applicable, advisory, inconclusive;
    unsigned must_failed; /* failing or timed-out cases whose broken rule is a MUST */
};

struct cf_report {
    struct cf_result *cases;
    size_t count, cap;
    char capture[256]; /* recorded capture of the run ("" if none) */
    char target[300];
    char protocol[16]; /* the protocol the run selected ("" if not one) */
    char impair[200];  /* the run's impairment profile in full (C61; "" none) */
    double seconds;
    /* The test conventions the run settled (C60): offered or not, and how. */
    struct cf_report_hook {
        char name[24];
        bool offered;
        char how[400];
    } hooks[16];
    unsigned nhooks;
};

void cf_report_init(struct cf_report *r);
void cf_report_free(struct cf_report *r);
/* Copy a result in; returns 0, or -1 when out of memory. */
int cf_report_add(struct cf_report *r, const struct cf_result *res);
void cf_report_summary(const struct cf_report *r, struct cf_summary *s);
/* 0 only when no case whose broken requirement is a MUST/MUST NOT (or an
 * implied format rule or project decision) failed or timed out; else 1. */
int cf_report_exit_code(const struct cf_report *r);

const char *cf_verdict_name(enum cf_verdict v); /* "pass", "fail", ... */
/* Strongest level: MUST > MUST NOT > DECISION/IMPLIED > SHOULD > MAY. */
enum vw_level cf_level_strongest(const enum vw_req *reqs, unsigned n);

/* Helpers for result building. */
void cf_result_add_frame(struct cf_result *res, unsigned frame);
void cf_result_set_message(struct cf_result *res, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* One line per case, then "Ran N: P passing, F failing, T timed out ...". */
void cf_report_write_text(FILE *out, const struct cf_report *r);
/* The closing line alone (also used after the progress bar). */
void cf_report_write_closing(FILE *out, const struct cf_report *r);
/* {"cases":[{"id","requirements","level","verdict","frames","message",...}],"summary":{...}} */
void cf_report_write_json(FILE *out, const struct cf_report *r);
void cf_report_write_junit(FILE *out, const struct cf_report *r);

/* Write s as a JSON string literal (quotes included). */
void cf_json_string(FILE *out, const char *s);
/* ', "key": ' and s as a JSON string: a member after the object's first. */
void cf_json_member(FILE *out, const char *key, const char *s);

#endif
