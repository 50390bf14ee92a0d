/*
 * Gathering length-delimited PDUs out of a TCP byte stream, shared by the
 * VI/TCP, IFT and WARP framers: each knows a PDU's length from its first
 * four bytes. PDUs already whole in the caller's chunk are delivered in
 * place; split ones are copied into the framer's buffer, which grows to the
 * length of the PDU being gathered (so a framer that never sees a split PDU
 * costs no buffer, and a connection of small PDUs a small one). Never reads
 * outside data[0..len).
 */
#ifndef VITCP_PDU_GATHER_H
#define VITCP_PDU_GATHER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct vw_gather_ops {
    /* Length of the PDU whose first four bytes are at p; 0 when no PDU can
     * start there (the owner records why). Never between 1 and 3. */
    size_t (*pdu_len)(void *owner, const uint8_t *p);
    /* One whole PDU; raw is valid only during the call. */
    void (*deliver)(void *owner, const uint8_t *raw, size_t len);
    /* True once the owner has hit a sticky error. */
    bool (*stopped)(void *owner);
    /* The buffer could not grow: the owner must stop (sticky). */
    void (*no_memory)(void *owner);
};

/* Feed bytes; *buf (capacity *cap, may start NULL/0) is grown with realloc
 * and freed by the owner. Returns false when a PDU length was impossible or
 * memory ran out. */
bool vw_gather_feed(uint8_t **buf, size_t *cap, size_t *have, const uint8_t *data, size_t len,
                    const struct vw_gather_ops *ops, void *owner);

#endif
