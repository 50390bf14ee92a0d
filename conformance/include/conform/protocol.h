/*
 * The one interface between the protocol-neutral conformance core
 * (connections, timing, steps, the relay, capture, verdicts, reports:
 * conformance/src/core/) and a protocol module (conformance/src/proto/):
 * everything the core needs to know about a protocol is behind one
 * struct conform_protocol. A case names its protocol ('protocol warp',
 * default vitcp); `vitcp-conform run --protocol NAME` runs that
 * protocol's cases. docs/conformance-engine.md explains how to add one.
 *
 * What a module gives:
 *   - its name, default port, the catalog prefix of its requirement IDs;
 *   - the case language's vocabulary: message type names, field names
 *     (indices < CF_MAX_FIELDS), which fields a send may set, symbolic
 *     values and module arguments of a send (parse hooks);
 *   - encode: the bytes of one message from a send step's fields, built
 *     by the wire library's encoder;
 *   - a session (negotiation/sequencing state) created per case, fed every
 *     byte the target sends: it frames the stream, decodes each message
 *     into a struct cf_msg with a field accessor for expect matching, and
 *     checks each message against the rules (findings with catalog IDs);
 *   - optionally, on_connect (a handshake before the case's steps),
 *     run_case (a module that runs its cases itself on the core's
 *     connections, timing and verdict helpers: VI/TCP, for its reassembly,
 *     relative numbering, RDMA region and capture replay), check_alive
 *     (the survival probe after hostile cases) and capture cases.
 */
#ifndef CONFORM_PROTOCOL_H
#define CONFORM_PROTOCOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "vitcp/catalog.h"

struct cf_case;
struct cf_step;
struct cf_result;
struct cf_engine;
struct cf_relay_packet;

#define CF_MAX_FIELDS 40  /* field indices a module defines are below this */
#define CF_MSG_NO_TYPE 0xFFu

/* One message the target sent, decoded by the module's session. */
struct cf_msg {
    unsigned type;           /* the module's type number (type_name) */
    const uint8_t *raw;      /* its bytes (valid while the core keeps the message) */
    size_t len;
    const uint8_t *payload;  /* its payload inside raw (for data=echo) */
    size_t payload_len;
    uint64_t msg_offset;     /* where the payload sits in its ULP message */
    void *decoded;           /* the module's decoded form (field accessor) */
};

/* What the session saw in the bytes fed to it: the first rule broken (a
 * finding of a message's checks, or a framing error) with a line for the
 * report. VW_REQ_NONE: nothing broken. */
struct cf_rx_verdict {
    enum vw_req req;
    char detail[240];
};

/* The bytes of one encoded send (owned by the caller: free(bytes)). */
struct cf_encoded {
    uint8_t *bytes;
    size_t len;
    size_t payload_off, payload_len; /* the payload inside bytes */
    uint64_t msg_offset;             /* where it sits in its message (0: a new message;
                                        CF_MSG_NO_ECHO: no ULP data, data=echo keeps the
                                        message before: IFT's Read Request) */
};
#define CF_MSG_NO_ECHO UINT64_MAX

/* A `run` option a module takes (VI/TCP: --discriminator D, --no-announce). */
struct cf_option {
    const char *name;   /* "--discriminator" */
    bool takes_value;
};

/* A test convention a module's cases may need (C60, docs/conformance.md
 * "Test conventions"): never a rule of the draft, but what the tester needs
 * to observe a rule (an echo of delivered data, a read-back of placed
 * bytes, an answer to a probe). Cases declare it ('needs echo'), a probe
 * case finds out whether the target offers it ('provides echo'), and
 * `run --offers` declares it. */
struct cf_hook_def {
    const char *name;   /* "echo" */
    const char *what;   /* "the target sends each delivered Send back" */
};

/* How a protocol's messages travel (C47): a byte stream over a TCP
 * connection (VI/TCP, IFT, WARP), or one message per UDP datagram (EEP,
 * P1). A datagram module's session is fed one whole datagram per call;
 * its cases may use several tester links (link=N, `--link N=...`). */
enum cf_transport { CF_TRANSPORT_STREAM, CF_TRANSPORT_DATAGRAM };

#define CF_PROTOCOLS_MAX 8       /* registered modules */
#define CF_PROTO_STATE_MAX 512   /* bytes of a module's settings and per-run state in the engine */

/* Called by a session for each whole message it decoded: m->raw and
 * m->decoded are the module's heap blocks, handed over to the core, which
 * frees them with msg_free. */
typedef void (*cf_msg_sink)(void *ctx, const struct cf_msg *m);

struct conform_protocol {
    const char *name;           /* "vitcp", "warp": the case's protocol line, --protocol */
    const char *title;          /* "VI/TCP" */
    const char *unit;           /* what its messages are called on the wire: "segment", "chunk" */
    const char *req_prefix;     /* catalog prefix its cases' IDs start with: "VITCP-" */
    uint16_t default_port;
    const char *cases_subdir;   /* its folder below the cases folder ("" for the top) */
    enum cf_transport transport; /* default (0): a TCP stream */
    uint16_t ethertype;          /* datagram protocols: its Ethertype on an Ethernet link (0: none) */
    /* run --topology end|router|chain (topology.h, C54): the module's run
     * flag (run_options) that says which kind of node is under test, by
     * topology; NULL: nothing to say. */
    const char *topology_options[3];

    /* Vocabulary of the case language. */
    int (*type_by_name)(const char *name);          /* -1 unknown */
    const char *(*type_name)(unsigned type);
    int (*field_by_name)(const char *name);         /* -1 unknown; else < CF_MAX_FIELDS */
    const char *(*field_name)(unsigned field);
    bool (*field_settable)(unsigned field);         /* may a send set it? */
    bool (*field_relative)(unsigned field);         /* "+N" means relative to the connection */
    size_t max_payload;                             /* payload=N a send may ask for */
    /* Symbolic values ("attrs=RD|RWE"): 1 parsed, 0 not symbolic, -1 bad
     * (why says what is allowed). May be NULL. */
    int (*parse_symbol)(unsigned field, const char *text, int64_t *out, char *why, size_t whylen);
    /* Run-time variables ("$addr+16"): the variable a name starts ($addr),
     * its length in *len; 0 unknown. var_is_bits: it takes the field's
     * symbols after '|' ($level|RWE) instead of an offset. var_names lists
     * them for error messages and `show`, in the order of their numbers
     * (1 first). Without var_by_name a case has none. */
    unsigned (*var_by_name)(const char *text, size_t *len);
    bool (*var_is_bits)(unsigned var);
    const char *var_names;
    /* A header directive of the module's own (VI/TCP: segments,
     * level-optional) into c->flags: 1 taken, 0 not the module's, -1 bad
     * (why). May be NULL. */
    int (*parse_directive)(struct cf_case *c, char *const *tok, int ntok, char *why, size_t whylen);
    /* A send argument that is not a field (VI/TCP: calling=, opts=, crc=,
     * noeom): 1 taken, 0 not the module's, -1 bad (why). value is NULL for
     * a bare word. May be NULL. */
    int (*parse_send_arg)(struct cf_step *st, const char *name, const char *value, char *why,
                          size_t whylen);

    /* Active cases through the core's generic step runner (core/runner.c).
     * encode: the bytes of one send step; vals[f] holds the resolved value
     * of every field st->set[f] names. 0, or -1 with the reason. */
    int (*encode)(void *session, const struct cf_step *st, const int64_t *vals, struct cf_encoded *out,
                  char *why, size_t whylen);
    /* A session per connection: framing, decoding, negotiation and
     * sequencing state, rule checks. */
    void *(*session_new)(const struct cf_case *c);
    void (*session_free)(void *session);
    /* Feed the target's bytes: sink gets each whole message; the first
     * rule broken (by a message or by the framing) goes to v. */
    void (*session_feed)(void *session, const uint8_t *data, size_t len, cf_msg_sink sink, void *ctx,
                         struct cf_rx_verdict *v);
    /* The target closed its side: what is left open (a partial message). */
    void (*session_finish)(void *session, struct cf_rx_verdict *v);
    /* Datagram protocols, optional: the next datagram fed came in on an
     * Ethernet link (frames may be padded after the message) or not. */
    void (*session_carrier)(void *session, bool ethernet);
    /* Optional: an expect waited in vain and the target is silent but
     * open. What the session holds back because only later bytes would
     * settle it (IFT: a frame's CRC layout) is judged now as if the
     * stream ended there, so the case fails under the rule the target
     * broke instead of a timeout (C45). The session is not fed after it. */
    void (*session_stalled)(void *session, struct cf_rx_verdict *v);
    /* The tester's own message went out (its negotiation/sequencing state). */
    void (*session_sent)(void *session, const struct cf_encoded *enc);
    void (*msg_free)(struct cf_msg *m);
    /* Field accessor of a received message: false when it has no such field. */
    bool (*field_value)(const struct cf_msg *m, unsigned field, int64_t *value);
    /* One line describing a message for failure reports. */
    void (*describe)(const struct cf_msg *m, char *out, size_t n);
    /* Optional: run before the first step after the TCP connection is up
     * (a handshake the protocol needs); 0 or -1 with the reason. */
    int (*on_connect)(void *session, int fd, char *why, size_t whylen);

    /* Optional: the module's settings and per-run state, kept in the engine
     * (cf_engine_state; at most CF_PROTO_STATE_MAX bytes, initialised by
     * state_init at cf_engine_init), and the run options that set them. */
    void (*state_init)(void *state);
    const struct cf_option *run_options;   /* ends with a NULL name */
    int (*set_option)(void *state, const char *name, const char *value, char *why, size_t whylen);

    /* Optional: the test conventions (hooks) its cases may need, ending
     * with a NULL name; a module without a table takes no 'needs HOOK'. */
    const struct cf_hook_def *hooks;
    /* Optional: does a module's run option settle a hook (EEP: a delivery
     * log regex offers delivery-log)? 1 offered, 0 not, -1 no opinion. */
    int (*hook_offered)(const void *state, const char *hook);

    /* Optional: a case the run cannot take at all (EEP: a router case
     * against an end node), skipped with the reason before its test
     * conventions are settled, so that no probe runs for it. true: skip. */
    bool (*case_skipped)(struct cf_engine *e, const struct cf_case *c, char *why, size_t whylen);

    /* Optional: judge a relay case's recording (C46, core.h
     * cf_relay_case_finish): the real packets of both sides, the first of
     * them frame first_frame + 1 of the run's capture. The first rule the
     * target broke fails the case unless *decided (then it sets *decided);
     * what is only advisory may be noted in res->message. */
    void (*judge_recording)(const struct cf_engine *e, const struct cf_case *c, const struct cf_relay_packet *pk,
                            size_t n, unsigned first_frame, struct cf_result *res, bool *decided);

    /* Optional overrides. */
    void (*run_case)(struct cf_engine *e, const struct cf_case *c, struct cf_result *res);
    int (*check_alive)(struct cf_engine *e, char *why, size_t whylen);
    /* Capture cases (NAME.meta beside NAME.pcapng) and their description. */
    int (*load_capture_case)(const char *meta_path, struct cf_case *out, char *err, size_t errlen);
    void (*describe_capture_case)(FILE *out, const struct cf_case *c);
    bool (*is_capture_meta)(const char *name);
};

/* The registered modules (proto/registry.c), in order; NULL-terminated. */
extern const struct conform_protocol *const cf_protocols[];
/* The module named name (case-insensitive); NULL if none. */
const struct conform_protocol *cf_protocol_find(const char *name);
/* The default protocol of a case without a protocol line: VI/TCP. */
const struct conform_protocol *cf_protocol_default(void);
/* "vitcp, warp": the registered names, for messages. */
const char *cf_protocol_names(void);

/* A module's vocabulary tables (field and type names): the index of name in
 * names[0..count), or -1; the name at index i, or "?" past the table. */
int cf_name_index(const char *const *names, unsigned count, const char *name);
const char *cf_name_at(const char *const *names, unsigned count, unsigned i);

#endif
