/*
 * The node logic of pktway-node (docs/pktway-node.md): what an EEP end node
 * or router does with one received message, as pure functions over bytes
 * (no sockets, no clock), on the wire library's EEP code
 * (vitcp/pktway.h). main.c only moves bytes and prints the result.
 *
 * Decisions (docs/pktway-node.md, decisions P13-P16):
 *   P13 what an L2RH's routing bytes mean to this node (out interface,
 *       optional native next hop) and which records a node consumes;
 *   P14 what a router counts as a detected error (LSbit) and that it
 *       shifts the TAIL on every message it forwards;
 *   P15 ERR messages: when, to whom, what they carry;
 *   P16 Hey-You! answers and the echo.
 */
#ifndef PKTWAY_NODE_H
#define PKTWAY_NODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "faults.h"
#include "vitcp/pktway.h"

#define PN_MAX_IFS 8
#define PN_MAX_PEERS 64
#define PN_MAX_LOGICAL 16
#define PN_MSG_MAX 65536       /* largest message handled (received or built) */
#define PN_OUT_MAX 8           /* messages one received message can cause */
#define PN_ERR_QUOTE 64        /* bytes of the offending message an ERR carries (P15) */
#define PN_UDP_MTU_DEFAULT 65507u
#define PN_ETH_MTU_DEFAULT 1500u

enum pn_if_kind { PN_IF_UDP, PN_IF_ETH };

/* A next hop on one interface, in the carrier's terms. */
struct pn_hop {
    uint8_t ifx;
    uint8_t len;     /* 6 when set: a MAC (Ethernet) or IPv4 address + port (UDP); 0: none */
    uint8_t addr[6];
};

struct pn_peer {
    uint32_t eep;    /* EEP address (any Destination-Type value) */
    bool any;        /* the default route ("default=") */
    struct pn_hop hop;
};

struct pn_config {
    uint32_t addr;   /* own physical address (23 bits, not 0) */
    bool router;     /* forward what is not for this node */
    bool echo;       /* answer every delivered message with a copy to its SA (P16) */
    unsigned n_ifs;
    enum pn_if_kind if_kind[PN_MAX_IFS];
    size_t if_mtu[PN_MAX_IFS];
    struct pn_peer peers[PN_MAX_PEERS];
    unsigned n_peers;
    uint32_t logical[PN_MAX_LOGICAL]; /* subscribed logical addresses (24-bit DT values) */
    unsigned n_logical;
    enum pn_fault fault;
    struct vw_eep_types types;
    /* Allowed choices (--choice, docs/pktway-node.md "Choices"): where the
     * draft leaves the node free; none breaks a rule. */
    bool no_hey_you_answer;   /* a delivered Hey-You! is not answered (lines 683-689) */
    bool drop_leftover_l2rh;  /* a message that stops here with an L2RH left is dropped (412-413, 449-451) */
    unsigned l2rh_if_byte;    /* routing byte naming the out interface (455-456: SAN dependent) */
    uint64_t known_oh;        /* OH types this node knows, bit per type (814: application-specific) */
    size_t err_quote;         /* bytes of the offending message an ERR carries (729-731) */
    bool no_err_report;       /* no ERR is ever sent (729-731 "usually sent", 785-786 "may be returned") */
    bool no_detect;           /* a router detects no error in what it forwards (160-161, 882) */
    bool eth_pad;             /* Ethernet frames padded to the 60-byte minimum (137-138) */
};

/* --choice LIST: comma-separated choices (pn_choice_list names them). 0, or
 * -1 with the reason. */
int pn_choice_parse(struct pn_config *cfg, const char *list, char *err, size_t errlen);
/* One "name draft-lines what" line per choice (--list-choices). */
void pn_choice_list(FILE *out);
/* The choices set, comma-separated ("none"), for the ready line. */
void pn_choice_format(const struct pn_config *cfg, char *buf, size_t cap);

/* Defaults: no interface, router off, the P8 types. */
void pn_config_init(struct pn_config *cfg, uint32_t addr);

/* "10.0.0.1:5998" (UDP) or "02:00:00:00:00:01" (Ethernet) into hop->addr;
 * 0 or -1. pn_hop_format writes the same text (buf >= 24 bytes). */
int pn_hop_parse(const char *text, enum pn_if_kind kind, struct pn_hop *hop);
void pn_hop_format(const struct pn_hop *hop, enum pn_if_kind kind, char *buf, size_t cap);
/* An EEP address: a number (decimal or 0x hex) up to 24 bits, or
 * "hey-you" / "broadcast". 0 or -1. */
int pn_addr_parse(const char *text, uint32_t *addr);
/* "EEP=HOP[@IF]" or "default=HOP[@IF]" after the interfaces are known. */
int pn_peer_parse(struct pn_config *cfg, const char *text, char *err, size_t errlen);
/* The next hop for a destination: an exact peer, else the default one,
 * restricted to interface only_if unless it is -1. false when none. */
bool pn_route(const struct pn_config *cfg, uint32_t dt, int only_if, struct pn_hop *hop);

/* ------------------------------------------------------ a received message */

enum pn_verdict {
    PN_DELIVERED, /* taken by this node (answers may follow) */
    PN_DROPPED,   /* neither delivered nor forwarded */
    PN_FORWARDED, /* sent on (out[] holds the copies) */
    PN_REFUSED,   /* a router would forward it but it is over the out MTU */
};
const char *pn_verdict_name(enum pn_verdict v);

struct pn_out {
    struct pn_hop hop;
    const char *kind;       /* "forward", "answer", "echo", "err" */
    const uint8_t *buf;     /* into the result's arena */
    size_t len;
};

struct pn_result {
    enum pn_verdict verdict;
    const char *reason;     /* a requirement ID or a word ("not-mine", "unreachable"); "" when delivered / forwarded */
    bool decoded;
    struct vw_eep_msg msg;  /* when decoded: pointers into the received buffer */
    unsigned records;       /* leading L2RHs and symbols received */
    unsigned consumed;      /* of which this node consumed */
    bool error_seen;        /* the decoder found an error (P14) */
    uint64_t ei_out;        /* forwarded TAIL */
    uint16_t err_te;        /* the TE of the ERR sent, 0 when none */
    unsigned n_out;
    struct pn_out out[PN_OUT_MAX];
    size_t arena_used;
    uint8_t arena[2 * PN_MSG_MAX + 4 * 256];
};

/*
 * Handle one message that arrived on interface in_if from the carrier
 * address from (len 0 when unknown). Never fails: every outcome is a
 * verdict with its reason. res is large (allocate it once).
 */
void pn_handle(const struct pn_config *cfg, unsigned in_if, const struct pn_hop *from, const uint8_t *buf,
               size_t len, struct pn_result *res);

/* ------------------------------------------------------ messages to send */

#define PN_SPEC_ROUTES 8
#define PN_SPEC_OH 8
struct pn_spec_route {
    enum vw_eep_route_kind kind;
    uint32_t symbol_type;
    uint8_t data[255];
    size_t len;
};
struct pn_spec_oh {
    bool mandatory;
    uint8_t type;
    uint8_t data[255];
    size_t len;
};
struct pn_spec {
    uint32_t dt, sa;
    bool have_dt, have_sa;
    uint16_t pt, te;
    uint8_t v, p, e, rz;
    uint64_t ei;
    struct pn_spec_route routes[PN_SPEC_ROUTES];
    size_t n_routes;
    struct pn_spec_oh oh[PN_SPEC_OH];
    size_t n_oh;
    uint8_t ot[256];
    size_t ot_len;
    uint8_t data[PN_MSG_MAX];
    size_t data_len;
    int ifx;                /* -1: by the peer table */
    bool have_to;
    char to[64];            /* the next hop's text, parsed when sending */
    unsigned long count;
    size_t cut;             /* bytes left off the end (a message cut short) */
};

/* Parse a send spec: comma-separated key=value (docs/pktway-node.md). 0, or
 * -1 with the reason in err. */
int pn_spec_parse(const char *text, struct pn_spec *spec, char *err, size_t errlen);

/*
 * Encode a message this node originates (with the origination faults),
 * choose its next hop. Returns the length (0 with err set when it cannot
 * be built or has no next hop; a message over the interface's MTU is
 * refused: EEP-1B-PATH-MTU unless the fault ignore-mtu).
 */
size_t pn_spec_build(const struct pn_config *cfg, const struct pn_spec *spec, uint8_t *buf, size_t cap,
                     struct pn_hop *hop, char *err, size_t errlen);

/* The bytes of a len-byte message that go on the wire: len, or 4 fewer
 * with the fault odd-length (a message that is not whole words on either
 * carrier, P11). */
size_t pn_send_len(const struct pn_config *cfg, size_t len);

#endif
