/* Bytes waiting for a non-blocking socket: appended at the end, written
 * from the front. Grows as needed; the owner bounds it by reading less. */
#ifndef WARP_PEER_OUTQ_H
#define WARP_PEER_OUTQ_H

#include <stddef.h>
#include <stdint.h>

struct outq {
    uint8_t *buf;
    size_t head, len, cap; /* bytes [head, head + len) are queued */
};

/* n writable bytes at the end (counted as queued), or NULL without memory. */
uint8_t *outq_reserve(struct outq *q, size_t n);
/* Give back the last n bytes of a reservation that was not filled. */
void outq_unreserve(struct outq *q, size_t n);
void outq_consume(struct outq *q, size_t n);
void outq_free(struct outq *q);

#endif
