/*
 * Offline lint: reads a pcap/pcapng capture (netio's reader, with TCP
 * reassembly), finds the VI/TCP, IFT and WARP connections (by port: 5995,
 * 5996, 5997 or the configured ones; else by content: an IFT adaption
 * indication, a plausible VI/TCP header) and the PacketWay EEP messages
 * (Ethertype 0x88B5, UDP port 5998), and runs the wire library's checks on
 * every PDU: the VI/TCP session (as the active engine), the IFT indication
 * negotiation and frames as sent, the WARP framer's sequencing, the EEP
 * decoder for the message's carrier. Each finding names the frame and the
 * requirement ID.
 */
#ifndef CONFORM_LINT_H
#define CONFORM_LINT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "vitcp/findings.h"

enum cf_lint_proto { CF_LINT_VITCP, CF_LINT_IFT, CF_LINT_WARP, CF_LINT_EEP };
/* "VI/TCP", "IFT", "WARP", "EEP". */
const char *cf_lint_proto_name(enum cf_lint_proto p);

struct cf_lint_issue {
    uint64_t frame;
    enum cf_lint_proto proto;
    unsigned conn;           /* TCP connection number (0 for EEP messages) */
    int dir;                 /* 0: the side that sent the connection's first bytes; -1: none */
    enum vw_req req;         /* VW_REQ_NONE for a notice about the capture itself */
    enum vw_severity severity;
    char detail[VW_FINDING_DETAIL_MAX + 40];
};

struct cf_lint_result {
    struct cf_lint_issue *issues;
    size_t count, cap;
    uint64_t frames, connections, vitcp_connections, segments, bytes;
    uint64_t ift_connections, ift_pdus, warp_connections, warp_chunks, eep_messages;
    unsigned errors, warnings, notes;
    double seconds;
};

struct cf_lint_options {
    uint16_t vitcp_port;     /* default VW_VITCP_DEFAULT_PORT (V1) */
    uint16_t ift_port;       /* default VW_IFT_DEFAULT_PORT (I1) */
    uint16_t warp_port;      /* default VW_WARP_DEFAULT_PORT (W1) */
    uint16_t eep_udp_port;   /* default VW_EEP_UDP_PORT (P1); Ethertype 0x88B5 always */
    const char *eep_routers; /* router addresses (MAC, IPv4, IPv6; commas), NULL: pair by content (P31) */
};

void cf_lint_options_init(struct cf_lint_options *o);
/* Lint a capture. Returns 0 (the result says what was found), or -1 when the
 * file cannot be read at all (reason in err; result holds what was read). */
int cf_lint_file(const char *path, const struct cf_lint_options *o, struct cf_lint_result *res,
                 char *err, size_t errlen);
/* The same over frames already in memory (a live recording), of a link
 * type netio's reader takes (101, LINKTYPE_RAW: bare IP packets); frame
 * numbers count from 1 in the array's order. */
struct cf_lint_frame {
    uint64_t ts_usec;
    const uint8_t *data;
    size_t len;
};
int cf_lint_frames(int linktype, const struct cf_lint_frame *frames, size_t count,
                   const struct cf_lint_options *o, struct cf_lint_result *res, char *err, size_t errlen);
void cf_lint_result_free(struct cf_lint_result *res);

/* Number of issues of at least severity sev naming req. */
size_t cf_lint_count(const struct cf_lint_result *res, enum vw_req req, enum vw_severity sev);

void cf_lint_write_text(FILE *out, const char *path, const struct cf_lint_result *res);
void cf_lint_write_json(FILE *out, const char *path, const struct cf_lint_result *res);

/* Is list a valid --eep-router list (P31: MAC, IPv4 or IPv6 addresses,
 * commas between several)? false with the first bad one in bad. */
bool cf_lint_routers_valid(const char *list, char *bad, size_t badlen);

#endif
