/* Connections: to the target (directly or through the packet relay), the
 * listen mode's socket and its connect command. Nothing here knows a
 * protocol. */
#include "conform/core.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "conform/relay.h"

/* No Nagle delay; urgent data kept in the stream (its mark is checked, 3.7). */
void cf_tune_socket(int fd)
{
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    setsockopt(fd, SOL_SOCKET, SO_OOBINLINE, &one, sizeof one);
}

/* Connect fd (non-blocking) to a within timeout_ms. 0, or an errno value. */
static int connect_within(int fd, const struct sockaddr *a, socklen_t alen, unsigned timeout_ms)
{
    if (connect(fd, a, alen) < 0 && errno != EINPROGRESS)
        return errno;
    struct pollfd p = {fd, POLLOUT, 0};
    int n = poll(&p, 1, (int)timeout_ms);
    int err = 0;
    socklen_t len = sizeof err;
    if (n <= 0)
        return n == 0 ? ETIMEDOUT : errno;
    if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0)
        return errno;
    return err;
}

int cf_connect_target(struct cf_engine *e, unsigned timeout_ms, char *why, size_t whylen)
{
    struct addrinfo hints = {0}, *ai = NULL;
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    int rc = getaddrinfo(e->host, e->port, &hints, &ai);
    if (rc != 0) {
        snprintf(why, whylen, "cannot resolve %s: %s", e->host, gai_strerror(rc));
        return -1;
    }
    int fd = -1;
    int err = 0;
    for (struct addrinfo *a = ai; a && fd < 0; a = a->ai_next) {
        fd = socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
        if (fd < 0) {
            err = errno;
            continue;
        }
        if ((err = connect_within(fd, a->ai_addr, a->ai_addrlen, timeout_ms)) != 0) {
            close(fd);
            fd = -1;
        }
    }
    freeaddrinfo(ai);
    if (fd < 0) {
        snprintf(why, whylen, "cannot connect to %s:%s: %s", e->host, e->port, strerror(err));
        return -1;
    }
    cf_tune_socket(fd);
    return fd;
}

/* The target through the packet relay: from the tester's namespace to the
 * relay's address of the target's host. */
int cf_connect_relayed(struct cf_engine *e, unsigned timeout_ms, char *why, size_t whylen)
{
    struct sockaddr_in sin = {.sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(e->port))};
    inet_pton(AF_INET, cf_relay_target_addr(e->relay), &sin.sin_addr);
    int fd = cf_relay_socket(e->relay, AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    int err = fd < 0 ? errno : connect_within(fd, (const struct sockaddr *)&sin, sizeof sin, timeout_ms);
    if (err) {
        snprintf(why, whylen, "cannot connect through the packet relay to %s:%s: %s (the target must listen "
                 "on all of this host's addresses)", cf_relay_target_addr(e->relay), e->port, strerror(err));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    cf_tune_socket(fd);
    return fd;
}

/* Is host an address of this machine (so the relay can reach it)? */
static bool host_is_local(const char *host)
{
    struct addrinfo hints = {0}, *ai = NULL;
    hints.ai_family = AF_INET;
    hints.ai_socktype = SOCK_STREAM;
    if (getaddrinfo(host, NULL, &hints, &ai) != 0)
        return false;
    bool local = false;
    for (struct addrinfo *a = ai; a && !local; a = a->ai_next) {
        int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        if (s >= 0) {
            local = bind(s, a->ai_addr, a->ai_addrlen) == 0;
            close(s);
        }
    }
    freeaddrinfo(ai);
    return local;
}

/* Create the relay once; false (reason in why) when there is none. */
static bool relay_open_once(struct cf_engine *e, char *why, size_t whylen)
{
    if (e->relay)
        return true;
    if (e->relay_open_failed[0]) {
        snprintf(why, whylen, "%s", e->relay_open_failed);
        return false;
    }
    char reason[256];
    e->relay = e->use_relay ? cf_relay_open(reason, sizeof reason) : NULL;
    if (!e->relay)
        snprintf(e->relay_open_failed, sizeof e->relay_open_failed, "%s%s",
                 e->use_relay ? "no packet relay: " : "the packet relay is off (--no-relay)",
                 e->use_relay ? reason : "");
    snprintf(why, whylen, "%s", e->relay_open_failed);
    return e->relay != NULL;
}

/* Can active cases use the relay? Decided at the first one: the target
 * must be on this host and answer at the relay's address of it. */
bool cf_relay_ready_active(struct cf_engine *e)
{
    if (e->relay_active)
        return e->relay_active > 0;
    e->relay_active = -1;
    if (!e->use_relay) {
        snprintf(e->relay_why_active, sizeof e->relay_why_active, "the packet relay is off (--no-relay)");
        return false;
    }
    if (!host_is_local(e->host)) {
        snprintf(e->relay_why_active, sizeof e->relay_why_active,
                 "the packet relay reaches only a target on this host (%s is not an IPv4 address of it)",
                 e->host);
        return false;
    }
    if (!relay_open_once(e, e->relay_why_active, sizeof e->relay_why_active))
        return false;
    int fd = cf_connect_relayed(e, e->slack_ms, e->relay_why_active, sizeof e->relay_why_active);
    if (fd < 0)
        return false;
    close(fd);
    /* Let the probe's closing segments pass before a case's recording starts. */
    struct timespec pause = {0, 30L * 1000000L};
    nanosleep(&pause, NULL);
    e->relay_active = 1;
    return true;
}

/* Can passive cases use the relay? The tester listens in its namespace, on
 * its relay address and the --listen port, and the connect command must
 * say where to connect with {host}. */
bool cf_relay_ready_passive(struct cf_engine *e)
{
    if (e->relay_passive)
        return e->relay_passive > 0;
    e->relay_passive = -1;
    if (!strstr(e->connect_cmd, "{host}")) {
        snprintf(e->relay_why_passive, sizeof e->relay_why_passive,
                 "--connect-cmd must connect to {host}:{port} for cases through the packet relay");
        return false;
    }
    if (!relay_open_once(e, e->relay_why_passive, sizeof e->relay_why_passive))
        return false;
    int fd = cf_relay_socket(e->relay, AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int one = 1;
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(e->listen_port)};
    inet_pton(AF_INET, cf_relay_tester_addr(e->relay), &a.sin_addr);
    if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) < 0 ||
        bind(fd, (struct sockaddr *)&a, sizeof a) < 0 || listen(fd, 8) < 0) {
        snprintf(e->relay_why_passive, sizeof e->relay_why_passive, "cannot listen on %s:%u behind the relay: %s",
                 cf_relay_tester_addr(e->relay), e->listen_port, strerror(errno));
        if (fd >= 0)
            close(fd);
        return false;
    }
    e->relay_listen_fd = fd;
    e->relay_passive = 1;
    return true;
}

/* Resolve host:port for a datagram socket (family: AF_UNSPEC or the one
 * wanted). 0, or -1 with the reason. */
static int resolve_dgram(const char *host, const char *port, int family, bool passive,
                         struct sockaddr_storage *out, socklen_t *out_len, char *why, size_t whylen)
{
    struct addrinfo hints = {0}, *ai = NULL;
    hints.ai_family = family;
    hints.ai_socktype = SOCK_DGRAM;
    hints.ai_flags = passive ? AI_PASSIVE : 0;
    int rc = getaddrinfo(host && host[0] ? host : NULL, port && port[0] ? port : "0", &hints, &ai);
    if (rc != 0 || !ai || ai->ai_addrlen > sizeof *out) {
        snprintf(why, whylen, "cannot resolve %s:%s: %s", host && host[0] ? host : "*", port && port[0] ? port : "0",
                 rc ? gai_strerror(rc) : "no address");
        if (ai)
            freeaddrinfo(ai);
        return -1;
    }
    memset(out, 0, sizeof *out);
    memcpy(out, ai->ai_addr, ai->ai_addrlen);
    *out_len = ai->ai_addrlen;
    freeaddrinfo(ai);
    return 0;
}

/* An Ethernet link: a packet socket for the module's Ethertype on the
 * link's interface (root or CAP_NET_RAW), sending to its MAC. */
static int eth_open(struct cf_engine *e, unsigned n, struct sockaddr_storage *to, socklen_t *to_len, char *why,
                    size_t whylen)
{
    const struct cf_link *l = &e->links[n];
    uint16_t type = e->protocol->ethertype;
    if (!type) {
        snprintf(why, whylen, "%s has no Ethertype: link %u cannot be Ethernet", e->protocol->title, n);
        return -1;
    }
    unsigned idx = if_nametoindex(l->eth_if);
    if (!idx) {
        snprintf(why, whylen, "tester link %u: no interface %s", n, l->eth_if);
        return -1;
    }
    int fd = socket(AF_PACKET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, htons(type));
    if (fd < 0) {
        snprintf(why, whylen, "tester link %u: a packet socket: %s (raw Ethernet needs root or CAP_NET_RAW)", n,
                 strerror(errno));
        return -1;
    }
    struct sockaddr_ll sll = {.sll_family = AF_PACKET, .sll_protocol = htons(type), .sll_ifindex = (int)idx};
    if (bind(fd, (struct sockaddr *)&sll, sizeof sll) < 0) {
        snprintf(why, whylen, "tester link %u cannot bind to %s: %s", n, l->eth_if, strerror(errno));
        close(fd);
        return -1;
    }
    sll.sll_halen = 6;
    memcpy(sll.sll_addr, l->eth_dst, 6);
    memset(to, 0, sizeof *to);
    memcpy(to, &sll, sizeof sll);
    *to_len = sizeof sll;
    return fd;
}

int cf_dgram_open(struct cf_engine *e, unsigned n, struct sockaddr_storage *to, socklen_t *to_len, char *why,
                  size_t whylen)
{
    *to_len = 0;
    if (n >= CF_MAX_LINKS || (n > 0 && !e->links[n].set)) {
        snprintf(why, whylen, "tester link %u is not configured (run --link %u=[ADDR:]PORT[,HOST:PORT])", n, n);
        return -1;
    }
    const struct cf_link *l = &e->links[n];
    if (l->eth_if[0])
        return eth_open(e, n, to, to_len, why, whylen);
    const char *host = l->host[0] ? l->host : n == 0 ? e->host : "";
    const char *port = l->port[0] ? l->port : n == 0 ? e->port : "";
    int family = AF_UNSPEC;
    if (host[0]) {
        if (resolve_dgram(host, port, AF_UNSPEC, false, to, to_len, why, whylen) < 0)
            return -1;
        family = to->ss_family;
    }
    struct sockaddr_storage local;
    socklen_t local_len;
    if (resolve_dgram(l->bind_host, l->bind_port, family == AF_UNSPEC ? AF_INET : family, true, &local, &local_len,
                      why, whylen) < 0)
        return -1;
    int fd = socket(local.ss_family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        snprintf(why, whylen, "socket: %s", strerror(errno));
        return -1;
    }
    if (bind(fd, (struct sockaddr *)&local, local_len) < 0) {
        snprintf(why, whylen, "tester link %u cannot bind %s:%s: %s", n, l->bind_host[0] ? l->bind_host : "*",
                 l->bind_port[0] ? l->bind_port : "0", strerror(errno));
        close(fd);
        return -1;
    }
    return fd;
}

int cf_engine_probe(struct cf_engine *e, char *why, size_t whylen)
{
    if (e->protocol->transport == CF_TRANSPORT_DATAGRAM) {
        /* no connection to try: every configured link can be opened */
        for (unsigned n = 0; n < CF_MAX_LINKS; n++) {
            if (n > 0 && !e->links[n].set)
                continue;
            struct sockaddr_storage to;
            socklen_t tl;
            int fd = cf_dgram_open(e, n, &to, &tl, why, whylen);
            if (fd < 0)
                return -1;
            close(fd);
        }
        return 0;
    }
    return cf_generic_check_alive(e, why, whylen); /* a TCP connection is accepted */
}

int cf_engine_listen(struct cf_engine *e, const char *port, char *why, size_t whylen)
{
    char *end;
    long p = strtol(port, &end, 10);
    if (!*port || *end || p < 0 || p > 65535) {
        snprintf(why, whylen, "bad listen port '%s'", port);
        return -1;
    }
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        snprintf(why, whylen, "socket: %s", strerror(errno));
        return -1;
    }
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)p),
                            .sin_addr.s_addr = htonl(INADDR_ANY)};
    socklen_t al = sizeof a;
    if (bind(fd, (struct sockaddr *)&a, sizeof a) < 0 || listen(fd, 8) < 0 ||
        getsockname(fd, (struct sockaddr *)&a, &al) < 0) {
        snprintf(why, whylen, "cannot listen on port %ld: %s", p, strerror(errno));
        close(fd);
        return -1;
    }
    if (e->listen_fd >= 0)
        close(e->listen_fd);
    e->listen_fd = fd;
    e->listen_port = ntohs(a.sin_port);
    return 0;
}

void cf_engine_close(struct cf_engine *e)
{
    if (e->listen_fd >= 0)
        close(e->listen_fd);
    e->listen_fd = -1;
    if (e->relay_listen_fd >= 0)
        close(e->relay_listen_fd);
    e->relay_listen_fd = -1;
    cf_relay_close(e->relay);
    e->relay = NULL;
    e->relay_open_failed[0] = 0;
    e->relay_active = e->relay_passive = 0;
}

/* The environment of a connect command: ours, with the port and host of
 * this case set (built before the spawn: see cf_spawn_connector). NULL when
 * out of memory; free the array only, its strings are environ's or *set. */
static char **connector_env(char set[2][300], const char *port, const char *host)
{
    size_t n = 0;
    while (environ[n])
        n++;
    char **env = calloc(n + 3, sizeof *env);
    if (!env)
        return NULL;
    size_t o = 0;
    for (size_t i = 0; i < n; i++)
        if (strncmp(environ[i], "VITCP_CONFORM_PORT=", 19) != 0 && strncmp(environ[i], "VITCP_CONFORM_HOST=", 19) != 0)
            env[o++] = environ[i];
    snprintf(set[0], sizeof set[0], "VITCP_CONFORM_PORT=%s", port);
    snprintf(set[1], sizeof set[1], "VITCP_CONFORM_HOST=%s", host);
    env[o++] = set[0];
    env[o++] = set[1];
    return env;
}

/* Start the --connect-cmd (with {port} replaced) in its own process group.
 * posix_spawn, not fork: the relay's thread may hold the allocator's lock
 * at the fork, and a child that then allocates (setenv did) never got to
 * exec; the case timed out waiting for its connection. */
pid_t cf_spawn_connector(struct cf_engine *e, const char *host, char *why, size_t whylen)
{
    char cmd[sizeof e->connect_cmd + 256], port[8];
    snprintf(port, sizeof port, "%u", e->listen_port);
    size_t o = 0;
    for (const char *c = e->connect_cmd; *c && o + 24 < sizeof cmd;) {
        if (strncmp(c, "{port}", 6) == 0) {
            o += (size_t)snprintf(cmd + o, sizeof cmd - o, "%s", port);
            c += 6;
        } else if (strncmp(c, "{host}", 6) == 0) {
            o += (size_t)snprintf(cmd + o, sizeof cmd - o, "%s", host);
            c += 6;
        } else {
            cmd[o++] = *c++;
        }
    }
    cmd[o] = 0;
    char set[2][300];
    char **env = connector_env(set, port, host);
    if (!env) {
        snprintf(why, whylen, "out of memory");
        return -1;
    }
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t at;
    posix_spawn_file_actions_init(&fa);
    posix_spawnattr_init(&at);
    posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
    posix_spawnattr_setpgroup(&at, 0);
    posix_spawnattr_setflags(&at, POSIX_SPAWN_SETPGROUP);
    char *argv[] = {"sh", "-c", cmd, NULL};
    fflush(NULL);
    pid_t pid;
    int rc = posix_spawn(&pid, "/bin/sh", &fa, &at, argv, env);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&at);
    free(env);
    if (rc != 0) {
        snprintf(why, whylen, "cannot start the connect command: %s", strerror(rc));
        return -1;
    }
    return pid;
}

void cf_stop_connector(pid_t pid)
{
    if (pid <= 0)
        return;
    kill(-pid, SIGTERM);
    for (int i = 0; i < 100; i++) {
        if (waitpid(pid, NULL, WNOHANG) == pid)
            return;
        usleep(10000);
    }
    kill(-pid, SIGKILL);
    waitpid(pid, NULL, 0);
}
