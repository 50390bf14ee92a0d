/* Length-delimited PDU gathering shared by the stream framers (pdu_gather.h). */
#include <stdlib.h>
#include <string.h>
#include "pdu_gather.h"

enum { LEN_PREFIX = 4 }; /* every framed protocol announces its length in 4 bytes */

static size_t checked_len(const struct vw_gather_ops *ops, void *owner, const uint8_t *p)
{
    size_t n = ops->pdu_len(owner, p);
    return n < LEN_PREFIX ? 0 : n;
}

enum { MIN_BUF = 256 };

/* Room for want bytes in *buf. */
static bool reserve(uint8_t **buf, size_t *cap, size_t want)
{
    if (*buf != NULL && *cap >= want)
        return true;
    size_t n = want < MIN_BUF ? MIN_BUF : want;
    uint8_t *b = realloc(*buf, n);
    if (b == NULL)
        return false;
    *buf = b;
    *cap = n;
    return true;
}

bool vw_gather_feed(uint8_t **bufp, size_t *cap, size_t *have, const uint8_t *data, size_t len,
                    const struct vw_gather_ops *ops, void *owner)
{
    while (len > 0 && !ops->stopped(owner)) {
        if (*have == 0 && len >= LEN_PREFIX) {
            size_t n = checked_len(ops, owner, data);
            if (n == 0)
                return false;
            if (n <= len) {
                ops->deliver(owner, data, n);
                data += n;
                len -= n;
                continue;
            }
        }
        size_t want = LEN_PREFIX;
        if (*have >= LEN_PREFIX) {
            want = checked_len(ops, owner, *bufp);
            if (want == 0)
                return false;
        }
        if (!reserve(bufp, cap, want)) {
            ops->no_memory(owner);
            return false;
        }
        uint8_t *buf = *bufp;
        size_t take = want - *have < len ? want - *have : len;
        memcpy(buf + *have, data, take);
        *have += take;
        data += take;
        len -= take;
        if (*have >= LEN_PREFIX) {
            size_t n = checked_len(ops, owner, buf); /* a bad length is reported as soon as known */
            if (n == 0)
                return false;
            if (*have == n) {
                *have = 0;
                ops->deliver(owner, buf, n);
            }
        }
    }
    return true;
}
