/*
 * conform/protocol.h: what a protocol module is. The one page to read
 * before adding a protocol to vitcp-conform (docs/conformance-engine.md,
 * "Adding a protocol", walks through it with the skeleton module
 * tests/conformance/skeleton_module.c).
 *
 * The conformance engine is a protocol-neutral core (conformance/src/core/:
 * command line, case parser, step runner, connections and timing, the
 * packet relay, captures, verdicts, reports, the lint's capture reader)
 * and protocol modules above it (conformance/src/proto/). The core knows a
 * protocol only through two structs, registered in proto/registry.c:
 *
 *   struct conform_protocol  its active cases: the case language's words
 *                            for its messages, how to build one (encode),
 *                            how to read what the target sends (a session
 *                            that frames, decodes and checks every message
 *                            against the wire library's rules), its run
 *                            options and test conventions;
 *   struct cf_lint_module    its capture rules for `vitcp-conform lint`:
 *                            which connections or datagrams are its, and
 *                            the wire library's checks on their bytes.
 *
 * The core calls up into a module only through the members below (and the
 * two tables): the case parser asks the vocabulary members, the generic
 * runner the session members (and the optional ones a module that takes
 * part in the target's flow control sets), the engine run_case,
 * check_alive, case_skipped and the options, the hooks code hooks and hook_offered, cli.c the capture-case
 * members, run_usage and run_help, the lint core every cf_lint_module
 * member. A member marked optional may be NULL; every other one must be
 * set. Rules are named by the catalog's requirement IDs (wire/catalog/),
 * never by text of the module's own.
 */
#ifndef CONFORM_PROTOCOL_H
#define CONFORM_PROTOCOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "vitcp/findings.h" /* the rules (catalog.h) and their severities */

struct cf_case;
struct cf_step;
struct cf_result;
struct cf_engine;
struct cf_relay_packet;

#define CF_MAX_FIELDS 40  /* field indices a module defines are below this */

/* One message the target sent, decoded by the module's session. */
struct cf_msg {
    unsigned type;           /* the module's type number (type_names) */
    const uint8_t *raw;      /* its bytes (valid while the core keeps the message) */
    size_t len;
    const uint8_t *payload;  /* its payload inside raw (for data=echo) */
    size_t payload_len;
    uint64_t msg_offset;     /* where the payload sits in its ULP message */
    void *decoded;           /* the module's decoded form (field accessor) */
};

/* What the session saw in the bytes fed to it: the first rule broken (a
 * finding of a message's checks, or a framing error) with a line for the
 * report. VW_REQ_NONE: nothing broken. advisories: rules broken that are
 * only advised (warnings, "ID: detail; advisory ID: ..."), which the
 * runner notes in the result (and clears) after each feed while the case
 * passes. */
struct cf_rx_verdict {
    enum vw_req req;
    char detail[240];
    char advisories[400];
};
/* The first rule broken wins: v takes req and the detail (printf's fmt)
 * unless it names a rule already. */
void cf_rx_broke(struct cf_rx_verdict *v, enum vw_req req, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* The first error finding of fs (warnings and notes do not fail) to v as
 * cf_rx_broke does, its detail "WHERE: the finding's" (fmt prints WHERE). */
void cf_rx_findings(struct cf_rx_verdict *v, const struct vw_findings *fs, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* The bytes of one encoded send (owned by the caller: free(bytes)). */
struct cf_encoded {
    uint8_t *bytes;
    size_t len;
    size_t payload_off, payload_len; /* the payload inside bytes */
    uint64_t msg_offset;             /* where it sits in its message (0: a new message;
                                        CF_MSG_NO_ECHO: no ULP data, data=echo keeps the
                                        message before: a read request) */
};
#define CF_MSG_NO_ECHO UINT64_MAX

/* A command-line option a module takes (`run` or `lint`). */
struct cf_option {
    const char *name;   /* with its dashes: "--x-mode" */
    bool takes_value;   /* it takes the next argument as its value */
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
 * connection, or one message per UDP datagram (or Ethernet frame). A
 * datagram module's session is fed one whole datagram per call; its cases
 * may use several tester links (link=N, `--link N=...`). */
enum cf_transport { CF_TRANSPORT_STREAM, CF_TRANSPORT_DATAGRAM };

#define CF_PROTOCOLS_MAX 8       /* registered modules (of each kind) */
#define CF_PROTO_STATE_MAX 512   /* bytes of a module's settings and per-run state in the engine */

/* Called by a session for each whole message it decoded: m->raw and
 * m->decoded are the module's heap blocks, handed over to the core, which
 * frees them with msg_free. */
typedef void (*cf_msg_sink)(void *ctx, const struct cf_msg *m);
/* A msg_free for messages whose raw and decoded are a heap block each. */
void cf_msg_free(struct cf_msg *m);
/* Appends n bytes at p to the heap block *buf (*len bytes used of *cap),
 * growing it: a message gathered from its pieces. false: out of memory,
 * nothing changed. */
bool cf_bytes_append(uint8_t **buf, size_t *len, size_t *cap, const uint8_t *p, size_t n);

struct conform_protocol {
    const char *name;           /* lower case, one word: the case's 'protocol NAME' line, --protocol */
    const char *title;          /* as the draft writes it, for reports and messages */
    const char *unit;           /* what its messages are called on the wire ("segment", "chunk") */
    const char *req_prefix;     /* catalog prefix its cases' IDs start with ("NAME-") */
    uint16_t default_port;      /* the draft's port, where --target gives none */
    const char *cases_subdir;   /* its folder below the cases folder ("" for the top: the default's) */
    enum cf_transport transport; /* default (0): a TCP stream */
    uint16_t ethertype;          /* datagram protocols: its Ethertype on an Ethernet link (0: none) */
    /* run --topology end|router|chain (topology.h, C54): the module's run
     * flag (run_options) that says which kind of node is under test, by
     * topology; NULL: nothing to say. */
    const char *topology_options[3];

    /* Vocabulary of the case language (core/case_parse.c): the names of
     * message types ("send TYPE", "expect TYPE") and of fields
     * ("FIELD=VALUE"), each a table by number (NULL: no such number; at
     * most CF_MAX_FIELDS fields). The core looks them up (cf_proto_type_name
     * and the others below). */
    const char *const *type_names;
    unsigned type_count;
    const char *const *field_names;
    unsigned field_count;
    /* Optional, in place of type_names: types whose names are no table. */
    int (*type_by_name)(const char *name);          /* -1 unknown */
    const char *(*type_name)(unsigned type);        /* any number */
    bool (*field_settable)(unsigned field);         /* may a send set it? */
    bool (*field_relative)(unsigned field);         /* "+N" means relative to the connection */
    size_t max_payload;                             /* payload=N a send may ask for */
    /* Symbolic values ("flags=A|B"): 1 parsed, 0 not symbolic, -1 bad
     * (why says what is allowed). Optional. */
    int (*parse_symbol)(unsigned field, const char *text, int64_t *out, char *why, size_t whylen);
    /* Run-time variables ("$addr+16"): the variable a name starts ($addr),
     * its length in *len; 0 unknown. var_is_bits: it takes the field's
     * symbols after '|' ($level|A) instead of an offset. var_names lists
     * them for error messages and `show`, in the order of their numbers
     * (1 first). Optional: without var_by_name a case has none. */
    unsigned (*var_by_name)(const char *text, size_t *len);
    bool (*var_is_bits)(unsigned var);
    const char *var_names;
    /* A header directive of the module's own (a line before the steps
     * the core does not know) into c->flags: 1 taken, 0 not the module's,
     * -1 bad (why). Optional. */
    int (*parse_directive)(struct cf_case *c, char *const *tok, int ntok, char *why, size_t whylen);
    /* A send argument that is not a field (an option list, a CRC to
     * break, a flag word): 1 taken, 0 not the module's, -1 bad (why).
     * value is NULL for a bare word. Optional. */
    int (*parse_send_arg)(struct cf_step *st, const char *name, const char *value, char *why,
                          size_t whylen);

    /* Active cases through the core's generic step runner (core/runner.c).
     * encode: the bytes of one send step; vals[f] holds the resolved value
     * of every field st->set[f] names. 0, or -1 with the reason. */
    int (*encode)(void *session, const struct cf_step *st, const int64_t *vals, struct cf_encoded *out,
                  char *why, size_t whylen);
    /* A session per connection of case c in the run of engine e (the
     * module's settings): framing, decoding, negotiation and sequencing
     * state, rule checks. */
    void *(*session_new)(const struct cf_case *c, struct cf_engine *e);
    void (*session_free)(void *session);
    /* Feed the target's bytes: sink gets each whole message; the first
     * rule broken (by a message or by the framing) goes to v. */
    void (*session_feed)(void *session, const uint8_t *data, size_t len, cf_msg_sink sink, void *ctx,
                         struct cf_rx_verdict *v);
    /* Optional: the target closed its side: what is left open (a partial
     * message). */
    void (*session_finish)(void *session, struct cf_rx_verdict *v);
    /* Optional, datagram protocols: the next datagram fed came in on an
     * Ethernet link (frames may be padded after the message) or not. */
    void (*session_carrier)(void *session, bool ethernet);
    /* Optional: an expect waited in vain and the target is silent but
     * open. What the session holds back because only later bytes would
     * settle it (a frame's CRC layout) is judged now as if the
     * stream ended there, so the case fails under the rule the target
     * broke instead of a timeout (C45). The session is not fed after it. */
    void (*session_stalled)(void *session, struct cf_rx_verdict *v);
    /* The tester's own message went out (its negotiation/sequencing state). */
    void (*session_sent)(void *session, const struct cf_encoded *enc);
    /* Frees a message the session handed to the sink (its raw and decoded). */
    void (*msg_free)(struct cf_msg *m);
    /* Field accessor of a received message: false when it has no such field. */
    bool (*field_value)(const struct cf_msg *m, unsigned field, int64_t *value);
    /* One line describing a message for failure reports. */
    void (*describe)(const struct cf_msg *m, char *out, size_t n);

    /* Optional: the module's settings and per-run state, kept in the engine
     * (cf_engine_state; at most CF_PROTO_STATE_MAX bytes, zeroed, then
     * state_init at cf_engine_init), and the run options that set them:
     * the command line hands each option it does not know to set_option
     * of the module that lists it (0, or -1 with why). */
    void (*state_init)(void *state);
    const struct cf_option *run_options;   /* ends with a NULL name */
    int (*set_option)(void *state, const char *name, const char *value, char *why, size_t whylen);

    /* Optional: the test conventions (hooks) its cases may need, ending
     * with a NULL name; a module without a table takes no 'needs HOOK'. */
    const struct cf_hook_def *hooks;
    /* Optional: does a module's run option settle a hook (an option that
     * names a log the hook reads offers it)? 1 offered, 0 not, -1 no opinion. */
    int (*hook_offered)(const void *state, const char *hook);

    /* Optional: a case the run cannot take at all (a router case against
     * an end node), skipped with the reason before its test
     * conventions are settled, so that no probe runs for it. true: skip. */
    bool (*case_skipped)(struct cf_engine *e, const struct cf_case *c, char *why, size_t whylen);

    /* Optional: judge a relay case's recording (C46, after the case in
     * core/runner.c): the real packets of both sides, the first of
     * them frame first_frame + 1 of the run's capture. The first rule the
     * target broke fails the case unless *decided (then it sets *decided);
     * what is only advisory may be noted in res->message. */
    void (*judge_recording)(const struct cf_engine *e, const struct cf_case *c, const struct cf_relay_packet *pk,
                            size_t n, unsigned first_frame, struct cf_result *res, bool *decided);

    /* Optional: the module runs a case itself (then usually ends in the
     * core's cf_generic_run_case: a choice between kinds of cases, a
     * question to the target before the case). */
    void (*run_case)(struct cf_engine *e, const struct cf_case *c, struct cf_result *res);

    /* Optional, for a protocol whose tester takes part in the target's
     * flow control and sequencing (the generic runner calls them when set).
     * runner_flags: CF_RUNNER_* below. */
    unsigned runner_flags;
    /* A value known only at run time: var (a $variable, CF_VAR_NONE: none)
     * plus value, or with relative the "+N" of field counted from the
     * proper side's base, in the message m (NULL: a send). *out gets the
     * value. CF_RESOLVED; CF_RESOLVE_WAIT: not known yet, the runner reads
     * the target and asks again (final: the last time, after the wait);
     * CF_RESOLVE_NA: the case cannot apply (why); -1: the case's error (why). */
    int (*resolve)(void *session, unsigned field, unsigned var, bool relative, int64_t value,
                   const struct cf_msg *m, bool final, int64_t *out, char *why, size_t whylen);
    /* A field a message has no one value of (a reassembled message's
     * length field): an expect does not compare it. */
    bool (*field_ignored)(const struct cf_msg *m, unsigned field);
    /* The message an expect (not await) finds next and that does not match
     * it: 0, a difference; CF_UNMATCHED_PASS_OVER, one to pass over (a
     * keep-alive carrying only acknowledgements, of a type the step does not
     * name); CF_UNMATCHED_REFUSED, the target's choice the draft allows (a
     * refused option the case allows): not applicable (why). */
    int (*unmatched)(const struct cf_case *c, const struct cf_step *st, const struct cf_msg *m, char *why,
                     size_t whylen);
    /* Comparisons of a step the core cannot make (data the tester wrote
     * elsewhere, a capture's bytes): 0 matched, -1 not (why). */
    int (*match_more)(void *session, const struct cf_case *c, const struct cf_step *st, const struct cf_msg *m,
                      char *why, size_t whylen);
    /* May the send step go now (1), or must the tester wait for the
     * target (0: an advertisement of receive buffers; the runner reads and
     * asks again up to the slack, then the case is not applicable: why)? */
    int (*send_ready)(void *session, const struct cf_step *st, char *why, size_t whylen);
    /* While the tester waits: a message it owes the target now (an
     * acknowledgement), 1 with it in *out, else 0. */
    int (*idle_send)(void *session, struct cf_encoded *out);
    /* The tester's own message before it leaves (the session's state of
     * both sides): 0, or 1 when sending it would break a rule on the
     * tester's side that the target's choice caused: not applicable (why). */
    int (*session_sending)(void *session, const struct cf_encoded *enc, char *why, size_t whylen);
    /* A message the session is still gathering (its pieces came, its end
     * not) to the sink as it is, after flush_quiet_ms without bytes or when
     * an expect's wait ends: true when there was one. */
    bool (*session_flush)(void *session, cf_msg_sink sink, void *ctx);
    unsigned flush_quiet_ms;
    /* The target's stream reached TCP's urgent mark (SO_OOBINLINE). */
    void (*session_urgent)(void *session, struct cf_rx_verdict *v);
    /* Bytes of the target no whole message took, described (why may be
     * NULL: only the count). */
    size_t (*session_unframed)(void *session, char *why, size_t whylen);
    /* Optional: after a hostile case, is the target still alive (0), or
     * not (-1, why)? Without it the core reconnects to find out. */
    int (*check_alive)(struct cf_engine *e, char *why, size_t whylen);
    /* Optional: capture cases (NAME.meta beside NAME.pcapng): load one; the
     * module's words on a recorded send in `vitcp-conform show`
     * (cf_case_describe; optional); which NAME.meta files of its folder are
     * its cases (optional: without it, all). */
    int (*load_capture_case)(const char *meta_path, struct cf_case *out, char *err, size_t errlen);
    const char *(*capture_send_note)(const struct cf_step *st);
    bool (*is_capture_meta)(const char *name);

    /* Optional: `run --help` for the module's run_options: their usage
     * ("[--x-mode] [--x-id N]") and lines that explain them, each starting
     * with two spaces and ending with a newline. */
    const char *run_usage;
    const char *run_help;
};

/* resolve's and unmatched's answers. */
enum { CF_RESOLVED = 0, CF_RESOLVE_WAIT = 1, CF_RESOLVE_NA = 2 };
enum { CF_UNMATCHED_PASS_OVER = 1, CF_UNMATCHED_REFUSED = 2 };

/* runner_flags: how the generic runner judges the module's cases. */
enum {
    /* C93: a result names the frames its verdict comes from (a
     * difference, a broken rule, the close) and no others */
    CF_RUNNER_FRAMES_AT_VERDICT = 1u,
    /* C94: await leaves the messages it passes over for later steps */
    CF_RUNNER_AWAIT_KEEPS = 2u,
    /* C95: expect-close waits for the close whatever else comes first */
    CF_RUNNER_CLOSE_ANY = 4u,
    /* C96: the bytes still in flight after the last step (and before a
     * capture case's difference is reported) are read and judged */
    CF_RUNNER_DRAIN = 8u,
};

/* The registered modules (proto/registry.c), in order; NULL-terminated. */
extern const struct conform_protocol *const cf_protocols[];
/* The module named name (case-insensitive); NULL if none. */
const struct conform_protocol *cf_protocol_find(const char *name);
/* The default protocol of a case without a protocol line: the table's first. */
const struct conform_protocol *cf_protocol_default(void);
/* The registered names with ", " between, for messages. */
const char *cf_protocol_names(void);

/* A table of names by number (NULL: none): the index of name in
 * names[0..count), or -1; the name at index i, or "?" where there is none. */
int cf_name_index(const char *const *names, unsigned count, const char *name);
const char *cf_name_at(const char *const *names, unsigned count, unsigned i);
/* A module's vocabulary: the number of a type's or field's name (-1
 * unknown), and the name of a number ("?" or the module's word for none). */
int cf_proto_type_by_name(const struct conform_protocol *p, const char *name);
const char *cf_proto_type_name(const struct conform_protocol *p, unsigned type);
int cf_proto_field_by_name(const struct conform_protocol *p, const char *name);
const char *cf_proto_field_name(const struct conform_protocol *p, unsigned field);

/* ------------------------------------------------------------------ lint
 *
 * `vitcp-conform lint` checks a capture offline (conform/lint.h). The core
 * (core/lint.c) reads the capture, follows its TCP connections and
 * datagrams, and keeps the issues and the summary; a lint module says which
 * traffic is its protocol's and runs the wire library's rules on it. A lint
 * module lives beside its protocol's conformance module (src/proto/) and is
 * registered in cf_lint_modules[] (proto/registry.c).
 *
 * The core hands a module its connection as a struct cf_lint_flow and its
 * findings go back through the cf_lint_* calls below, which fill in the
 * frame, the connection and the module of each issue.
 */
struct cf_lint;         /* one lint run (core/lint.c) */
struct vn_tcp_event;    /* the capture reader's events (vitcp/pcap_reader.h) */
struct vn_datagram;
struct vw_findings;

#define CF_LINT_COUNTERS_MAX 4   /* counters a lint module keeps for the summary */
#define CF_LINT_OPTIONS_MAX 4    /* options a lint module takes besides its port */

/* A number the summary reports ("2 X connections, 14 PDUs"). */
struct cf_lint_counter {
    const char *key;    /* its key in the JSON summary ("x_pdus") */
    const char *text;   /* its words in the text summary, after the number ("PDUs") */
};

/* One TCP connection of the capture, as the core follows it for a module. */
struct cf_lint_flow {
    bool syn_seen;      /* its SYN is in the capture */
    bool upgraded;      /* it became the module's mid-stream (takes_over) */
    bool dead[2];       /* direction d is no longer checked (framing lost, a capture gap):
                           the core sends it no more data; a module sets it when it gives up */
    void *state;        /* the module's state for it (conn_size bytes, zeroed) */
};

struct cf_lint_module {
    /* Its conformance module: the protocol's name, the catalog prefix of
     * the IDs its rules report (list: "by lint"), its transport (TCP
     * connections or datagrams) and its default port. */
    const struct conform_protocol *protocol;
    const char *title;  /* the protocol of its issues in the report (JSON "protocol") */

    /* Its port: TCP, a connection to or from it is the module's (tried
     * before the content); datagrams, a UDP datagram to or from it. The
     * option port_option ("--x-port") sets it, the core checks the value. */
    const char *port_option;
    /* `lint --help`: one line or more of what it checks and how it finds
     * it, each starting with two spaces and ending with a newline. */
    const char *help;
    /* Optional: options of `lint` besides the port (ending with a NULL
     * name), their part of the usage line ("[--x-mode M]"), and
     * check_option that checks one's value (0, or -1 with why); the module
     * reads the values with cf_lint_option. */
    const struct cf_option *options;
    const char *usage;
    int (*check_option)(const char *name, const char *value, char *why, size_t whylen);

    /* The summary: the counters it keeps (cf_lint_counted), ending with a
     * NULL key. The text summary shows them when the first is not zero;
     * the default protocol's always, first. */
    struct cf_lint_counter counters[CF_LINT_COUNTERS_MAX + 1];

    /* TCP protocols. Which connections are the module's: the core tries,
     * in the table's order, the port of the side that listens, then the
     * other port, then the first bytes (looks_like, optional: without it
     * the port alone decides). */
    bool (*looks_like)(const uint8_t *data, size_t len);
    /* A connection of no protocol whose later segment looks_like the
     * module's start becomes the module's (a ULP that upgrades its
     * connection mid-stream, found by the bytes). */
    bool takes_over;
    /* It frames from the first byte of each direction only: a connection
     * whose capture starts later is noted and not checked (unless its first
     * bytes looks_like its start). */
    bool from_start;
    /* Its connections hold large buffers: at most CF_LINT_MAX_HEAVY of
     * them are checked at once. */
    bool heavy;
    size_t conn_size;   /* bytes of its per-connection state */
    /* A connection became the module's at ev (its first data, or the
     * segment it takes_over at). 0, or -1 out of memory (what it made is
     * freed by conn_free, which follows). */
    int (*conn_open)(struct cf_lint *l, struct cf_lint_flow *f, const struct vn_tcp_event *ev);
    /* Frees what the state holds (not the state). */
    void (*conn_free)(struct cf_lint_flow *f);
    /* Data of direction dir (0: the side that sent the connection's first
     * bytes), in stream order, never of a dead direction. */
    void (*data)(struct cf_lint *l, struct cf_lint_flow *f, int dir, const struct vn_tcp_event *ev);
    /* Optional: a TCP urgent pointer of a live direction (ev->urgent). */
    void (*urgent)(struct cf_lint *l, struct cf_lint_flow *f, int dir, const struct vn_tcp_event *ev);
    /* Optional: a TCP ACK of direction dir acknowledging the other
     * direction's stream up to offset acked. */
    void (*ack)(struct cf_lint_flow *f, int dir, uint64_t acked);
    /* The rule a retransmission with different bytes breaks (VW_REQ_NONE:
     * none of the protocol's; the core notes it). */
    enum vw_req retransmission_rule;
    /* Optional: direction dir ended (its FIN), also when it is dead; what
     * it left unfinished goes to fs (the core reports it "at the end of
     * this direction"). */
    void (*direction_end)(struct cf_lint *l, struct cf_lint_flow *f, int dir, struct vw_findings *fs);
    /* Optional: the connection is over (both FINs or an RST: real_end;
     * else the capture ended or its ports were reused); what it left goes
     * to fs (the core reports it "at close"). conn_free follows. */
    void (*closed)(struct cf_lint *l, struct cf_lint_flow *f, bool real_end, struct vw_findings *fs);

    /* Datagram protocols: a datagram of the module's (its protocol's
     * Ethertype, or a UDP datagram to or from its port), to check. */
    void (*datagram)(struct cf_lint *l, const struct vn_datagram *dg);
    /* Optional: frees the module's per-run state (cf_lint_run_state). */
    void (*run_free)(void *run_state);
};

/* The lint modules (proto/registry.c), NULL-terminated, in the order a
 * connection's ports and first bytes are tried. */
extern const struct cf_lint_module *const cf_lint_modules[];

/* What a lint module calls (core/lint.c). Issues are the current
 * module's, on the current connection (none for datagrams). */
#define CF_LINT_MAX_HEAVY 1024
void cf_lint_issue(struct cf_lint *l, uint64_t frame, int dir, enum vw_req req, enum vw_severity sev,
                   const char *fmt, ...) __attribute__((format(printf, 6, 7)));
/* Every finding of one PDU at the current frame and direction, each
 * "WHAT: detail"; err (when no finding names it) "WHAT ERR_TEXT". */
void cf_lint_findings(struct cf_lint *l, enum vw_req err, const char *what, const char *err_text,
                      const struct vw_findings *fs);
/* The frame and direction being handled; a module that reports a PDU of
 * an earlier frame sets them for its findings (and back). */
uint64_t cf_lint_frame(const struct cf_lint *l);
void cf_lint_set_frame(struct cf_lint *l, uint64_t frame);
int cf_lint_dir(const struct cf_lint *l);
void cf_lint_set_dir(struct cf_lint *l, int dir);
/* The value of the current module's option k (its place in options; NULL:
 * not given, "": a flag given), and its per-run state (a slot the module
 * fills; run_free frees it at the end). */
const char *cf_lint_option(const struct cf_lint *l, unsigned k);
void **cf_lint_run_state(struct cf_lint *l);
/* Counter k of the current module goes up by one. */
void cf_lint_counted(struct cf_lint *l, unsigned k);
/* Out of memory: the lint fails once it has read the capture. */
void cf_lint_out_of_memory(struct cf_lint *l);

#endif
