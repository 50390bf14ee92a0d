/* Collecting rule verdicts without allocating. */
#include <stdarg.h>
#include <stdio.h>
#include "vitcp/findings.h"

void vw_findings_add(struct vw_findings *f, enum vw_req req, enum vw_severity sev,
                     uint32_t offset, uint32_t length, const char *fmt, ...)
{
    if (!f)
        return;
    if (f->count >= VW_FINDINGS_MAX) {
        f->dropped++;
        return;
    }
    struct vw_finding *it = &f->item[f->count++];
    it->req = req;
    it->severity = sev;
    it->offset = offset;
    it->length = length;
    it->detail[0] = '\0';
    if (fmt) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(it->detail, sizeof it->detail, fmt, ap);
        va_end(ap);
    }
}

int vw_findings_has(const struct vw_findings *f, enum vw_req req)
{
    for (unsigned i = 0; f && i < f->count; i++)
        if (f->item[i].req == req)
            return 1;
    return 0;
}

const char *vw_severity_name(enum vw_severity sev)
{
    switch (sev) {
    case VW_SEV_NOTE: return "note";
    case VW_SEV_WARN: return "warning";
    case VW_SEV_ERROR: return "error";
    }
    return "?";
}
