/*
 * What a stream framer reported, to compare the same stream fed whole and
 * in chunks: the framer promises the same PDUs (offset, length, bytes) and
 * the same sticky error however the bytes arrive, and never a PDU beyond
 * the bytes fed so far.
 */
#ifndef FUZZ_STREAM_CHECK_H
#define FUZZ_STREAM_CHECK_H

#include "fuzz.h"

struct stream_record {
    uint64_t fed;      /* bytes fed so far */
    uint64_t next_off; /* the next PDU must start at or after this */
    uint64_t pdus;
    uint32_t digest;   /* of every PDU's offset, length and bytes */
};

static inline void stream_record_pdu(struct stream_record *r, const uint8_t *raw, size_t len, uint64_t off)
{
    FUZZ_CHECK(off >= r->next_off, "PDUs out of order or overlapping");
    FUZZ_CHECK(off + len <= r->fed, "PDU beyond the bytes fed so far");
    FUZZ_CHECK(raw != NULL || len == 0, "PDU without bytes");
    r->next_off = off + len;
    r->pdus++;
    uint32_t h = r->digest ^ (uint32_t)off ^ (uint32_t)len * 2654435761u;
    for (size_t i = 0; i < len; i++)
        h = (h ^ raw[i]) * 16777619u;
    r->digest = h;
    fuzz_pdus++;
}

/* Chunk sizes for the split feed: 1..max bytes, drawn from the input itself
 * so that one input always splits the same way. */
static inline size_t stream_chunk(uint32_t *s, size_t left)
{
    size_t max = (*s & 1) ? 7 : 1500;
    size_t k = 1 + fuzz_rand(s) % max;
    return k < left ? k : left;
}

#endif
