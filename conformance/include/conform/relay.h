/*
 * The packet relay: a small test network for cases that a byte stream
 * cannot express: loss, retransmission, duplicates, and the TCP header of
 * every segment (the urgent pointer, 3.7).
 *
 * The tester's connections leave from a network namespace the relay
 * creates. A TUN device in that namespace and a TUN device on the target's
 * host are joined by the relay itself, a thread that forwards every IP
 * packet between them. The relay sees the real packets of both sides: it
 * keeps them (with their times, for the run's capture and for the lint
 * rules) and applies the case's packet actions: drop a side's Nth data
 * segment, so that its TCP retransmits it, or send it twice.
 *
 * This replaces 'tc netem' (not every kernel has sch_netem) and is exact:
 * a case names which segment is lost, not a probability. The namespace and
 * both devices exist only while the relay holds their descriptors, so
 * nothing is left behind even when the process is killed. Needs root
 * (CAP_NET_ADMIN, CAP_SYS_ADMIN) and /dev/net/tun; the target must run on
 * this host and listen on all its addresses (it is reached at the relay's
 * address, 198.18.0.0/15, RFC 2544's benchmark range).
 */
#ifndef CONFORM_RELAY_H
#define CONFORM_RELAY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct cf_relay;

/* The two sides of a relayed connection. */
enum cf_relay_side { CF_RELAY_TESTER, CF_RELAY_TARGET };

enum cf_relay_verb { CF_RELAY_DROP, CF_RELAY_DUPLICATE };

/* "drop target 2-3": the target's 2nd and 3rd data segments (TCP segments
 * with payload, first transmissions only, counted from the connection's
 * start) are not forwarded. */
struct cf_relay_action {
    enum cf_relay_verb verb;
    enum cf_relay_side side;
    unsigned first, last; /* 1-based, inclusive */
};

/* What an impairment profile (below) did to a packet. */
enum cf_impair_mark {
    CF_IMPAIR_LOST = 1,       /* not forwarded: its TCP repairs it */
    CF_IMPAIR_COPY = 2,       /* a second copy of the packet before */
    CF_IMPAIR_DELAYED = 4,    /* held back delay_us */
    CF_IMPAIR_REORDERED = 8,  /* held back so that later packets overtake it */
    CF_IMPAIR_PIECE = 16,     /* one piece (piece of pieces) of a data segment cut smaller */
};

/* One packet the relay saw, whole IPv4 packet. */
struct cf_relay_packet {
    uint64_t usec;              /* CLOCK_REALTIME, microseconds */
    enum cf_relay_side from;
    bool dropped, duplicated;   /* what an action did to it */
    uint8_t impaired;           /* cf_impair_mark bits: what the run's impairment did */
    uint16_t piece, pieces;     /* CF_IMPAIR_PIECE: 1-based piece of pieces */
    uint32_t delay_us;          /* CF_IMPAIR_DELAYED / REORDERED: how long it was held */
    uint64_t seed;              /* the impairment's seed for this recording (0: none) */
    size_t len;
    uint8_t *data;
};

/* A network impairment profile (issue 33, C61) the relay applies to every
 * TCP packet of every recording, after the case's own packet actions:
 * loss, duplication, delay (a jitter reorders), holding a packet back so
 * later ones overtake it, and cutting data segments into smaller ones.
 * SYN and RST segments and segments with an urgent pointer pass whole and
 * in time (a lost SYN costs a second's retransmission, and URG has its
 * own cases). Decisions come from a PRNG per side seeded with the
 * profile's seed and the case's id: the Nth packet of a side in a case
 * meets the same fate in every run. */
struct cf_impair {
    bool on;
    unsigned loss_ppm, dup_ppm, reorder_ppm;   /* per million packets */
    unsigned delay_min_us, delay_max_us;
    unsigned reorder_hold_us;                  /* how long a reordered packet is held */
    unsigned reseg_min, reseg_max;             /* piece sizes in bytes (0: no cutting) */
    uint64_t seed;
    char text[200];                            /* the profile in full, for reports */
};
/* "lossy", "tiny-segments,seed=7", "loss=2%,reorder=5%,dup=1%,delay=1-20ms,
 * resegment=1-100,seed=N" (core/impair.c). 0, or -1 with the reason. */
int cf_impair_parse(const char *spec, struct cf_impair *out, char *why, size_t whylen);
/* The shipped profiles, NULL-terminated pairs of name and meaning. */
extern const char *const cf_impair_profiles[][3];
/* The seed of one case's recording: the profile's and the case's id. */
uint64_t cf_impair_case_seed(const struct cf_impair *imp, const char *case_id);
/* What an impairment did, counted: a recording's packets, or a datagram
 * case's (core/runner.c). */
struct cf_impair_counts {
    unsigned lost, copied, reordered, delayed, pieces;
};
/* "3 lost, 1 copied, 2 reordered, 5 delayed, 12 pieces of cut segments"
 * ("" when nothing was done). */
void cf_impair_counts_text(const struct cf_impair_counts *k, char *out, size_t n);
/* The same of a recording's packets. */
void cf_impair_summary(const struct cf_relay_packet *p, size_t count, char *out, size_t n);

/* The impairment's PRNG (splitmix64): true with ppm per million; a number
 * in [lo, hi]. */
bool cf_impair_chance(uint64_t *state, unsigned ppm);
unsigned cf_impair_between(uint64_t *state, unsigned lo, unsigned hi);

/* The impairment for the recordings from now on (NULL or !on: none),
 * with this recording's seed. */
void cf_relay_impair(struct cf_relay *r, const struct cf_impair *imp, uint64_t seed);

/* Create the namespace, the devices and the forwarding thread. NULL with
 * the reason in why (not root, no /dev/net/tun...). */
struct cf_relay *cf_relay_open(char *why, size_t whylen);
/* Stop the thread; the namespace and devices go with the descriptors. */
void cf_relay_close(struct cf_relay *r);

/* The target's address as the tester reaches it ("198.18.x.y"), and the
 * tester's own address (where an implementation connects to it). */
const char *cf_relay_target_addr(const struct cf_relay *r);
const char *cf_relay_tester_addr(const struct cf_relay *r);
/* socket(2) in the tester's namespace. -1 with errno on failure. */
int cf_relay_socket(struct cf_relay *r, int domain, int type, int protocol);

/* Start a new recording with these actions (copied; at most 8): earlier
 * packets are forgotten and the segment counts start again. */
int cf_relay_begin(struct cf_relay *r, const struct cf_relay_action *actions, unsigned n);
/* Packets seen since cf_relay_begin. */
size_t cf_relay_count(struct cf_relay *r);
/* Take the recording (the caller frees it with cf_relay_packets_free) and
 * how many times each action took effect (done[i] for actions[i]). */
struct cf_relay_packet *cf_relay_take(struct cf_relay *r, size_t *count, unsigned *done, unsigned ndone);
void cf_relay_packets_free(struct cf_relay_packet *p, size_t count);
/* The TCP payload's length of a recorded packet (0: none, or not a whole
 * IPv4 TCP segment); where it starts in *payload (may be NULL). */
size_t cf_relay_payload(const struct cf_relay_packet *p, const uint8_t **payload);

/* "drop target 2", "duplicate tester 1-3". 0, or -1 with the reason. */
int cf_relay_action_parse(const char *verb, const char *side, const char *range,
                          struct cf_relay_action *out, char *why, size_t whylen);
/* "drop target 2-3" (for messages and the capture's comments). */
void cf_relay_action_text(const struct cf_relay_action *a, char *out, size_t n);

/* A recording as capture frames (relay_record.c): each packet behind an
 * Ethernet header, at its own time, with a pcapng comment on the packets an
 * action dropped or duplicated. 0, or -1 if writing failed. */
struct vn_pcap_writer;
int cf_relay_write(struct vn_pcap_writer *w, const struct cf_relay_packet *p, size_t count);
/* Judging a recording is the protocol module's (protocol.h
 * judge_recording, run by the generic runner after the case; e.g. its lint
 * module's rules over the recording, cf_lint_frames). */

#endif
