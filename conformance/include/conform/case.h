/*
 * A conformance case: a small script in the spirit of packetdrill, one
 * directive or step per line, that names the requirements it tests. The
 * one case language of every protocol (docs/conformance-engine.md "One
 * case format"); message types, field names, symbolic values, $variables,
 * send arguments and directives of its own are the module's vocabulary
 * (protocol.h; the modules' headers in conform/proto/), the rest is the
 * core's:
 *
 *   protocol NAME         the case's protocol (conform/protocol.h), before any
 *                         step; default: cf_protocol_default's
 *   case    send-echo     stable id
 *   section 4.3
 *   title   a message is echoed
 *   require ID...         the requirements it tests (catalog IDs of the
 *                         module's prefix; the first is each step's default)
 *   timeout 3000          ms for the whole case
 *   hostile               check the target survives after
 *
 *   connect
 *   send   TYPE field=value... payload=100 fill=1
 *   expect TYPE field<=value... data=echo [ID]
 *   expect-close [ID]
 *
 * A field not named in an expect is a wildcard. The [ID] at the end of a
 * step names the requirement a mismatch breaks (default: the case's first
 * requirement). Messages are always built by the wire library's encoder
 * (the module's encode).
 *
 * More of the language:
 *   role passive          the tester listens and the implementation connects
 *                         to it (run --listen); the first step is then
 *                         'accept' instead of 'connect'
 *   needs echo readback|rdma-echo
 *                         (C60) test conventions (hooks, the module's
 *                         table in protocol.h) the case needs: each word
 *                         must be offered, of 'A|B' either; a target that
 *                         does not offer one makes the case not applicable
 *                         with the reason (they are no rules of the draft)
 *   provides echo         (C60) the case is the probe of a hook: it runs
 *                         before the first case that needs it; passing, the
 *                         hook is offered; else the target does not offer it
 *                         and the probe is not applicable (a rule of the
 *                         draft broken on the way still fails it), unless
 *                         `run --offers` declared it
 *   when HOOK STEP        (C60, generic runner) the step runs only when the
 *   when !HOOK STEP       target offers the hook (or only when it does not)
 *   needs region          the case uses the target's region ($variables of
 *                         the module); without one it is not applicable
 *   field=+N              relative to the connection (protocol.h field_relative)
 *   field=$var+N          a run-time value of the module (var_by_name)
 *   field&7=1             compare the field under a mask
 *   send ... fill=N       payload pattern N (so two messages differ)
 *   send ... repeat=N     N messages in one write
 *   expect * ...          any message type
 *   await TYPE ...        like expect, but messages that do not match are
 *                         skipped (still checked by the session) until one does
 *   data=echo             the payload is the tester's last message's
 *   data=written          the payload is the last write's at its offset
 *   check TYPE ...        compare more fields of the message the last expect
 *                         or await matched (its own [ID]: a second rule)
 *   only-if TYPE ...      like check, but a mismatch is a choice the draft
 *                         leaves to the target: the case is not applicable,
 *                         with the fields as the reason
 *   expect A|B ...        either message type matches
 *   expect TYPE ... if-open   (generic runner, C44) if the target closes the
 *                         connection instead, the case is not applicable: a
 *                         policy the draft leaves to the target
 *   connect ... connect   (generic runner, C44) a later connect (accept in a
 *                         passive case) ends the connection so far and opens
 *                         a new one with a new session
 *   advisory              the first requirement is a project decision where
 *                         the draft leaves the reaction open: a failure naming
 *                         it is an advisory verdict, not a failure (C35)
 *   relay                 the case runs through the packet relay (relay.h):
 *                         the tester connects from a network namespace of
 *                         its own, the relay records the real TCP segments of
 *                         both sides, and after the case the module judges
 *                         the recording (judge_recording); without a relay
 *                         (not root, a target on another host, a
 *                         --connect-cmd without {host} for role passive) the
 *                         case is skipped
 *   packet drop target 2  a packet action (implies relay): drop (or
 *   packet duplicate tester 1-2   duplicate) a side's Nth data segment, or
 *                         N to M (TCP segments with payload, first
 *                         transmissions, counted from the connection's
 *                         start); a dropped segment makes its TCP retransmit it
 *   links 2               (datagram protocols, C47) the case uses tester
 *                         links 0 and 1: link 0 faces --target, link 1 what
 *                         `run --link 1=[ADDR:]PORT[,HOST:PORT]` says (the
 *                         far side of a router under test); without it the
 *                         case is skipped
 *   send ... link=1       (datagram protocols) out of link 1; expect/await
 *                         ... link=1 take the next message that came in on
 *                         link 1 (without link=: any link's next message)
 *   expect-nothing [MS] [link=N]
 *                         no message of the target (on link N) arrives
 *                         within MS (default the slack): a drop
 *   expect-log [MS]       (C90) a line of the node under test's output
 *                         (engine.h node_log_fd) matching the run's
 *                         node_log_regex comes within MS; with a
 *                         subexpression, it is the tester's last data length
 *   expect-no-log [MS]    no such line comes within MS
 */
#ifndef CONFORM_CASE_H
#define CONFORM_CASE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "conform/relay.h"
#include "conform/report.h"
#include "conform/protocol.h"

enum cf_step_kind {
    CF_STEP_CONNECT,      /* open TCP to the target */
    CF_STEP_SEND,         /* send one encoded message */
    CF_STEP_EXPECT,       /* the next message from the target matches */
    CF_STEP_EXPECT_CLOSE, /* the target closes TCP (FIN or RST) in time */
    CF_STEP_EXPECT_OPEN,  /* the target does NOT close within the wait */
    CF_STEP_CLOSE,        /* the tester closes its side (FIN) */
    CF_STEP_WAIT,         /* pause (ms) */
    CF_STEP_ACCEPT,       /* role passive: wait for the implementation's TCP connection */
    CF_STEP_CHECK,        /* more fields of the message the last expect/await matched */
    CF_STEP_ONLY_IF,      /* like check; a mismatch is the target's allowed choice: not applicable */
    CF_STEP_EXPECT_NOTHING, /* no message of the target (on the step's link) within the wait */
};

/* Tester links of a datagram protocol (C47): link 0 faces --target, the
 * others what `run --link N=...` says (the far side of a router). */
#define CF_MAX_LINKS 4

/* Values known only at run time ("$addr+16"): the module's variables
 * (protocol.h var_by_name), numbered from 1; 0 is none. */
#define CF_VAR_NONE 0u

#define CF_TYPE_ANY 0xFFu /* expect/await: any message type */

#define CF_HOOK_NAME_MAX 24 /* a test convention's name (protocol.h cf_hook_def) */

/* Fields an expect (or a send) can name are the protocol module's
 * (field_names): indices below CF_MAX_FIELDS, compared in their order. */

enum cf_op { CF_OP_EQ, CF_OP_NE, CF_OP_LE, CF_OP_GE };

struct cf_match {
    unsigned field;  /* the module's field index */
    enum cf_op op;
    bool relative; /* "+N": add the initial message number of the proper side */
    unsigned var;    /* "$addr+N": value is added to the run-time variable */
    uint64_t mask;   /* "err&7=1": compare (field & mask); 0 = no mask */
    int64_t value;
};

#define CF_MAX_MATCHES 24
#define CF_STEP_STRS 2      /* text arguments of a send (the module's parse_send_arg) */
#define CF_STEP_STR_MAX 80

/* How a send writes its trailer. */
enum cf_trailer { CF_TRAILER_AUTO, CF_TRAILER_NONE, CF_TRAILER_GOOD, CF_TRAILER_BAD };

struct cf_step {
    enum cf_step_kind kind;
    unsigned line;
    enum vw_req req;        /* the requirement a failure of this step breaks */
    unsigned type;          /* SEND / EXPECT: message type (the module's) */
    bool has_type_alt;      /* EXPECT "A|B": type_alt matches too */
    unsigned type_alt;
    unsigned wait_ms;       /* EXPECT_*, WAIT: how long (0: the engine's default) */
    /* SEND: values to write (set[] says which were named) */
    bool set[CF_MAX_FIELDS];
    bool rel[CF_MAX_FIELDS];
    unsigned var[CF_MAX_FIELDS];
    int64_t val[CF_MAX_FIELDS];
    unsigned fill;          /* payload pattern */
    unsigned repeat;        /* messages in one write (0/1: one) */
    unsigned repeat_var;    /* repeat=$window+1 */
    int repeat_off;
    bool noeom;             /* the message continues (no end-of-message flag) */
    unsigned split;         /* generic runner: write at most this many bytes per write() (0: all) */
    bool hold;              /* generic runner: keep the bytes, write them with the next send's */
    char str[CF_STEP_STRS][CF_STEP_STR_MAX]; /* the module's text arguments */
    uint32_t opts;          /* the module's option bits (parse_send_arg) */
    enum cf_trailer trailer; /* the message's checksum trailer */
    /* Datagram protocols (C47): the tester link a send goes out of, or an
     * expect / await / expect-nothing listens on (link=N); without link=,
     * a send uses link 0 and an expect takes any link's next message. */
    unsigned link;
    bool link_set;
    /* EXPECT */
    struct cf_match match[CF_MAX_MATCHES];
    unsigned nmatch;
    bool data_echo;         /* payload equals the last payload the tester sent */
    bool data_written;      /* payload equals the last RdmaWrite's data */
    bool skip_other;        /* await: skip messages that do not match */
    bool na_if_closed;      /* expect ... if-open: a close instead is not applicable (C44) */
    /* Capture-based cases (capcase.c): the step replays or expects PDU
     * cap_pdu (1-based, 0: a scripted step) of the case's capture, whose
     * bytes are blob[pdu_off..+pdu_len); line is then its frame number. */
    unsigned cap_pdu;
    size_t pdu_off, pdu_len;
    size_t cap_data_off;    /* its payload's offset in the blob */
    bool replay_crc;        /* SEND: the captured message has a trailer */
    bool data_capture;      /* EXPECT: payload bytes equal the captured ones */
    unsigned replay_answer; /* SEND (role passive): what the module derives from the
                               live peer's first message (the module's bits) */
    /* 'when HOOK' / 'when !HOOK' (C60): the step runs only when the target
     * offers the hook (when_not: only when it does not); "" always. */
    char when[CF_HOOK_NAME_MAX];
    bool when_not;
    /* expect-log / expect-no-log (C90): a step on the node's output, not
     * its messages (kind CF_STEP_EXPECT_NOTHING). */
    enum cf_node_log { CF_NODE_LOG_NONE, CF_NODE_LOG_LINE, CF_NODE_LOG_NO_LINE } node_log;
};

#define CF_MAX_STEPS 64
#define CF_MAX_NEEDS 4        /* 'needs' words of a case (each may be A|B|C) */
#define CF_NEED_ALTS 3

/* One word of 'needs': any of its hooks will do. */
struct cf_need {
    char any[CF_NEED_ALTS][CF_HOOK_NAME_MAX];
    unsigned n;
    unsigned line;          /* of its 'needs' line, for errors */
};
#define CF_MAX_PACKET_ACTIONS 8

struct cf_case {
    const struct conform_protocol *proto; /* 'protocol NAME' (default: cf_protocol_default) */
    char id[CF_ID_MAX];
    char file[256];
    char section[32];
    char title[160];
    enum vw_req reqs[CF_MAX_REQS];
    unsigned nreqs;
    unsigned timeout_ms;
    bool hostile;           /* after it, check that the target still accepts */
    bool passive;           /* role passive: the implementation connects to the tester */
    bool needs_region;      /* uses the target's RDMA region */
    struct cf_need needs[CF_MAX_NEEDS]; /* test conventions it needs (C60) */
    unsigned nneeds;
    char provides[CF_HOOK_NAME_MAX]; /* the hook this case probes ("": none) */
    unsigned provides_line;
    bool relay;             /* runs through the packet relay (relay.h) */
    unsigned links;         /* datagram protocols: tester links the case needs ('links N'; 0: 1) */
    uint32_t flags;         /* the module's own directives (parse_directive) */
    bool advisory;          /* the first requirement is a project decision on what the draft
                               leaves open: its failure is an advisory verdict */
    struct cf_relay_action packet[CF_MAX_PACKET_ACTIONS];
    unsigned npacket;
    struct cf_step steps[CF_MAX_STEPS];
    unsigned nsteps;
    /* Capture-based cases (NAME.pcap[ng] + NAME.meta, see capcase.h). */
    bool from_capture;
    bool expect_fail;       /* meta 'verdict fail': the replay must fail */
    uint8_t *blob;          /* the captured PDUs (owned; cf_case_set_free frees it) */
    size_t blob_len;
    bool cap_tester_init_known, cap_target_init_known;
    uint32_t cap_tester_init, cap_target_init; /* initial numbers in the capture */
};

/* Parse one case script (the default protocol unless it has a protocol line).
 * Returns 0, or -1 with "file:line: reason" in err. */
int cf_case_parse(const char *text, const char *file, struct cf_case *out, char *err,
                  size_t errlen);
/* A 'packet VERB SIDE RANGE' line (tok[0] is "packet"), in a case script or
 * a capture case's metadata: adds the action, and the case runs through the
 * relay. 0, or -1 with the reason in why. */
int cf_case_add_packet(struct cf_case *c, char *const *tok, int ntok, char *why, size_t whylen);
/* Read and parse a file (at most 64 KiB). */
int cf_case_load(const char *path, struct cf_case *out, char *err, size_t errlen);

/* A regular file (following links)? Only regular files are read as cases
 * or captures: a named pipe would block the loader for ever. */
bool cf_is_regular_file(const char *path);
bool cf_is_directory(const char *path);

/* A set of cases, sorted by file name. */
struct cf_case_set {
    struct cf_case *cases;
    size_t count;
};
/* Load every *.case file of dir and of its subfolders (one per protocol:
 * cases/NAME/ holds module NAME's; a case in a folder named after a protocol must
 * name that protocol), and every capture case (NAME.meta with NAME.pcapng
 * or NAME.pcap, for the modules that have them). Returns 0, or -1 with the
 * first error. */
int cf_case_set_load_dir(const char *dir, struct cf_case_set *set, char *err, size_t errlen);
void cf_case_set_free(struct cf_case_set *set);
/* Free what a case owns (a capture case's PDUs). */
void cf_case_free(struct cf_case *c);
/* The steps a capture case compiles to, as `vitcp-conform show` prints
 * them, with the module's type and field names; send_note (or NULL) adds a
 * module's words to a recorded send ("wrong VTag"). */
void cf_case_describe(FILE *out, const struct cf_case *c, const char *(*send_note)(const struct cf_step *st));

/* Does the case match a selector: its id, one of its requirement IDs, a
 * requirement ID prefix ending in '*', or its section ("4.3" also matches
 * "4.3.x")? */
bool cf_case_matches(const struct cf_case *c, const char *selector);
/* Does c list requirement r? */
bool cf_case_has_req(const struct cf_case *c, enum vw_req r);
/* List r among c's requirements, once (while there is room). */
void cf_case_add_req(struct cf_case *c, enum vw_req r);

#endif
