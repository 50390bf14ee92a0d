/*
 * The VI/TCP module's session on the generic runner (core/runner.c), one
 * per connection, shared by its receive side (session.c) and its send side
 * (send.c). Private to src/proto/vitcp/.
 */
#ifndef VITCP_MODULE_SESSION_H
#define VITCP_MODULE_SESSION_H

#include "conform/core.h"
#include "conform/proto/vitcp.h"
#include "vitcp/vitcp_stream.h"

#define VS_ANNOUNCE_LEN 16 /* vipl-peer: address (8), handle (4), length (4) */
#define VS_WRITTEN_MAX (256u * 1024u)
#define VS_PARTIAL_MAX 4
#define VS_MESSAGE_MAX (1u << 20)

/* A message of the target still arriving segment by segment (reassembled
 * unless the case compares segments: 'segments'). */
struct vs_partial {
    bool used;
    struct vw_vitcp_seg first; /* its first segment's fields (payload not kept) */
    uint8_t *data;
    size_t len, cap;
    unsigned index;
    uint8_t flags;             /* TXERR of any segment */
};

/* A received message's decoded form (struct cf_msg.decoded). */
struct vs_msg {
    struct vw_vitcp_seg seg; /* pointers into the cf_msg's raw */
    unsigned index;          /* its number among the target's segments */
    bool gathered;           /* reassembled from segments: raw is its payload */
};

struct vs_session {
    const struct cf_case *c;
    struct cf_engine *e;
    struct vw_vitcp_session s;
    /* while bytes are fed */
    cf_msg_sink sink;
    void *sink_ctx;
    struct cf_rx_verdict *rx;
    struct vs_partial partial[VS_PARTIAL_MAX];
    unsigned rx_index;
    uint64_t rx_bytes;
    /* relative numbering */
    bool tester_init_known, target_init_known;
    uint32_t tester_init, target_init, tester_last_msg;
    /* the target's RDMA region ($addr $handle $len) and CE values ($window $rx) */
    bool region_known, announce_done, target_ce_known;
    uint64_t region_addr;
    uint32_t region_handle, region_len;
    uint16_t target_window, target_rx;
    long tester_first_send_len;       /* -1 until the tester sent a Send */
    uint8_t send_head[VS_ANNOUNCE_LEN]; /* the start of the tester's last Send */
    size_t send_head_len;
    uint16_t tester_consumed;         /* descriptor-consuming messages (V17) */
    uint8_t written[VS_WRITTEN_MAX];  /* the tester's last RdmaWrite, for data=written */
    size_t written_len;
    bool mtu_na;                      /* the tester's own segment would break the MTU */
    char mtu_why[240];
};

/* The session directions of the tester's and the target's segments. */
static inline int vs_tester_dir(const struct vs_session *v) { return v->c->passive ? 1 : 0; }
static inline int vs_target_dir(const struct vs_session *v) { return v->c->passive ? 0 : 1; }

/* send.c */
int cf_vitcp_encode(void *session, const struct cf_step *st, const int64_t *vals, struct cf_encoded *out, char *why,
                    size_t whylen);
int cf_vitcp_send_ready(void *session, const struct cf_step *st, char *why, size_t whylen);
int cf_vitcp_idle_send(void *session, struct cf_encoded *out);
int cf_vitcp_session_sending(void *session, const struct cf_encoded *enc, char *why, size_t whylen);
/* The module's run_case ($level asked before the generic runner runs the
 * case) and survival probe. */
void cf_vitcp_run_case(struct cf_engine *e, const struct cf_case *c, struct cf_result *res);
int cf_vitcp_check_alive(struct cf_engine *e, char *why, size_t whylen);

/* session.c */
void *cf_vitcp_session_new(const struct cf_case *c, struct cf_engine *e);
void cf_vitcp_session_free(void *session);
void cf_vitcp_session_feed(void *session, const uint8_t *data, size_t len, cf_msg_sink sink, void *ctx,
                           struct cf_rx_verdict *v);
void cf_vitcp_session_urgent(void *session, struct cf_rx_verdict *v);
size_t cf_vitcp_session_unframed(void *session, char *why, size_t whylen);
bool cf_vitcp_session_flush(void *session, cf_msg_sink sink, void *ctx);
bool cf_vitcp_field_value(const struct cf_msg *m, unsigned field, int64_t *value);
bool cf_vitcp_field_ignored(const struct cf_msg *m, unsigned field);
void cf_vitcp_describe(const struct cf_msg *m, char *out, size_t n);
int cf_vitcp_unmatched(const struct cf_case *c, const struct cf_step *st, const struct cf_msg *m, char *why,
                       size_t whylen);
int cf_vitcp_match_more(void *session, const struct cf_case *c, const struct cf_step *st, const struct cf_msg *m,
                        char *why, size_t whylen);
int cf_vitcp_resolve(void *session, unsigned field, unsigned var, bool relative, int64_t value,
                     const struct cf_msg *m, bool final, int64_t *out, char *why, size_t whylen);
/* $level: the first of RD, RR, U the target accepts (asked once per target). */
uint16_t cf_vitcp_target_level(struct cf_engine *e);

#endif
