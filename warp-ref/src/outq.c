#include <stdlib.h>
#include <string.h>
#include "outq.h"

uint8_t *outq_reserve(struct outq *q, size_t n)
{
    if (q->head + q->len + n > q->cap) {
        /* move to the front first; grow only when that is not enough */
        if (q->head) {
            memmove(q->buf, q->buf + q->head, q->len);
            q->head = 0;
        }
        if (q->len + n > q->cap) {
            size_t cap = q->cap ? q->cap : 65536;
            while (cap < q->len + n)
                cap *= 2;
            uint8_t *b = realloc(q->buf, cap);
            if (!b)
                return NULL;
            q->buf = b;
            q->cap = cap;
        }
    }
    uint8_t *p = q->buf + q->head + q->len;
    q->len += n;
    return p;
}

void outq_unreserve(struct outq *q, size_t n) { q->len -= n < q->len ? n : q->len; }

void outq_consume(struct outq *q, size_t n)
{
    if (n >= q->len) {
        q->head = q->len = 0;
        return;
    }
    q->head += n;
    q->len -= n;
}

void outq_free(struct outq *q)
{
    free(q->buf);
    memset(q, 0, sizeof *q);
}
