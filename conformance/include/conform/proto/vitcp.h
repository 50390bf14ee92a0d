/*
 * The VI/TCP protocol module (conformance/src/proto/vitcp/): its case
 * vocabulary (module.c; segment types are the wire library's, fields
 * below), its session on the core's generic runner (session.c: framing,
 * reassembly, the RDMA region, relative message numbers; send.c: the
 * encoder, capture replay, receive descriptors, the NOP at Reliable
 * Reception, $level and the survival probe) and its capture cases
 * (vitcp_capcase.h). The only part of vitcp-conform that speaks VI/TCP;
 * the core reaches it through cf_proto_vitcp.
 *
 * Its vocabulary in the case language (conform/case.h):
 *
 *   send   ConnectRequest attrs=$level|RWE|RRE mtu=65536 window=4 msg=1000 opts=crc
 *   expect ConnectAccept  attrs&7=RD mtu<=65536 ack=+0 crc=1 [VITCP-3.3-MTU-LESSER]
 *   send   Send msg=+1 payload=100
 *   expect Send msg=+1 payload=100 data=echo
 *
 *   msg=+N / ack=+N       relative to the sender's initial message number
 *                         (its CE segment) / the other side's; in an expected
 *                         RdmaReadResponse msg=+N counts from the tester's
 *                         (the response carries the request's number)
 *   $addr+N $handle+1 $len-8   the target's RDMA region (its announcement,
 *                         the vipl-peer convention, or --region; 'needs region')
 *   $window+1 $rx+1       the target's RDMA Read Window and Rx Descriptors
 *                         Posted in its CE segment
 *   attrs=$level|RWE|RRE level=$level
 *                         the reliability level the target offers (the runner
 *                         asks for RD, then RR, then U once per run)
 *   send args             calling=, called= (discriminators), opts=crc,urgent,
 *                         unknown,eol,badlen, crc=none|good|bad|auto, noeom
 *   expect A|B            e.g. ConnectReject|ConnectNoMatch (V19)
 *   segments              (directive) compare the target's segments one by
 *                         one; without it, segments of one message (Send,
 *                         RdmaWrite, RdmaReadResponse) are reassembled and an
 *                         expect sees the whole message (offset 0, EOM, every
 *                         byte)
 *   level-optional        (directive) the request's reliability level is one
 *                         a provider may not offer: a ConnectReject instead of
 *                         the expected ConnectAccept makes the case not
 *                         applicable
 * An expect skips the target's NOPs unless it expects one (or any type).
 */
#ifndef CONFORM_PROTO_VITCP_H
#define CONFORM_PROTO_VITCP_H

#include "conform/case.h"
#include "conform/protocol.h"
#include "vitcp/vitcp.h"

extern const struct conform_protocol cf_proto_vitcp;
extern const struct cf_lint_module cf_lint_vitcp; /* its lint module (proto/vitcp/lint.c) */

/* Fields an expect (or a send) can name, compared in this order:
 * framing, header fields, CE/RDMA fields, options, payload, trailer. */
enum cf_field {
    CF_F_VERSION, CF_F_EOM, CF_F_IDV, CF_F_TXERR, CF_F_SEGLEN, CF_F_OFFSET, CF_F_IMM,
    CF_F_MSG, CF_F_ACK, CF_F_RXPOSTED, CF_F_ERR,
    CF_F_ATTRS, CF_F_LEVEL, CF_F_MTU, CF_F_WINDOW, CF_F_CALLING_LEN, CF_F_CALLED_LEN,
    CF_F_RDMA_ADDR, CF_F_RDMA_HANDLE, CF_F_RDMA_LEN,
    CF_F_OPT_CRC, CF_F_OPT_URGENT, CF_F_OPT_UNKNOWN,
    CF_F_PAYLOAD, CF_F_CRC,
    CF_F_COUNT
};
_Static_assert(CF_F_COUNT <= CF_MAX_FIELDS, "VI/TCP fields fit a step");

/* Run-time variables (st->var[], cf_match.var): the target's RDMA region,
 * its CE segment's RDMA Read Window and Rx Descriptors Posted, its level. */
enum cf_vitcp_var { CF_VAR_ADDR = 1, CF_VAR_HANDLE, CF_VAR_LEN, CF_VAR_WINDOW, CF_VAR_RX, CF_VAR_LEVEL };

/* c->flags: the module's case directives. */
enum {
    CF_VITCP_CASE_SEGMENTS = 1u,       /* 'segments': compare the target's segments one by one
                                          (segmentation is the rule under test); else its
                                          messages, reassembled */
    CF_VITCP_CASE_LEVEL_OPTIONAL = 2u, /* 'level-optional': a ConnectReject answering the
                                          request's level: not applicable */
    CF_VITCP_CASE_RUN_DISC = 4u,       /* capture meta 'discriminator run': the run's
                                          Called Discriminator */
};

enum { CF_VITCP_STR_CALLING = 0, CF_VITCP_STR_CALLED = 1 }; /* st->str[]: calling=, called= */

/* st->opts: the CE options a send writes (opts=crc,urgent,...). */
enum {
    CF_VITCP_OPT_CRC = 1u,
    CF_VITCP_OPT_URGENT = 2u,
    CF_VITCP_OPT_UNKNOWN = 4u,
    CF_VITCP_OPT_EOL = 8u,
    CF_VITCP_OPT_BAD_LEN = 16u,
};

/* What a replayed ConnectAccept derives from the live request, because the
 * captured accept derived it from the captured request (st->replay_answer). */
enum {
    CF_ANSWER_DISC = 1u,  /* both discriminators copied (V9) */
    CF_ANSWER_LEVEL = 2u, /* the same reliability level */
    CF_ANSWER_MTU = 4u,   /* not above the request's MTU */
    CF_ANSWER_CRC = 8u,   /* the CRC option only if the request offered it (3.6) */
};

/* The module's settings and per-run state in the engine (cf_engine_state). */
struct cf_vitcp_settings {
    char discriminator[65];  /* Called Discriminator when a case names none (--discriminator) */
    /* The target's RDMA region may be announced by the target (vipl-peer
     * convention: its first Send, 16 bytes: address, handle, length; C8)
     * unless announce is off (--no-announce). */
    bool announce;
    /* $level: the reliability level the target offers (VIA 2.5 lets a
     * provider offer fewer than three), found at its first use by asking
     * for Reliable Delivery, then Reliable Reception, then Unreliable (0:
     * not yet asked) of the target level_target names (HOST:PORT). */
    uint16_t level_bits;
    char level_target[300];
};
_Static_assert(sizeof(struct cf_vitcp_settings) <= CF_PROTO_STATE_MAX, "VI/TCP settings fit the engine");
struct cf_vitcp_settings *cf_vitcp_settings(struct cf_engine *e);

const char *cf_field_name(enum cf_field f);
/* The field of a name ("msg", "opt.crc"); -1 if unknown. */
int cf_field_by_name(const char *name);

#endif
