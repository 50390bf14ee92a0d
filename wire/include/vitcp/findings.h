/*
 * Rule verdicts produced by decoders, framers and rule checks: each names the
 * violated requirement (catalog.h), where in the PDU it shows, and a short
 * human detail. Fixed-size so that hot paths never allocate.
 */
#ifndef VITCP_FINDINGS_H
#define VITCP_FINDINGS_H

#include <stdint.h>
#include "vitcp/catalog.h"

enum vw_severity {
    VW_SEV_NOTE,  /* allowed but worth knowing (e.g. another reading of the draft) */
    VW_SEV_WARN,  /* a SHOULD broken, or suspicious */
    VW_SEV_ERROR, /* a MUST or format rule broken */
};

#define VW_FINDINGS_MAX 16
#define VW_FINDING_DETAIL_MAX 120

struct vw_finding {
    enum vw_req req;
    enum vw_severity severity;
    uint32_t offset; /* byte offset inside the PDU the finding is about */
    uint32_t length; /* bytes concerned (0: the PDU as a whole) */
    char detail[VW_FINDING_DETAIL_MAX];
};

struct vw_findings {
    unsigned count;
    unsigned dropped; /* findings that did not fit */
    struct vw_finding item[VW_FINDINGS_MAX];
};

static inline void vw_findings_clear(struct vw_findings *f) { f->count = 0; f->dropped = 0; }

/* Append a finding (printf-style detail). NULL f is allowed and ignored. */
void vw_findings_add(struct vw_findings *f, enum vw_req req, enum vw_severity sev,
                     uint32_t offset, uint32_t length, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));

/* 1 if a finding for req is present. */
int vw_findings_has(const struct vw_findings *f, enum vw_req req);

const char *vw_severity_name(enum vw_severity sev);

#endif
