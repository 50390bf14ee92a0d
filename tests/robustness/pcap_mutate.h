/*
 * Deterministic mutations of capture files for the robustness tests: given
 * a valid little-endian pcap (as libpcap writes on x86) or a pcapng and a
 * PRNG, produce one damaged copy and a one-line description of the damage.
 */
#ifndef ROBUST_PCAP_MUTATE_H
#define ROBUST_PCAP_MUTATE_H

#include <stddef.h>
#include <stdint.h>
#include "robust_common.h"

/* Extra room a mutation may add to the input. */
#define RB_MUTATE_SLACK 8192u

enum rb_pcap_mut {
    RB_MUT_TRUNCATE,      /* cut the file anywhere */
    RB_MUT_FLIP,          /* 1..8 random bytes anywhere */
    RB_MUT_HDR_FLIP,      /* random bytes of the global or a record header */
    RB_MUT_SNAPLEN,       /* snaplen 0, 1, 14, huge */
    RB_MUT_LINKTYPE,      /* another or a bogus link type */
    RB_MUT_REC_LEN,       /* caplen/len of one record: huge, zero, caplen > len */
    RB_MUT_IP_TCP_FIELD,  /* IPv4 IHL/total length, IPv6 payload length/next header, TCP data offset/flags/seq */
    RB_MUT_DROP,          /* drop a record (a capture gap) */
    RB_MUT_DUP_CHANGED,   /* repeat a record with one payload byte changed (differing retransmission) */
    RB_MUT_SWAP,          /* swap two records (out of order) */
    RB_MUT_MAGIC,         /* big-endian, nanosecond or bogus magic */
    RB_MUT_GARBAGE_REC,   /* insert a record of random bytes and random size */
    RB_MUT_SEQ_WRAP,      /* shift one direction's sequence numbers to just below 2^32 */
    RB_MUT_COUNT
};

const char *rb_pcap_mut_name(enum rb_pcap_mut m);

/* Mutate in (a pcap or pcapng file) into out (cap >= len + RB_MUTATE_SLACK).
 * kind < RB_MUT_COUNT, or RB_MUT_COUNT for a random kind. Returns the new
 * length and describes the mutation in desc. pcapng inputs get the
 * file-level kinds (truncate, flips, block lengths) only. */
size_t rb_pcap_mutate(struct rb_rng *r, unsigned kind, const uint8_t *in, size_t len, uint8_t *out,
                      size_t cap, char *desc, size_t desccap);

/* A tiny pcapng (SHB, IDB Ethernet, three EPBs of one TCP conversation, the
 * middle one last) in a malloc'd buffer. */
uint8_t *rb_build_pcapng(size_t *len);

#endif
