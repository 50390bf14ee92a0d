/*
 * Topologies the tester makes itself (run --topology, C54): the node(s)
 * under test of a datagram protocol with an Ethertype, each in a
 * network namespace of its own, joined to the tester and to each other by
 * veth pairs:
 *
 *   end     tester link 0 = node 0 interface 0
 *   router  tester link 0 = node 0 interface 0, node 0 interface 1 = tester link 1
 *   chain   tester link 0 = node 0 interface 0, node 0 interface 1 = node 1
 *           interface 0, node 1 interface 1 = tester link 1
 *
 * Each node is started from its command template (--node-cmd, given once,
 * or twice for a chain: node 0's, node 1's) with placeholders replaced:
 * {ifN} the node's interface N (always "veth0", "veth1": the namespace is the
 * node's own), {macN} its MAC, {peerN} the MAC at the other end of that
 * interface (the tester's or the other node's). The command runs under
 * /bin/sh -c in its own process group; its output (stdout and stderr) goes
 * to a log file (--node-log, else a temporary one unlinked at once and read
 * through its descriptor). The node is ready when a line of its log matches
 * --node-ready (POSIX extended regex), within --node-wait seconds; without
 * --node-ready, when it still runs half a second after its start.
 *
 * Nothing is left behind: a node's namespace is made by the node's own
 * process (unshare before exec), so it, its interfaces and the veth pairs
 * end with the node's processes; the tester ends the nodes (SIGTERM, then
 * SIGKILL) on close and on SIGINT/SIGTERM/SIGHUP; a node's first process
 * is killed by the kernel if the tester dies (PR_SET_PDEATHSIG). Needs
 * root (CAP_SYS_ADMIN, CAP_NET_ADMIN) and iproute2's ip(8).
 */
#ifndef CONFORM_TOPOLOGY_H
#define CONFORM_TOPOLOGY_H

#include <stdbool.h>
#include <stddef.h>

struct cf_engine;

enum cf_topo_kind { CF_TOPO_END, CF_TOPO_ROUTER, CF_TOPO_CHAIN, CF_TOPO_KINDS };

#define CF_TOPO_NODES_MAX 2

struct cf_topology_spec {
    enum cf_topo_kind kind;
    const char *node_cmd[CF_TOPO_NODES_MAX]; /* a chain: two; else one */
    unsigned ncmd;
    const char *ready_regex;                  /* NULL: running after 500 ms */
    unsigned wait_ms;                          /* readiness bound (default 10000) */
    const char *log_path;                      /* NULL: temporary files, removed */
};

struct cf_topology;

/* "end", "router", "chain": 0, or -1. */
int cf_topology_kind_parse(const char *name, enum cf_topo_kind *out);
const char *cf_topology_kind_name(enum cf_topo_kind k);
/* How many nodes a topology has (a chain 2). */
unsigned cf_topology_nodes(enum cf_topo_kind k);

/* Replace the placeholders of a command template for node `node` of a
 * topology of kind k: 0, or -1 (an unknown placeholder, or out too small)
 * with the reason. */
int cf_topology_expand(enum cf_topo_kind k, unsigned node, const char *tmpl, char *out, size_t outlen, char *why,
                       size_t whylen);

/* Make the namespaces and pairs, start the nodes, wait for them, and set
 * the engine's tester links (eth:IF,MAC) to them. NULL with the reason;
 * *env_failed says the namespaces or pairs could not be made (not root, no
 * namespaces here: the cases are skipped) rather than the node failing to
 * start. */
struct cf_topology *cf_topology_open(const struct cf_topology_spec *spec, struct cf_engine *e, bool *env_failed,
                                     char *why, size_t whylen);
/* End the nodes (SIGTERM, up to 5 s, SIGKILL), remove what is left, the
 * descriptors of the logs. NULL is fine. */
void cf_topology_close(struct cf_topology *t);

#endif
