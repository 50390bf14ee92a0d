/*
 * warp-peer's allowed choices (--choice, --list-choices): what the WARP
 * summary leaves to an implementation, each from the line of the draft that
 * allows it (docs/warp-peer.md, "Allowed choices"). Unlike a fault, a
 * choice is conforming: the conformance suite gives a peer with any of them
 * a clean report (decision C62, tests/conformance/test_warp_peer_choices.py).
 */
#ifndef WARP_PEER_CHOICES_H
#define WARP_PEER_CHOICES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Which of its ULP PDUs carry the Completion bit (lines 178-180: the
 * completion model is the sender's). */
enum completion_policy {
    COMPLETION_COPY,  /* an echo carries the C of what it echoes (W6), the iSCSI PDUs as W8 */
    COMPLETION_NEVER, /* never sets C */
    COMPLETION_ALL,   /* C on the last chunk of every ULP PDU (never on iSCSI data RDMA Writes, B.4) */
};

struct peer_choices {
    size_t header_chunk;       /* first chunk of a ULP PDU: at most this many payload bytes (0: no limit) */
    bool last_byte;            /* the last byte of a ULP PDU in a chunk of its own */
    bool ssn_set, ssn_random;  /* first SSN: ssn (default 1) or random */
    uint32_t first_ssn;
    enum completion_policy completion;
    bool announce;             /* a Send announcing its region before anything else */
    bool no_close;             /* discard an invalid chunk instead of closing (W10 is a decision) */
    bool base_set;             /* the region's base offset */
    uint64_t base;
    bool readback;             /* an RDMA Write is echoed as a Send of the bytes read back */
    bool no_rdma_echo;         /* an RDMA Write is placed, never echoed */
    bool mix;                  /* an RDMA echo's chunks interleaved with a Send telling of it */
    bool draft_data_in;        /* iSCSI Data-In with the draft's opcode 0x45, not RFC 3720's 0x25 */
};

/* One --choice argument, NAME[=VALUE][,...], into ch; frag= and rid= set
 * *frag and *rid (what --frag and --handle set). 0, or -1 after a message
 * on stderr. */
int peer_choices_parse(const char *arg, struct peer_choices *ch, size_t *frag, uint32_t *rid);
/* --list-choices: one line each, NAME[=VALUE], what it does, the draft's lines. */
void peer_choices_list(FILE *out);
/* The first SSN a connection sends (random: a new one per call). */
uint32_t peer_choices_first_ssn(const struct peer_choices *ch);

#endif
