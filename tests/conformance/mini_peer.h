/*
 * A tiny VI/TCP responder for the conformance tests: accepts, refuses and
 * echoes as spec-decisions V19/V22/A9 say, built only from the wire
 * library, with one switchable fault per rule so the tests can prove that
 * each case fails exactly the rule the fault breaks. (The full reference
 * target is vipl-peer; this keeps the engine's tests independent of it.)
 * Like vipl-peer it announces an RDMA region in its first Send (address,
 * handle, length, big-endian), serves RDMA Writes and Reads into it, and at
 * Reliable Reception answers errors with a Message ACK carrying the code.
 */
#ifndef MINI_PEER_H
#define MINI_PEER_H

#include <pthread.h>
#include <stdint.h>

enum mini_fault {
    MINI_CORRECT,
    MINI_FAULT_DATA_OFFSET,      /* echo starts at Data Offset 1: VITCP-3.2-DATA-OFFSET-FIRST */
    MINI_FAULT_NO_CRC,           /* echo without the negotiated trailer: VITCP-3.6-CRC-ONLY-IF-NEGOTIATED */
    MINI_FAULT_MTU_GREATER,      /* accept with an MTU above the request: VITCP-3.3-MTU-LESSER */
    MINI_FAULT_KEEP_OPEN_BAD_CRC,/* ignore a bad CRC at RD: VITCP-3.6-BAD-CRC-CLOSE-RELIABLE */
    MINI_FAULT_ACCEPT_MTU_ZERO,  /* accept MTU 0: VITCP-3.3-MTU-NONZERO */
    MINI_FAULT_NO_ERR_CODE,      /* RR: a protection error closes without the MPE ACK: VITCP-3.2-ERR-VALID-RR */
    MINI_FAULT_NO_UTE,           /* RR: a bad CRC closes without the UTE ACK: VITCP-3.6-BAD-CRC-ACK-UTE */
    MINI_FAULT_READ_OVERRUN,     /* serve reads past its window: VITCP-2.2.2.2.6-READ-WINDOW-EXCESS (A13, advisory) */
    MINI_FAULT_STALE_RX_POSTED,  /* never raise Rx Descriptors Posted: VITCP-3.3-DFC-ADVERTISE */
    MINI_FAULT_URGENT,           /* mark echo bytes urgent unasked: VITCP-3.7-URGENT-ONLY-IF-OFFERED */
    MINI_FAULT_READ_WRONG_MSG,   /* answer a read with the next message number: VITCP-3.2-RESP-MSG-NUM */
    MINI_FAULT_IGNORE_DFC,       /* set DFC in the accept, send past the tester's credit: VITCP-3.2-DFC-DELAY */
};

struct mini_peer {
    int listen_fd;
    uint16_t port;
    enum mini_fault fault;
    volatile int stop;
    pthread_t thread;
};

/* Listen on 127.0.0.1, an ephemeral port; serve connections one at a time. */
int mini_peer_start(struct mini_peer *p, enum mini_fault fault);
void mini_peer_stop(struct mini_peer *p);

#endif
