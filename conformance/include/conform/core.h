/*
 * The protocol-neutral core's services for protocol modules
 * (conformance/src/core/): the clock, connections to the target (direct
 * or through the packet relay), the listen mode's connect command, result
 * building, for the generic step runner (core/runner.c) and a module's
 * run_case or survival probe (protocol.h).
 */
#ifndef CONFORM_CORE_H
#define CONFORM_CORE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <time.h>
#include "conform/case.h"
#include "conform/engine.h"
#include "conform/report.h"

/* The clock (CLOCK_MONOTONIC). */
struct timespec cf_now(void);
struct timespec cf_after_ms(unsigned ms);
int cf_ms_until(struct timespec t);            /* 0..600000 */
double cf_seconds_since(struct timespec t);

/* A TCP connection to the target (e->host, e->port), non-blocking, no
 * Nagle, urgent data inline. fd, or -1 with the reason. */
int cf_connect_target(struct cf_engine *e, unsigned timeout_ms, char *why, size_t whylen);
/* No Nagle delay; urgent data kept in the stream (an accepted socket). */
void cf_tune_socket(int fd);
/* The same through the packet relay (relay.h). */
int cf_connect_relayed(struct cf_engine *e, unsigned timeout_ms, char *why, size_t whylen);
/* Can active / passive cases use the relay? Decided once per run (the
 * reason in e->relay_why_active / relay_why_passive). */
bool cf_relay_ready_active(struct cf_engine *e);
bool cf_relay_ready_passive(struct cf_engine *e);
/* Listen mode: start the --connect-cmd for one case ({host} replaced by
 * host) in its own process group; stop it (SIGTERM, then SIGKILL). */
pid_t cf_spawn_connector(struct cf_engine *e, const char *host, char *why, size_t whylen);
void cf_stop_connector(pid_t pid);

/* Record the connection fd as a TCP flow in e->capture (handshake
 * written); the tester is the client unless passive. false: no capture. */
struct vn_tcp_flow;
bool cf_capture_flow_open(struct cf_engine *e, int fd, bool passive, struct vn_tcp_flow *flow);

/* Datagram protocols (C47): tester link n's UDP socket, non-blocking,
 * bound where e->links[n] says; where the link sends in *to (*to_len 0:
 * nowhere, a link that only listens). fd, or -1 with the reason. */
int cf_dgram_open(struct cf_engine *e, unsigned n, struct sockaddr_storage *to, socklen_t *to_len, char *why,
                  size_t whylen);
/* Record one datagram of link socket fd in e->capture as UDP between the
 * real addresses: out (the tester sent it to peer) or in (peer sent it). */
void cf_capture_datagram(struct cf_engine *e, int fd, const struct sockaddr *peer, socklen_t peer_len, bool out,
                         const uint8_t *data, size_t len);

/* A result for case c before it runs: verdict pass, its requirements,
 * protocol and level. */
void cf_result_init(struct cf_result *res, const struct cf_case *c);

/* Payload byte i of pattern fill (send ... fill=N): every module fills
 * payloads the same way. */
static inline uint8_t cf_pattern_byte(size_t i, unsigned fill)
{
    return (uint8_t)((i * 7u + 3u + fill * 101u) & 0xFFu);
}

/* The generic step runner (core/runner.c): runs c through its module's
 * encode / session / field accessor hooks. */
void cf_generic_run_case(struct cf_engine *e, const struct cf_case *c, struct cf_result *res);
/* A question to the target outside the evidence (a module's survival
 * probe, a level it offers): c runs without the capture and the relay,
 * and the target's broken rules do not count. 0 it passed, else -1 with
 * its result's message in why. */
int cf_generic_probe(struct cf_engine *e, const struct cf_case *c, char *why, size_t whylen);
/* Survival probe of a module without check_alive: a TCP connection is
 * accepted. 0, or -1 with the reason. */
int cf_generic_check_alive(struct cf_engine *e, char *why, size_t whylen);

#endif
