/*
 * vitcp-trafgen as a library: named scenarios that produce valid VI/TCP,
 * IFT, PacketWay EEP and WARP traffic, and named mutations that break one
 * rule each, named by its catalog requirement ID. Every PDU is built by the
 * wire library's encoders; the generator only chooses field values.
 *
 * Reproducible: the output depends only on (scenario, parameters, seed,
 * mutation, target). Mutated cases are numbered per scenario (1, 2, ...)
 * so that one case can be regenerated alone (--case N).
 */
#ifndef VITCP_TRAFGEN_H
#define VITCP_TRAFGEN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "vitcp/catalog.h"

enum tg_proto { TG_VITCP, TG_IFT, TG_EEP, TG_WARP };

struct tg_script;

struct tg_params {
    uint64_t seed;
    size_t msg_size;     /* payload bytes of a data message (default 3000) */
    size_t seg_payload;  /* max payload per VI segment / IFT frame / WARP chunk (default 1024) */
    unsigned count;      /* repetitions of the data phase (default 1) */
    size_t tcp_segment;  /* 0: each write split at the MSS; N: the stream cut into N-byte segments */
    bool coalesce;       /* consecutive PDUs of one side go out in one write */
    bool ipv6;
    uint16_t port;       /* 0: the protocol's default port */
    uint16_t client_port; /* -w/-i: the client's TCP port (0: 40000) */
    bool eep_udp;        /* EEP over UDP 5998 instead of Ethertype 0x88B5 */
    uint32_t pause_us;   /* live TCP: pause between writes */
    uint32_t send_timeout_ms; /* --connect: give up connecting or writing after this (0: default) */
    uint32_t rate_pdus;  /* live outputs: at most this many PDUs per second (0: no limit) */
    uint32_t mutate_ppm; /* TG_TARGET_RATE: chance per eligible PDU, parts per million */
    uint32_t flip_ppm;   /* --flip-rate: chance per PDU of one flipped bit, parts per million */
    bool progress;       /* counts on stderr once a second */
    bool tcp_timestamps; /* -w/-i: RFC 7323 timestamps on every TCP segment */
    bool ift_flags_set;  /* IFT: indication flags from the command line ... */
    uint32_t ift_flags;  /* ... (VW_IFT_FLAG_*, PH excluded): R, HC/PC (frame CRCs), IH, IP, SP, SM, RM */
    const struct tg_script *script; /* scenario "vitcp-script": steps from a file */
};

/* Load a VI/TCP scenario file (docs/trafgen.md): NULL with "file:line: why"
 * in err on any error. */
struct tg_script *tg_script_load(const char *path, char *err, size_t errlen);
void tg_script_free(struct tg_script *s);

void tg_params_default(struct tg_params *p);

struct tg_gen;

struct tg_scenario {
    const char *name;
    enum tg_proto proto;
    const char *what;
    void (*run)(struct tg_gen *g);
};

/* A mutation breaks the rule req (its name is the catalog ID) in one PDU. */
struct tg_pdu;
struct tg_rng;
struct tg_mutation {
    enum vw_req req;
    enum tg_proto proto;
    const char *what;
    bool (*eligible)(const struct tg_pdu *pdu);
    void (*apply)(struct tg_pdu *pdu, struct tg_rng *rng);
};

const struct tg_scenario *tg_scenarios(size_t *count);
const struct tg_scenario *tg_find_scenario(const char *name);
const struct tg_mutation *tg_mutations(size_t *count);
/* By catalog ID ("VITCP-3.6-CRC-VALID"), case-insensitive. */
const struct tg_mutation *tg_find_mutation(const char *id);
const char *tg_mutation_name(const struct tg_mutation *m);
const char *tg_proto_name(enum tg_proto p);

/* Where the traffic goes. */
struct tg_output;
/* A pcap file written through the netio writer. */
struct tg_output *tg_output_pcap(const char *path, char *err, size_t errlen);
/* pcap or pcapng (pcapng: section_comment in the Section Header Block, and
 * each mutated PDU's first frame gets a comment naming the rule). */
struct tg_output *tg_output_capture(const char *path, bool pcapng, const char *section_comment,
                                    char *err, size_t errlen);
/* Live: the client side's bytes over a real TCP connection to host:port;
 * the target's TCP stack does the rest. Datagram scenarios are refused. */
/* The connection and every write give up after timeout_ms (0: the default,
 * TG_SEND_TIMEOUT_MS) with an error naming what was waited for, so a target
 * that never answers or never reads cannot hang the generator. */
#define TG_SEND_TIMEOUT_MS 10000u
struct tg_output *tg_output_connect(const char *host_port, uint32_t timeout_ms, char *err, size_t errlen);
/* Live: whole Ethernet frames injected with libnet in link-layer mode
 * (needs CAP_NET_RAW). */
struct tg_output *tg_output_libnet(const char *iface, char *err, size_t errlen);
/* Discards everything (counting cases). */
struct tg_output *tg_output_null(void);
/* Close; returns 0, or -1 if any write failed (message in err). */
int tg_output_close(struct tg_output *out, char *err, size_t errlen);

#define TG_TARGET_ALL (-1L)
#define TG_TARGET_SEEDED (-2L)
#define TG_TARGET_RATE (-3L) /* each eligible PDU with probability mutate_ppm */

struct tg_result {
    unsigned pdus;          /* PDUs generated */
    unsigned eligible;      /* PDUs the mutation could apply to */
    unsigned mutated;       /* PDUs it was applied to */
    long first_mutated_pdu; /* 0-based index of the first mutated PDU, -1 if none */
    long chosen_target;     /* TG_TARGET_SEEDED: the eligible PDU the seed chose */
    unsigned flipped;       /* PDUs with a flipped bit (--flip-rate) */
    long first_flipped_pdu; /* 0-based index of the first, -1 if none */
    uint64_t bytes;         /* PDU bytes */
    char error[256];        /* when tg_run returns -1 */
};

/* Generate a scenario. mut NULL: valid traffic. target: which eligible PDU
 * (0-based) to mutate, TG_TARGET_ALL, TG_TARGET_SEEDED (one chosen from the
 * seed) or TG_TARGET_RATE (each with probability p->mutate_ppm, from the seed). Returns 0, or -1 (result->error says why; a mutation with no
 * eligible PDU in this scenario is an error). */
int tg_run(const struct tg_scenario *sc, const struct tg_mutation *mut, long target,
           const struct tg_params *p, struct tg_output *out, struct tg_result *result);

/* Cases of a scenario: every (mutation, eligible PDU) pair, numbered from 1
 * in mutation-table order. tg_case_count returns how many; tg_case_get fills
 * the pair for case n (0 if n is out of range, 1 otherwise). */
size_t tg_case_count(const struct tg_scenario *sc, const struct tg_params *p);
int tg_case_get(const struct tg_scenario *sc, const struct tg_params *p, size_t n,
                const struct tg_mutation **mut, long *target);

/* The command line (vitcp-trafgen); returns the exit status:
 * 0 done, 1 failed while running (I/O, network), 2 bad command line. */
int tg_main(int argc, char **argv);

#endif
