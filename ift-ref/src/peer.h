/*
 * ift-peer: options, the registered region, and one IFT connection of
 * either role (conn.c): the adaption indications (A sends phase 0, B answers
 * phase 1), the I8 reactions, frames checked by the wire library before any
 * byte is placed, and a minimal RDMAP (RFC 5040) over RFC 5041 DDP segments:
 * Send (echoed by a target), RDMA Write into the region, RDMA Read Request
 * answered with a Read Response. main.c runs the target (B), client.c the
 * traffic source (A).
 */
#ifndef IFT_PEER_PEER_H
#define IFT_PEER_PEER_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "faults.h"
#include "vitcp/ift_stream.h"

#define PEER_OPS_MAX 256
#define PEER_DEFAULT_REGION_ADDR 0x10000000ull
#define PEER_DEFAULT_REGION_SIZE 65536ul
#define PEER_DEFAULT_FRAG 1024u
#define PEER_FRAG_MAX 65535u
#define PEER_DEFAULT_MAX_MSG (1ul << 20)
#define PEER_DEFAULT_FLAGS (VW_IFT_FLAG_R | VW_IFT_FLAG_HC | VW_IFT_FLAG_PC)
#define PEER_FIXED_VTAG 0x5644u /* fault fixed-vtag */

/* What this end requires of the peer's indication (--require). */
#define REQ_HC 0x01u         /* the peer must send header CRCs */
#define REQ_PC 0x02u
#define REQ_NO_HC 0x04u      /* the peer must not */
#define REQ_NO_PC 0x08u
#define REQ_CHECKED_HC 0x10u /* the peer must check ours: no IH */
#define REQ_CHECKED_PC 0x20u /* no IP */

/* Allowed choices (--choice, docs/ift-peer.md "Allowed choices"): what the
 * draft leaves to an implementation, never a fault. */
#define CH_GREET 0x001u          /* B: a Send of its own right after phase 1 (lines 129-132) */
#define CH_PIPELINE 0x002u       /* A: a Send of its own and the first operation in one TCP write */
#define CH_VTAG_PER_PROCESS 0x004u /* one random VTag per process (lines 189-191) */
#define CH_REFUSE_NEWER 0x008u   /* close on a Version above 1 (lines 115-116: "need not") */
#define CH_NEWER_VERSION 0x010u  /* announce Version 2, BC Version 1 (lines 109-112) */
#define CH_CLOSE_FIN 0x020u      /* close in error with FIN, not RST (lines 137-138, 141-143) */
#define CH_ABORT_LATE 0x040u     /* B: answer phase 1, then abort an unacceptable CRC choice */
#define CH_UPGRADE 0x100u        /* B: a ULP's upgrade exchange may come before the indication (lines 69-72) */
#define PEER_ULP_REQUEST "ULP RDDP UPGRADE" /* the suite's demonstration ULP (I32) */
#define PEER_ULP_AGREED "ULP RDDP AGREED "
#define PEER_ULP_LEN 16u
#define CH_CONNECT_AS_B 0x080u   /* --connect as node B: wait for phase 0 (lines 129-132 name no TCP role) */
#define PEER_GREETING_LEN 16u
#define PEER_GREETING_K 0xFFFFul /* the pattern of a greeting or pipelined Send (peer_pattern) */

enum op_kind { OP_SEND, OP_WRITE, OP_READ };
struct peer_op {
    enum op_kind kind;
    size_t len;
};

struct peer_opts {
    enum ift_fault fault;
    uint32_t flags;          /* R, HC, PC, IH, IP, SP, SM, RM as sent (never PH) */
    bool vtag_set;
    uint16_t vtag;
    unsigned require;        /* REQ_* */
    size_t frag;             /* payload bytes per DDP segment */
    unsigned choices;        /* CH_* */
    size_t trickle;          /* choice trickle=N: TCP writes of at most N bytes (0: any) */
    size_t max_msg;          /* largest Send message reassembled */
    uint64_t region_addr;    /* this end's region: TO of its first byte */
    uint32_t stag;
    unsigned long region_size;
    unsigned long idle_ms;   /* 0: never */
    /* target (B) */
    long port;
    const char *bind;
    bool once;
    /* client (A) */
    const char *connect;
    struct peer_op ops[PEER_OPS_MAX];
    size_t nops;
    unsigned long count;
    uint64_t peer_addr;      /* --region: the target's region */
    uint32_t peer_stag;
    unsigned long peer_len;
    unsigned long timeout_ms;
};

struct region {
    uint64_t addr;
    uint32_t stag;
    size_t len;
    uint8_t *mem;
};

/* Output queue of a non-blocking socket. */
struct outq {
    uint8_t *buf;
    size_t head, len, cap;
    bool oom;
};

struct conn;
/* Client hooks (NULL in a target): a whole Send message that came back, a
 * Read Response's last segment. Return 0, or -1 to fail the connection. */
struct conn_hooks {
    int (*on_send)(struct conn *c, const uint8_t *data, size_t len);
    int (*on_read_done)(struct conn *c, uint64_t sink_to, size_t len);
    void (*on_ready)(struct conn *c); /* both indications are out: frames may flow */
};

struct conn {
    int fd;
    unsigned id;
    bool is_a;                   /* role A: sends phase 0 */
    const struct peer_opts *o;
    struct region *region;
    const struct conn_hooks *hooks;
    void *owner;
    uint16_t vtag;               /* ours: the peer puts it in its frames */
    uint32_t flags;              /* ours, without PH */
    struct vw_ift_nego nego;     /* side 0 = A, 1 = B */
    struct vw_ift_framer rx;
    bool ind_sent, peer_ind, ready;
    size_t ulp_have;             /* choice upgrade: bytes of the ULP's request matched so far */
    bool ulp_done;               /* no (more) ULP bytes: IFT from here */
    bool r_disagree;             /* go on anyway (fault ignore-r-disagree) */
    struct vw_ift_ind peer;
    bool tx_hc, tx_pc;           /* CRCs this end's frames carry (its own HC/PC) */
    uint32_t tx_msn[3], rx_msn[3]; /* RFC 5040: QN 0 Send, 1 Read Request, 2 Terminate */
    uint8_t *msg;                /* the Send message being reassembled */
    size_t msg_len, msg_cap;
    uint8_t msg_byte1;           /* DDP mode: the ULP's byte 1, echoed as it came */
    uint32_t msg_qn;
    struct outq out;
    bool failed, rst, eof;
    double last_io_ms;
    unsigned long sends, writes, reads, responses, errors, warnings;
};

void ic_init(struct conn *c, int fd, unsigned id, bool is_a, const struct peer_opts *o, struct region *r,
               const struct conn_hooks *hooks, void *owner);
void ic_free(struct conn *c);
/* A: queue phase 0. */
void ic_start(struct conn *c);
/* Received bytes; 0, or -1 once the connection failed. */
int ic_feed(struct conn *c, const uint8_t *data, size_t len);
/* The peer closed its direction. */
void ic_finish(struct conn *c);
/* Write what is queued; 0, or -1 when the socket failed. */
int ic_flush(struct conn *c);
/* Close; with RST when the connection failed (I8). */
void ic_close(struct conn *c);

/* Frames this end sends (both roles), cut at --frag, faults applied. */
int ic_send_message(struct conn *c, const uint8_t *data, size_t len);
int ic_write(struct conn *c, uint32_t stag, uint64_t to, const uint8_t *data, size_t len);
int ic_read_request(struct conn *c, uint32_t sink_stag, uint64_t sink_to, uint32_t size, uint32_t src_stag,
                      uint64_t src_to);

/* One "event=..." line on stdout, flushed. */
void peer_event(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
double peer_now_ms(void);
/* A random 16-bit VTag (getrandom, SHOULD of 4.2). */
uint16_t peer_random_vtag(void);
/* Byte i of client operation k's data. */
static inline uint8_t peer_pattern(unsigned long k, uint64_t i)
{
    return (uint8_t)(k * 31u + i * 7u + (i >> 8) + 1u);
}

extern volatile sig_atomic_t peer_stop;
int peer_client_run(const struct peer_opts *o);

#endif
