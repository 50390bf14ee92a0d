/* Test helper: decode a capture with the netio reader and the wire
 * library (VI/TCP session, IFT connection, WARP framers, EEP decoder),
 * collecting every finding by requirement. */
#ifndef VITCP_TEST_DECODE_H
#define VITCP_TEST_DECODE_H

#include <stdbool.h>
#include "vitcp/catalog.h"
#include "vitcp/findings.h"
#include "vitcp/trafgen.h"

#define DECODED_MAX 512

struct decoded {
    unsigned count;
    enum vw_req req[DECODED_MAX];
    enum vw_severity sev[DECODED_MAX];
    enum vw_req fatal;      /* first framing error, VW_REQ_NONE if none */
    unsigned pdus;          /* PDUs decoded */
    unsigned retx_differing;
    unsigned gaps;
    unsigned long long tcp_bytes[2];
};

/* 0 if the file could be read. */
int decode_capture(const char *path, enum tg_proto proto, struct decoded *d);
bool decoded_has(const struct decoded *d, enum vw_req req);
/* Findings of warning or error severity other than the allowed ones. */
unsigned decoded_others(const struct decoded *d, const enum vw_req *allowed, unsigned n_allowed);
void decoded_print(const struct decoded *d);

#endif
