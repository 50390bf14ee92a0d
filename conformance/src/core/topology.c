/* Topologies the tester makes itself (see conform/topology.h, C54). */
#include "conform/topology.h"

#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <regex.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "conform/core.h"

#define CMD_MAX 4096
#define LOG_SCAN_MAX (1u << 20) /* bytes of a node's log searched for readiness */
#define STOP_WAIT_MS 5000

struct topo_node {
    pid_t pid; /* also its process group; 0: none */
    int log_fd;
    char log_path[4096];
    bool ready;
};

struct cf_topology {
    enum cf_topo_kind kind;
    unsigned nnodes, nlinks;
    struct topo_node node[CF_TOPO_NODES_MAX];
    char near[2][IF_NAMESIZE]; /* the tester's ends, "" until made */
    struct sigaction old[3]; /* the handlers before cf_topology_open's */
};

static const int caught_signals[3] = {SIGINT, SIGTERM, SIGHUP};
/* The nodes' process groups, for the signal handler. */
static volatile sig_atomic_t live_group[CF_TOPO_NODES_MAX];

static const char *const kind_names[CF_TOPO_KINDS] = {"end", "router", "chain"};

int cf_topology_kind_parse(const char *name, enum cf_topo_kind *out)
{
    for (unsigned k = 0; k < CF_TOPO_KINDS; k++)
        if (strcmp(name, kind_names[k]) == 0) {
            *out = (enum cf_topo_kind)k;
            return 0;
        }
    return -1;
}

const char *cf_topology_kind_name(enum cf_topo_kind k)
{
    return (unsigned)k < CF_TOPO_KINDS ? kind_names[k] : "?";
}

unsigned cf_topology_nodes(enum cf_topo_kind k)
{
    return k == CF_TOPO_CHAIN ? 2 : 1;
}

static unsigned node_ifaces(enum cf_topo_kind k)
{
    return k == CF_TOPO_END ? 1 : 2;
}

/* MACs: the tester's end of link L 02:00:00:00:ee:0L, node N's interface
 * I 02:00:00:00:ee:(N+1)I: fixed, as each pair is a link of its own. */
static void tester_mac(unsigned link, char *out, size_t n)
{
    snprintf(out, n, "02:00:00:00:ee:0%c", (char)('0' + link % 10u));
}

static void node_mac(unsigned node, unsigned iface, char *out, size_t n)
{
    snprintf(out, n, "02:00:00:00:ee:%c%c", (char)('1' + node % 9u), (char)('0' + iface % 10u));
}

/* The MAC at the other end of node's interface iface. */
static void peer_mac(enum cf_topo_kind k, unsigned node, unsigned iface, char *out, size_t n)
{
    if (k == CF_TOPO_CHAIN && node == 0 && iface == 1)
        node_mac(1, 0, out, n);
    else if (k == CF_TOPO_CHAIN && node == 1 && iface == 0)
        node_mac(0, 1, out, n);
    else
        tester_mac(iface, out, n);
}

int cf_topology_expand(enum cf_topo_kind k, unsigned node, const char *tmpl, char *out, size_t outlen, char *why,
                       size_t whylen)
{
    size_t o = 0;
    for (const char *p = tmpl; *p;) {
        char val[32] = "";
        size_t used = 0;
        unsigned i;
        int len = 0;
        if (*p == '{') {
            char word[8] = "";
            bool placeholder = sscanf(p, "{%7[a-z]%u}%n", word, &i, &len) == 2 && len > 0 && i < node_ifaces(k);
            if (placeholder && strcmp(word, "if") == 0) {
                snprintf(val, sizeof val, "veth%u", i);
            } else if (placeholder && strcmp(word, "mac") == 0) {
                node_mac(node, i, val, sizeof val);
            } else if (placeholder && strcmp(word, "peer") == 0) {
                peer_mac(k, node, i, val, sizeof val);
            } else {
                snprintf(why, whylen,
                         "--node-cmd: unknown placeholder at '%.20s' (a %s node has {if0}%s, {mac0}%s, {peer0}%s)", p,
                         kind_names[k], node_ifaces(k) > 1 ? " {if1}" : "", node_ifaces(k) > 1 ? " {mac1}" : "",
                         node_ifaces(k) > 1 ? " {peer1}" : "");
                return -1;
            }
            used = (size_t)len;
        } else {
            val[0] = *p;
            val[1] = 0;
            used = 1;
        }
        size_t vl = strlen(val);
        if (o + vl >= outlen) {
            snprintf(why, whylen, "--node-cmd: the command is too long");
            return -1;
        }
        memcpy(out + o, val, vl);
        o += vl;
        p += used;
    }
    out[o] = 0;
    return 0;
}

/* ------------------------------------------------------------ helpers */

static void sleep_ms(unsigned ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) < 0 && errno == EINTR) {
    }
}

/* Run ip(8) with argv (argv[0] "ip"); 0, or -1 with its output in why. */
static int run_ip(char *const *argv, char *why, size_t whylen)
{
    int p[2];
    if (pipe2(p, O_CLOEXEC) < 0) {
        snprintf(why, whylen, "pipe: %s", strerror(errno));
        return -1;
    }
    pid_t pid = fork();
    if (pid < 0) {
        close(p[0]);
        close(p[1]);
        snprintf(why, whylen, "fork: %s", strerror(errno));
        return -1;
    }
    if (pid == 0) {
        dup2(p[1], 1);
        dup2(p[1], 2);
        static const char *const paths[] = {"/usr/sbin/ip", "/sbin/ip", "/usr/bin/ip", "/bin/ip"};
        for (size_t i = 0; i < sizeof paths / sizeof *paths; i++)
            execv(paths[i], argv);
        execvp("ip", argv);
        dprintf(2, "cannot run ip (iproute2): %s", strerror(errno));
        _exit(127);
    }
    close(p[1]);
    char out[512];
    size_t n = 0;
    for (;;) {
        ssize_t r = read(p[0], out + n, sizeof out - 1 - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        n += (size_t)r;
        if (n == sizeof out - 1) {
            char sink[256]; /* keep reading, so ip never blocks on a full pipe */
            while (read(p[0], sink, sizeof sink) > 0) {
            }
            break;
        }
    }
    out[n] = 0;
    close(p[0]);
    int st;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
    }
    if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
        return 0;
    while (n && (out[n - 1] == '\n' || out[n - 1] == ' '))
        out[--n] = 0;
    char cmd[300] = "";
    size_t c = 0;
    for (char *const *a = argv; *a && c < sizeof cmd - 1; a++)
        c += (size_t)snprintf(cmd + c, sizeof cmd - c, "%s%s", a == argv ? "" : " ", *a);
    snprintf(why, whylen, "%.200s: %.250s", cmd, n ? out : "failed");
    return -1;
}

static void on_signal(int sig)
{
    for (unsigned i = 0; i < CF_TOPO_NODES_MAX; i++)
        if (live_group[i] > 0)
            kill(-(pid_t)live_group[i], SIGKILL);
    signal(sig, SIG_DFL);
    raise(sig);
}

/* Bring every interface of this (the node's) namespace up, lo too. Runs
 * in the forked child, so it never allocates (another thread of the tester,
 * the relay's, may have held the allocator's lock at the fork): the names
 * come from /proc/self/net/dev read into the stack. */
static void all_up(void)
{
    int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    int f = open("/proc/self/net/dev", O_RDONLY | O_CLOEXEC);
    char buf[16384];
    size_t n = 0;
    ssize_t r;
    while (f >= 0 && n < sizeof buf - 1 && ((r = read(f, buf + n, sizeof buf - 1 - n)) > 0 || (r < 0 && errno == EINTR)))
        n += r > 0 ? (size_t)r : 0;
    buf[n] = 0;
    /* two header lines, then "  name: counters..." per interface */
    for (char *line = strchr(buf, '\n'); line && (line = strchr(line + 1, '\n'));) {
        char *name = line + 1, *colon = strchr(name, ':');
        if (!colon)
            break;
        while (*name == ' ')
            name++;
        struct ifreq ifr;
        memset(&ifr, 0, sizeof ifr);
        size_t len = (size_t)(colon - name);
        if (s < 0 || len == 0 || len >= sizeof ifr.ifr_name)
            continue;
        memcpy(ifr.ifr_name, name, len);
        if (ioctl(s, SIOCGIFFLAGS, &ifr) == 0) {
            ifr.ifr_flags |= IFF_UP;
            ioctl(s, SIOCSIFFLAGS, &ifr);
        }
    }
    if (f >= 0)
        close(f);
    if (s >= 0)
        close(s);
}

/* Start node n: a child in a network namespace of its own, waiting on
 * `go` before it runs cmd. 0; -1 with why (*env: the namespace failed). */
static int node_spawn(struct topo_node *nd, const char *cmd, int *go_fd, bool *env, char *why, size_t whylen)
{
    int ready[2] = {-1, -1}, go[2] = {-1, -1};
    pid_t parent = getpid();
    pid_t pid = -1;
    const char *failed = "pipe";
    if (pipe2(ready, O_CLOEXEC) == 0 && pipe2(go, O_CLOEXEC) == 0) {
        fflush(NULL);
        pid = fork();
        failed = pid < 0 ? "fork" : NULL;
    }
    if (failed) {
        snprintf(why, whylen, "%s: %s", failed, strerror(errno));
        const int fds[] = {ready[0], ready[1], go[0], go[1]};
        for (size_t i = 0; i < sizeof fds / sizeof *fds; i++)
            if (fds[i] >= 0)
                close(fds[i]);
        return -1;
    }
    if (pid == 0) {
        close(ready[0]);
        close(go[1]);
        setpgid(0, 0);
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        for (unsigned i = 0; i < 3; i++)
            signal(caught_signals[i], SIG_DFL);
        if (getppid() != parent)
            _exit(126);
        int err = unshare(CLONE_NEWNET) < 0 ? errno : 0;
        char msg[1 + sizeof err] = {err ? 'E' : 'R'};
        memcpy(msg + 1, &err, sizeof err);
        if (write(ready[1], msg, sizeof msg) != (ssize_t)sizeof msg || err)
            _exit(126);
        char g = 0;
        if (read(go[0], &g, 1) != 1 || g != 'G')
            _exit(126); /* the tester gave up */
        all_up();
        int null = open("/dev/null", O_RDONLY);
        if (null >= 0)
            dup2(null, 0);
        dup2(nd->log_fd, 1);
        dup2(nd->log_fd, 2);
        execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
        _exit(127);
    }
    setpgid(pid, pid); /* either side may get there first */
    nd->pid = pid;
    close(ready[1]);
    close(go[0]);
    char msg[1 + sizeof(int)];
    ssize_t r;
    while ((r = read(ready[0], msg, sizeof msg)) < 0 && errno == EINTR) {
    }
    close(ready[0]);
    if (r != (ssize_t)sizeof msg || msg[0] != 'R') {
        int err = 0;
        if (r == (ssize_t)sizeof msg)
            memcpy(&err, msg + 1, sizeof err);
        *env = true;
        snprintf(why, whylen, "cannot create a network namespace: %s (the topology needs root)",
                 err ? strerror(err) : "the child process failed");
        close(go[1]);
        return -1;
    }
    *go_fd = go[1];
    return 0;
}

/* The last non-empty line of a node's log, for messages. */
static void log_tail(const struct topo_node *nd, char *out, size_t n)
{
    snprintf(out, n, "(no output)");
    int fd = nd->log_fd;
    struct stat st;
    char buf[512];
    off_t from = fstat(fd, &st) == 0 && st.st_size > (off_t)sizeof buf - 1 ? st.st_size - (off_t)sizeof buf + 1 : 0;
    ssize_t r = pread(fd, buf, sizeof buf - 1, from);
    if (r <= 0)
        return;
    buf[r] = 0;
    size_t len = (size_t)r;
    while (len && (buf[len - 1] == '\n' || buf[len - 1] == '\r'))
        buf[--len] = 0;
    char *last = strrchr(buf, '\n');
    snprintf(out, n, "%.200s", last ? last + 1 : buf);
}

/* Does a line of the log match? */
static bool log_matches(const struct topo_node *nd, const regex_t *re)
{
    char *buf = malloc(LOG_SCAN_MAX + 1);
    bool hit = false;
    ssize_t r = buf ? pread(nd->log_fd, buf, LOG_SCAN_MAX, 0) : -1;
    if (r > 0) {
        buf[r] = 0;
        for (char *line = buf; line && *line && !hit;) {
            char *nl = strchr(line, '\n');
            if (nl)
                *nl = 0;
            hit = regexec(re, line, 0, NULL, 0) == 0;
            line = nl ? nl + 1 : NULL;
        }
    }
    free(buf);
    return hit;
}

static int open_log(struct topo_node *nd, const char *path, unsigned n, char *why, size_t whylen)
{
    if (!path) {
        const char *dir = getenv("TMPDIR");
        snprintf(nd->log_path, sizeof nd->log_path, "%s/vitcp-conform-node%u-XXXXXX", dir && *dir ? dir : "/tmp",
                 n);
        nd->log_fd = mkostemp(nd->log_path, O_CLOEXEC | O_APPEND);
        /* read through the descriptor only: the name goes at once, so
         * nothing is left even when the tester is killed */
        if (nd->log_fd >= 0)
            unlink(nd->log_path);
    } else {
        const char *brace = strstr(path, "{n}");
        if (brace)
            snprintf(nd->log_path, sizeof nd->log_path, "%.*s%u%s", (int)(brace - path), path, n, brace + 3);
        else if (n)
            snprintf(nd->log_path, sizeof nd->log_path, "%s.%u", path, n);
        else
            snprintf(nd->log_path, sizeof nd->log_path, "%s", path);
        nd->log_fd = open(nd->log_path, O_RDWR | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
    }
    if (nd->log_fd < 0) {
        snprintf(why, whylen, "cannot create the node's log %s: %s", nd->log_path, strerror(errno));
        return -1;
    }
    return 0;
}

/* ------------------------------------------------------------ open/close */

static int make_pairs(struct cf_topology *t, char *why, size_t whylen)
{
    char pid_text[CF_TOPO_NODES_MAX][16];
    for (unsigned i = 0; i < t->nnodes; i++)
        snprintf(pid_text[i], sizeof pid_text[i], "%d", (int)t->node[i].pid);
    /* the tester's links: link 0 to node 0 interface 0, link 1 to the
     * last node's interface 1 */
    for (unsigned l = 0; l < t->nlinks; l++) {
        unsigned nd = l == 0 ? 0 : t->nnodes - 1, ifc = l;
        char tmac[24], nmac[24], nif[16];
        tester_mac(l, tmac, sizeof tmac);
        node_mac(nd, ifc, nmac, sizeof nmac);
        snprintf(nif, sizeof nif, "veth%u", ifc);
        char near[IF_NAMESIZE];
        snprintf(near, sizeof near, "vce%ut%c", (unsigned)getpid() % 10000000u, l ? '1' : '0');
        char *add[] = {"ip", "link", "add", near, "address", tmac, "type", "veth", "peer", "name", nif,
                       "address", nmac, "netns", pid_text[nd], NULL};
        if (run_ip(add, why, whylen) < 0)
            return -1;
        snprintf(t->near[l], sizeof t->near[l], "%s", near);
        char *up[] = {"ip", "link", "set", near, "up", NULL};
        if (run_ip(up, why, whylen) < 0)
            return -1;
    }
    if (t->kind == CF_TOPO_CHAIN) {
        char m01[24], m10[24];
        node_mac(0, 1, m01, sizeof m01);
        node_mac(1, 0, m10, sizeof m10);
        char *add[] = {"ip", "link", "add", "veth1", "address", m01, "netns", pid_text[0], "type", "veth", "peer",
                       "name", "veth0", "address", m10, "netns", pid_text[1], NULL};
        if (run_ip(add, why, whylen) < 0)
            return -1;
    }
    return 0;
}

static void stop_nodes(struct cf_topology *t)
{
    for (unsigned i = 0; i < t->nnodes; i++)
        if (t->node[i].pid > 0)
            kill(-t->node[i].pid, SIGTERM);
    struct timespec t0 = cf_now();
    for (unsigned i = 0; i < t->nnodes; i++) {
        struct topo_node *nd = &t->node[i];
        if (nd->pid <= 0)
            continue;
        int st;
        while (waitpid(nd->pid, &st, WNOHANG) == 0) {
            if (cf_seconds_since(t0) * 1000 > STOP_WAIT_MS) {
                kill(-nd->pid, SIGKILL);
                waitpid(nd->pid, &st, 0);
                break;
            }
            sleep_ms(20);
        }
        kill(-nd->pid, SIGKILL); /* what the command left in its group */
        live_group[i] = 0;
        nd->pid = 0;
    }
}

void cf_topology_close(struct cf_topology *t)
{
    if (!t)
        return;
    stop_nodes(t);
    /* the pairs end with the nodes' namespaces; deleting the tester's ends
     * makes that immediate */
    for (unsigned l = 0; l < 2; l++)
        if (t->near[l][0]) {
            char why[300];
            char *del[] = {"ip", "link", "del", t->near[l], NULL};
            if (run_ip(del, why, sizeof why) < 0) {
                /* already gone with the namespace */
            }
        }
    for (unsigned i = 0; i < t->nnodes; i++)
        if (t->node[i].log_fd >= 0)
            close(t->node[i].log_fd);
    for (unsigned i = 0; i < 3; i++)
        sigaction(caught_signals[i], &t->old[i], NULL);
    free(t);
}

struct cf_topology *cf_topology_open(const struct cf_topology_spec *spec, struct cf_engine *e, bool *env_failed,
                                     char *why, size_t whylen)
{
    *env_failed = false;
    unsigned nnodes = cf_topology_nodes(spec->kind);
    if (spec->ncmd != nnodes) {
        snprintf(why, whylen, "--topology %s needs %u --node-cmd (given %u)", kind_names[spec->kind], nnodes,
                 spec->ncmd);
        return NULL;
    }
    char cmd[CF_TOPO_NODES_MAX][CMD_MAX];
    for (unsigned i = 0; i < nnodes; i++)
        if (cf_topology_expand(spec->kind, i, spec->node_cmd[i], cmd[i], sizeof cmd[i], why, whylen) < 0)
            return NULL;
    struct cf_topology *t = calloc(1, sizeof *t);
    if (!t) {
        snprintf(why, whylen, "out of memory");
        return NULL;
    }
    regex_t re;
    if (spec->ready_regex && regcomp(&re, spec->ready_regex, REG_EXTENDED | REG_NOSUB) != 0) {
        snprintf(why, whylen, "bad --node-ready '%s' (a POSIX extended regular expression)", spec->ready_regex);
        free(t);
        return NULL;
    }
    t->kind = spec->kind;
    t->nnodes = nnodes;
    t->nlinks = spec->kind == CF_TOPO_END ? 1 : 2;
    for (unsigned i = 0; i < CF_TOPO_NODES_MAX; i++)
        t->node[i].log_fd = -1;
    /* ended on the usual signals, whatever happens */
    struct sigaction sa = {.sa_handler = on_signal};
    sigemptyset(&sa.sa_mask);
    for (unsigned i = 0; i < 3; i++)
        sigaction(caught_signals[i], &sa, &t->old[i]);

    int go[CF_TOPO_NODES_MAX] = {-1, -1};
    bool ok = true;
    for (unsigned i = 0; i < nnodes && ok; i++) {
        ok = open_log(&t->node[i], spec->log_path, i, why, whylen) == 0 &&
             node_spawn(&t->node[i], cmd[i], &go[i], env_failed, why, whylen) == 0;
        if (t->node[i].pid > 0)
            live_group[i] = t->node[i].pid;
    }
    if (ok && make_pairs(t, why, whylen) < 0) {
        ok = false;
        *env_failed = true; /* no veth here, or no ip(8) */
    }
    for (unsigned i = 0; i < nnodes; i++)
        if (go[i] >= 0) {
            if (ok && write(go[i], "G", 1) != 1)
                ok = false;
            close(go[i]);
        }
    /* ready: a line matching the regex (each node's own log), or still
     * running after 500 ms */
    struct timespec t0 = cf_now();
    unsigned wait_ms = spec->wait_ms ? spec->wait_ms : 10000;
    while (ok) {
        bool all = true;
        for (unsigned i = 0; i < nnodes && ok; i++) {
            struct topo_node *nd = &t->node[i];
            int st;
            if (waitpid(nd->pid, &st, WNOHANG) == nd->pid) {
                char last[256];
                log_tail(nd, last, sizeof last);
                snprintf(why, whylen, "the node under test%s exited (%s %d) before it was ready: %s",
                         nnodes > 1 ? (i ? " 1" : " 0") : "", WIFEXITED(st) ? "status" : "signal",
                         WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st), last);
                nd->pid = 0;
                live_group[i] = 0;
                ok = false;
                break;
            }
            if (!nd->ready)
                nd->ready = spec->ready_regex ? log_matches(nd, &re) : cf_seconds_since(t0) >= 0.5;
            all &= nd->ready;
        }
        if (!ok || all)
            break;
        if (cf_seconds_since(t0) * 1000 > wait_ms) {
            unsigned i = t->node[0].ready ? 1 : 0;
            char last[256];
            log_tail(&t->node[i], last, sizeof last);
            snprintf(why, whylen, "the node under test%s was not ready after %u ms (no line matched --node-ready): %s",
                     nnodes > 1 ? (i ? " 1" : " 0") : "", wait_ms, last);
            ok = false;
            break;
        }
        sleep_ms(50);
    }
    if (spec->ready_regex)
        regfree(&re);
    for (unsigned l = 0; ok && l < t->nlinks; l++) {
        char spec_text[64], mac[24];
        node_mac(l == 0 ? 0 : nnodes - 1, l, mac, sizeof mac);
        snprintf(spec_text, sizeof spec_text, "%u=eth:%s,%s", l, t->near[l], mac);
        if (cf_engine_set_link(e, spec_text, why, whylen) < 0)
            ok = false;
    }
    if (!ok) {
        cf_topology_close(t);
        return NULL;
    }
    e->node_log_fd = t->node[0].log_fd; /* expect-log reads it (C90); valid until cf_topology_close */
    return t;
}
