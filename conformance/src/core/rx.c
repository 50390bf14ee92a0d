/* What a module's session hands the core (conform/protocol.h): the first
 * rule the target broke, and the messages' heap blocks. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "conform/protocol.h"

void cf_rx_broke(struct cf_rx_verdict *v, enum vw_req req, const char *fmt, ...)
{
    if (v->req != VW_REQ_NONE)
        return;
    v->req = req;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(v->detail, sizeof v->detail, fmt, ap);
    va_end(ap);
}

void cf_rx_findings(struct cf_rx_verdict *v, const struct vw_findings *fs, const char *fmt, ...)
{
    for (unsigned i = 0; i < fs->count && v->req == VW_REQ_NONE; i++)
        if (fs->item[i].severity == VW_SEV_ERROR) {
            char where[sizeof v->detail];
            va_list ap;
            va_start(ap, fmt);
            vsnprintf(where, sizeof where, fmt, ap);
            va_end(ap);
            cf_rx_broke(v, fs->item[i].req, "%s: %s", where, fs->item[i].detail);
        }
}

bool cf_bytes_append(uint8_t **buf, size_t *len, size_t *cap, const uint8_t *p, size_t n)
{
    if (*len + n > *cap) {
        size_t grown = *cap ? *cap : 256;
        while (grown < *len + n)
            grown *= 2;
        uint8_t *b = realloc(*buf, grown);
        if (!b)
            return false;
        *buf = b;
        *cap = grown;
    }
    if (n)
        memcpy(*buf + *len, p, n);
    *len += n;
    return true;
}

void cf_msg_free(struct cf_msg *m)
{
    free((void *)m->raw);
    free(m->decoded);
    m->raw = NULL;
    m->decoded = NULL;
}
