/*
 * The active engine (core/engine.c, protocol-neutral): its settings, one
 * case (its module's run_case or the core's generic step runner,
 * core/runner.c, which says how a case runs; then the verdict rules every
 * protocol shares) and a suite of cases with the run's test conventions.
 */
#ifndef CONFORM_ENGINE_H
#define CONFORM_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include "conform/case.h"
#include "conform/protocol.h"
#include "conform/report.h"

struct vn_pcap_writer;

#define CF_DEFAULT_SLACK_MS 2000 /* V21: allowed beyond an expected reaction */
#define CF_HOOKS_MAX 16          /* test conventions a run keeps track of (C60) */

struct cf_engine {
    const struct conform_protocol *protocol; /* the cases a suite runs (run --protocol; default: cf_protocol_default) */
    char host[256];
    char port[16];
    unsigned slack_ms;           /* default wait for an expect / a close */
    struct vn_pcap_writer *capture; /* NULL: no recording */
    bool check_survival;         /* after hostile cases, try a fresh connection */
    bool have_target;            /* active cases run (set by cf_engine_set_target) */
    /* Every case is skipped with this reason (run --topology where no
     * namespace can be made, C54); "" : cases run. */
    char skip_all[400];
    /* The target's RDMA region given on the command line (--region); a
     * module may also learn it from the target (an announcement, C8). */
    bool region_set;
    uint64_t region_addr;
    uint32_t region_handle, region_len;
    /* Listen mode: passive cases (role passive) accept the implementation's
     * connection; connect_cmd ("{port}" and "{host}" replaced, also in
     * $VITCP_CONFORM_PORT and $VITCP_CONFORM_HOST; host is 127.0.0.1, or the
     * tester's relay address for cases through the relay) is started for
     * each case in its own process group and ended after it. */
    int listen_fd;               /* -1: no listen mode */
    unsigned short listen_port;
    char connect_cmd[1024];
    unsigned accept_ms;          /* wait for the implementation to connect */
    /* The packet relay (relay.h) for 'relay' cases: opened at the first
     * such case unless use_relay is off. Whether each role can use it is
     * decided once (relay_active/relay_passive: 0 not yet, 1 yes, -1 no,
     * the reason in relay_why_*); cases that cannot are skipped. */
    bool use_relay;
    bool relay_all;              /* every case through the relay (--relay-all) */
    struct cf_impair impair;     /* --impair (C61): what the relay does to every packet */
    struct cf_relay *relay;
    char relay_open_failed[300];
    int relay_active, relay_passive;
    char relay_why_active[400], relay_why_passive[400];
    int relay_listen_fd;         /* passive cases: the tester's listener behind the relay */
    /* Datagram protocols (C47): the tester's links. Link 0 sends to
     * host:port; every link binds to bind_host:bind_port when set (a node
     * under test whose peers are configured must know the tester's
     * addresses), else to any port. */
    struct cf_link {
        bool set;                /* --link N=... given (link 0: always usable) */
        char bind_host[64];      /* "" : any address */
        char bind_port[16];      /* "" : any port */
        char host[256], port[16]; /* where the link sends; "" (link 0: host/port) */
        /* an Ethernet link (--link N=eth:IF[,MAC]): raw frames of the
         * module's Ethertype on interface eth_if, to eth_dst (default
         * broadcast) */
        char eth_if[16];
        uint8_t eth_dst[6];
    } links[CF_MAX_LINKS];
    /* Test conventions (C60, core/hooks.c): what `run --offers` declared
     * and what each hook's probe found, by name; the run's cases and
     * report, so that a probe runs before the first case needing it. */
    struct cf_hook_state {
        char name[CF_HOOK_NAME_MAX];
        int declared;            /* --offers: 1 offered, 0 not, -1 not said */
        int offered;             /* 1, 0, -1 not settled yet */
        bool probing;            /* its probe is running (a cycle of probes) */
        bool probe_done;         /* its probe case ran (and is in the report if selected) */
        bool inconclusive;       /* its probe's evidence was destroyed (run --impair, C61) */
        char how[400];           /* how it was settled, for messages and the report */
    } hooks[CF_HOOKS_MAX];
    unsigned nhooks;
    bool offers_none;            /* --offers none: every hook not named is not offered */
    const struct cf_case_set *suite;
    const char *const *suite_only, *const *suite_skip;
    struct cf_report *report;
    /* Each registered module's settings and per-run state (protocol.h
     * state_init, set_option), by its place in cf_protocols. */
    _Alignas(max_align_t) unsigned char proto_state[CF_PROTOCOLS_MAX][CF_PROTO_STATE_MAX];
    /* The output of the node under test (C90): node 0's, from the node the
     * tester started (run --topology, core/topology.c) or a file a module
     * option names; -1 none. node_log_regex: the line an expect-log step
     * waits for, set by the module for its cases (a delivery log pattern);
     * NULL none. */
    int node_log_fd;
    const char *node_log_regex;
};

/* Defaults; then parse "HOST:PORT" ("[v6]:PORT" too). Returns 0 or -1. */
void cf_engine_init(struct cf_engine *e);
int cf_engine_set_target(struct cf_engine *e, const char *host_port);

/* "N=[ADDR:]PORT[,HOST:PORT]", "N=,HOST:PORT" or "N=eth:IF[,MAC]": tester
 * link N of a datagram protocol (C47). 0, or -1 with the reason. */
int cf_engine_set_link(struct cf_engine *e, const char *spec, char *why, size_t whylen);

/* A module's state in the engine (protocol.h); NULL for a protocol not
 * registered. */
void *cf_engine_state(struct cf_engine *e, const struct conform_protocol *p);
/* A run option of some module ("--discriminator", value, or NULL for a
 * flag): 1 set, 0 no module has it, -1 bad value (why). *takes_value (may
 * be NULL) says whether it takes a value (asked with value NULL and
 * takes_value non-NULL, nothing is set). */
int cf_engine_set_option(struct cf_engine *e, const char *name, const char *value, bool *takes_value, char *why,
                         size_t whylen);

/* Test conventions (C60, core/hooks.c). `run --offers LIST`: "echo,
 * rdma-echo" offered, "-echo" not, "none" none but those named; 0, or -1
 * with the reason. Checked against the run's protocol by
 * cf_engine_check_offers once the command line is read. */
int cf_engine_set_offers(struct cf_engine *e, const char *list, char *why, size_t whylen);
int cf_engine_check_offers(const struct cf_engine *e, char *why, size_t whylen);
/* The hook's place in e->hooks, or -1. */
int cf_engine_hook_index(const struct cf_engine *e, const char *name);
/* Is the hook offered (1), not (0), or not settled yet (-1)? */
int cf_engine_hook_offered(const struct cf_engine *e, const char *name);
/* Settle every hook case c names (needs, when) before it runs: declared,
 * a module's option, else its probe case (run now, into the report when
 * the run selected it). */
void cf_engine_settle_hooks(struct cf_engine *e, const struct cf_case *c);
/* Does c need a hook the target does not offer? true, with the reason;
 * *inconclusive when it is not known because the impairment
 * destroyed the probe's evidence (the case is then inconclusive too). */
bool cf_engine_hooks_missing(const struct cf_engine *e, const struct cf_case *c, char *why, size_t whylen,
                             bool *inconclusive);
/* After case c ran, if it is a probe (c->provides): the hook's state from
 * its result, and the result itself turned not applicable when the target
 * simply does not offer the convention. */
void cf_engine_probe_done(struct cf_engine *e, const struct cf_case *c, struct cf_result *res);
/* A probe case not to run: its hook is declared not offered (why). */
bool cf_engine_probe_settled(struct cf_engine *e, const struct cf_case *c, char *why, size_t whylen);

/* Listen on port ("0": any; the chosen one is in listen_port). 0 or -1. */
int cf_engine_listen(struct cf_engine *e, const char *port, char *why, size_t whylen);
/* Close the listening socket and the packet relay. */
void cf_engine_close(struct cf_engine *e);

/* Run one case; fills res (verdict, frames, message). */
void cf_engine_run_case(struct cf_engine *e, const struct cf_case *c, struct cf_result *res);

/* Is anything listening at the target? 0 yes, -1 no (reason in why). */
int cf_engine_probe(struct cf_engine *e, char *why, size_t whylen);

/* Run every selected case of set (e->protocol's cases only; active cases when a target is set,
 * passive ones in listen mode) (only/skip: selectors for cf_case_matches,
 * NULL-terminated arrays or NULL), appending results to report. progress
 * (may be NULL) gets a progress bar when it is a terminal, else one line
 * per case. */
void cf_engine_run_suite(struct cf_engine *e, const struct cf_case_set *set,
                         const char *const *only, const char *const *skip,
                         struct cf_report *report, FILE *progress);
/* Is c one of the suite's cases: of its protocol and mode, and chosen by
 * its only/skip selectors (e->suite_only, e->suite_skip)? */
bool cf_engine_selected(const struct cf_engine *e, const struct cf_case *c);

#endif
