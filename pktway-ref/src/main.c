/*
 * pktway-node: a reference PacketWay EEP end node and router over UDP and
 * raw Ethernet (docs/pktway-node.md). The decisions live in node.c; this
 * file moves bytes between sockets and node.c and prints one event=...
 * line per message on stdout.
 *
 *   pktway-node --addr A [--udp [ADDR:]PORT]... [--iface IF]... [--router]
 *               [--peer EEP=HOP[@IF]]... [--subscribe L]... [--mtu [IF:]N]...
 *               [--echo] [--send SPEC]... [--duration MS] [--pcap FILE]
 *               [--ethertype T] [--fault NAME] [--choice LIST]
 *   pktway-node --list-faults | --list-choices | --help
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include "node.h"
#include "vitcp/frame.h"
#include "vitcp/pcap_writer.h"

#define MAX_SENDS 32
#define MAX_IF_OPTS 16

static volatile sig_atomic_t stop_flag;
static void on_signal(int sig) { (void)sig; stop_flag = 1; }

struct iface {
    int fd;
    enum pn_if_kind kind;
    char name[IFNAMSIZ];   /* Ethernet */
    int ifindex;
    uint8_t mac[6];        /* Ethernet: own MAC */
    struct sockaddr_in local; /* UDP: bound address */
};

struct node {
    struct pn_config cfg;
    struct iface ifs[PN_MAX_IFS];
    uint16_t ethertype;
    struct vn_pcap_writer *pcap;
    struct pn_result *res;
    struct pn_spec *spec;
    uint8_t rx[PN_MSG_MAX + 64];
    uint8_t tx[PN_MSG_MAX + 64];
    uint8_t frame[PN_MSG_MAX + 128];
    bool stdout_failed;
};

/* Flush stdout; when it could not be written, say so once and return 1. */
static int stdout_check(void)
{
    static bool said;
    if ((fflush(stdout) || ferror(stdout)) && !said) {
        said = true;
        fprintf(stderr, "pktway-node: writing standard output failed: %s\n", strerror(errno ? errno : EIO));
        return 1;
    }
    return said ? 1 : 0;
}

static void event(struct node *n, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void event(struct node *n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    putchar('\n');
    if (stdout_check())
        n->stdout_failed = true;
}

/* ------------------------------------------------------------ pcap */

static void hop_endpoint(const struct pn_hop *hop, struct vn_endpoint *ep)
{
    memset(ep, 0, sizeof *ep);
    char ip[16];
    snprintf(ip, sizeof ip, "%u.%u.%u.%u", hop->addr[0], hop->addr[1], hop->addr[2], hop->addr[3]);
    vn_endpoint_set(ep, ip, (uint16_t)(hop->addr[4] << 8 | hop->addr[5]));
}

static void local_endpoint(const struct iface *ifc, struct vn_endpoint *ep)
{
    char ip[INET_ADDRSTRLEN] = "0.0.0.0";
    inet_ntop(AF_INET, &ifc->local.sin_addr, ip, sizeof ip);
    vn_endpoint_set(ep, ip, ntohs(ifc->local.sin_port));
}

/* Record one message as it went over the wire: out (sent) or in. */
static void record(struct node *n, unsigned ifx, const struct pn_hop *peer, bool out, const uint8_t *msg, size_t len)
{
    if (!n->pcap)
        return;
    const struct iface *ifc = &n->ifs[ifx];
    size_t flen = 0;
    if (ifc->kind == PN_IF_UDP) {
        struct vn_endpoint me, other;
        local_endpoint(ifc, &me);
        hop_endpoint(peer, &other);
        flen = vn_build_udp(n->frame, sizeof n->frame, out ? &me : &other, out ? &other : &me, 0, msg, len);
    } else {
        flen = vn_build_eth(n->frame, sizeof n->frame, out ? ifc->mac : peer->addr, out ? peer->addr : ifc->mac, 0,
                            n->ethertype, msg, len);
    }
    if (flen)
        vn_pcap_write(n->pcap, n->frame, flen);
}

/* ------------------------------------------------------------ I/O */

static int send_msg(struct node *n, const struct pn_hop *hop, const uint8_t *msg, size_t len)
{
    struct iface *ifc = &n->ifs[hop->ifx];
    size_t wire = pn_send_len(&n->cfg, len); /* what goes out: fault odd-length leaves bytes off */
    ssize_t r;
    if (ifc->kind == PN_IF_UDP) {
        struct sockaddr_in to = {.sin_family = AF_INET};
        memcpy(&to.sin_addr, hop->addr, 4);
        to.sin_port = htons((uint16_t)(hop->addr[4] << 8 | hop->addr[5]));
        r = sendto(ifc->fd, msg, wire, 0, (struct sockaddr *)&to, sizeof to);
    } else {
        uint8_t *buf = n->frame;
        if (wire + 14 > sizeof n->frame)
            return -1;
        memcpy(buf, hop->addr, 6);
        memcpy(buf + 6, ifc->mac, 6);
        buf[12] = (uint8_t)(n->ethertype >> 8);
        buf[13] = (uint8_t)n->ethertype;
        memcpy(buf + 14, msg, wire);
        size_t flen = 14 + wire;
        if (n->cfg.eth_pad && flen < 60) { /* choice eth-pad: a NIC's minimum frame */
            memset(buf + flen, 0, 60 - flen);
            flen = 60;
        }
        r = send(ifc->fd, buf, flen, 0);
    }
    if (r < 0)
        return -1;
    record(n, hop->ifx, hop, true, msg, wire);
    return 0;
}

static void print_sent(struct node *n, const struct pn_hop *hop, const char *kind, const uint8_t *msg, size_t len,
                       int rc)
{
    char to[32];
    pn_hop_format(hop, n->ifs[hop->ifx].kind, to, sizeof to);
    struct vw_eep_msg m;
    if (rc) {
        event(n, "event=send-failed if=%u to=%s kind=%s len=%zu reason=%s", hop->ifx, to, kind, len,
              strerror(errno));
        return;
    }
    if (vw_eep_decode_on(msg, len, VW_EEP_CARRIER_DATAGRAM, &m, NULL) != VW_REQ_NONE) {
        event(n, "event=sent if=%u to=%s kind=%s len=%zu", hop->ifx, to, kind, len);
        return;
    }
    event(n, "event=sent if=%u to=%s kind=%s len=%zu records=%u dt=0x%06x sa=0x%06x pt=0x%04x te=0x%04x dl=%u ei=0x%016llx",
          hop->ifx, to, kind, pn_send_len(&n->cfg, len), m.n_l2rh + m.n_symbols, (unsigned)m.hdr.dt,
          (unsigned)m.hdr.sa, m.hdr.pt, m.hdr.te, (unsigned)m.hdr.dl, (unsigned long long)m.ei);
}

static void receive(struct node *n, unsigned ifx)
{
    struct iface *ifc = &n->ifs[ifx];
    struct pn_hop from = {.ifx = (uint8_t)ifx};
    const uint8_t *msg;
    size_t len;
    if (ifc->kind == PN_IF_UDP) {
        struct sockaddr_in src;
        socklen_t sl = sizeof src;
        ssize_t r = recvfrom(ifc->fd, n->rx, sizeof n->rx, MSG_TRUNC, (struct sockaddr *)&src, &sl);
        if (r < 0)
            return;
        if (src.sin_family == AF_INET) {
            memcpy(from.addr, &src.sin_addr, 4);
            from.addr[4] = (uint8_t)(ntohs(src.sin_port) >> 8);
            from.addr[5] = (uint8_t)ntohs(src.sin_port);
            from.len = 6;
        }
        msg = n->rx;
        len = (size_t)r;
    } else {
        struct sockaddr_ll sll;
        socklen_t sl = sizeof sll;
        ssize_t r = recvfrom(ifc->fd, n->rx, sizeof n->rx, MSG_TRUNC, (struct sockaddr *)&sll, &sl);
        if (r < 14 || sll.sll_pkttype == PACKET_OUTGOING)
            return;
        if ((n->rx[12] << 8 | n->rx[13]) != n->ethertype)
            return;
        memcpy(from.addr, n->rx + 6, 6);
        from.len = 6;
        msg = n->rx + 14;
        len = (size_t)r - 14;
    }
    char fromtext[32];
    pn_hop_format(&from, ifc->kind, fromtext, sizeof fromtext);
    if (len > PN_MSG_MAX) {
        event(n, "event=dropped if=%u from=%s len=%zu reason=too-long", ifx, fromtext, len);
        return;
    }
    record(n, ifx, &from, false, msg, len);
    struct pn_result *res = n->res;
    pn_handle(&n->cfg, ifx, &from, msg, len, res);
    const char *v = pn_verdict_name(res->verdict);
    if (!res->decoded) {
        event(n, "event=%s if=%u from=%s len=%zu reason=%s", v, ifx, fromtext, len, res->reason);
    } else {
        const struct vw_eep_msg *m = &res->msg;
        char hex[2 * 32 + 1] = "";
        size_t show = m->data_len < 32 ? m->data_len : 32;
        for (size_t i = 0; i < show; i++)
            snprintf(hex + 2 * i, 3, "%02x", m->data[i]);
        char reason[80] = "", eiout[40] = "";
        if (res->reason[0])
            snprintf(reason, sizeof reason, " reason=%s", res->reason);
        if (res->verdict == PN_FORWARDED)
            snprintf(eiout, sizeof eiout, " ei_out=0x%016llx", (unsigned long long)res->ei_out);
        event(n,
              "event=%s if=%u from=%s len=%zu v=%u p=%u dt=0x%06x sa=0x%06x pt=0x%04x te=0x%04x dl=%u pl=%u oh=%u "
              "rz=%u records=%u consumed=%u ei=0x%016llx%s%s data_len=%zu data=%s",
              v, ifx, fromtext, len, m->hdr.version, m->hdr.priority, (unsigned)m->hdr.dt, (unsigned)m->hdr.sa,
              m->hdr.pt, m->hdr.te, (unsigned)m->hdr.dl, m->hdr.pl, m->n_oh, m->hdr.rz, res->records, res->consumed,
              (unsigned long long)m->ei, eiout, reason, m->data_len, show ? hex : "-");
    }
    for (unsigned i = 0; i < res->n_out; i++) {
        const struct pn_out *o = &res->out[i];
        int rc = send_msg(n, &o->hop, o->buf, o->len);
        print_sent(n, &o->hop, o->kind, o->buf, o->len, rc);
    }
}

/* Originate the messages of a spec (a --send or a "send" command). */
static void originate(struct node *n, const char *text)
{
    char err[160];
    if (pn_spec_parse(text, n->spec, err, sizeof err)) {
        event(n, "event=error detail=send: %s", err);
        return;
    }
    struct pn_hop hop;
    size_t len = pn_spec_build(&n->cfg, n->spec, n->tx, sizeof n->tx - 64, &hop, err, sizeof err);
    if (!len) {
        event(n, "event=error detail=send: %s", err);
        return;
    }
    static uint8_t copy[PN_MSG_MAX + 64];
    memcpy(copy, n->tx, len);
    for (unsigned long i = 0; i < n->spec->count; i++)
        print_sent(n, &hop, "send", copy, len, send_msg(n, &hop, copy, len));
}

/* One stdin command: send SPEC | peer EEP=HOP[@IF] | quit. */
static void command(struct node *n, char *line)
{
    line[strcspn(line, "\r\n")] = 0;
    while (isspace((unsigned char)*line))
        line++;
    if (!*line || *line == '#')
        return;
    char err[160];
    if (strncmp(line, "send ", 5) == 0) {
        originate(n, line + 5);
    } else if (strncmp(line, "peer ", 5) == 0) {
        if (pn_peer_parse(&n->cfg, line + 5, err, sizeof err))
            event(n, "event=error detail=peer: %s", err);
        else
            event(n, "event=peer %s", line + 5);
    } else if (strcmp(line, "quit") == 0) {
        stop_flag = 1;
    } else {
        event(n, "event=error detail=unknown command (send SPEC, peer EEP=HOP[@IF], quit)");
    }
}

/* ------------------------------------------------------------ setup */

static int open_udp(struct iface *ifc, const char *spec)
{
    char host[64] = "0.0.0.0";
    const char *colon = strrchr(spec, ':');
    const char *port_text = colon ? colon + 1 : spec;
    if (colon) {
        size_t hl = (size_t)(colon - spec);
        if (hl == 0 || hl >= sizeof host)
            return -1;
        memcpy(host, spec, hl);
        host[hl] = 0;
    }
    char *end;
    errno = 0;
    if (!isdigit((unsigned char)*port_text))
        return -1;
    unsigned long port = strtoul(port_text, &end, 10);
    if (*end || errno || port > 65535)
        return -1;
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    if (inet_pton(AF_INET, host, &a.sin_addr) != 1)
        return -1;
    ifc->kind = PN_IF_UDP;
    ifc->fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    socklen_t l = sizeof a;
    if (ifc->fd < 0 || bind(ifc->fd, (struct sockaddr *)&a, sizeof a) ||
        getsockname(ifc->fd, (struct sockaddr *)&ifc->local, &l)) {
        fprintf(stderr, "pktway-node: cannot bind UDP %s: %s\n", spec, strerror(errno));
        return -2;
    }
    int big = 1 << 20;
    setsockopt(ifc->fd, SOL_SOCKET, SO_RCVBUF, &big, sizeof big);
    return 0;
}

static int open_eth(struct iface *ifc, const char *name, uint16_t ethertype)
{
    if (strlen(name) >= IFNAMSIZ || !*name)
        return -1;
    ifc->kind = PN_IF_ETH;
    snprintf(ifc->name, sizeof ifc->name, "%s", name);
    ifc->fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK, htons(ethertype));
    if (ifc->fd < 0) {
        fprintf(stderr, "pktway-node: cannot open a packet socket (needs CAP_NET_RAW): %s\n", strerror(errno));
        return -2;
    }
    struct ifreq ifr = {0};
    snprintf(ifr.ifr_name, sizeof ifr.ifr_name, "%s", name);
    if (ioctl(ifc->fd, SIOCGIFINDEX, &ifr) < 0) {
        fprintf(stderr, "pktway-node: no interface '%s': %s\n", name, strerror(errno));
        return -2;
    }
    ifc->ifindex = ifr.ifr_ifindex;
    if (ioctl(ifc->fd, SIOCGIFHWADDR, &ifr) < 0) {
        fprintf(stderr, "pktway-node: no MAC address on '%s': %s\n", name, strerror(errno));
        return -2;
    }
    memcpy(ifc->mac, ifr.ifr_hwaddr.sa_data, 6);
    struct sockaddr_ll sll = {.sll_family = AF_PACKET, .sll_protocol = htons(ethertype), .sll_ifindex = ifc->ifindex};
    if (bind(ifc->fd, (struct sockaddr *)&sll, sizeof sll)) {
        fprintf(stderr, "pktway-node: cannot bind to '%s': %s\n", name, strerror(errno));
        return -2;
    }
    return 0;
}

static void usage(FILE *f)
{
    fprintf(f,
            "usage: pktway-node --addr A [--udp [ADDR:]PORT]... [--iface IF]... [--router]\n"
            "                   [--peer EEP=HOP[@IF]]... [--subscribe L]... [--mtu [IF:]N]...\n"
            "                   [--echo] [--send SPEC]... [--duration MS] [--pcap FILE]\n"
            "                   [--ethertype T] [--fault NAME] [--choice LIST]\n"
            "       pktway-node --list-faults | --list-choices\n"
            "A reference PacketWay EEP end node (and, with --router, an inter-SAN router) over UDP\n"
            "(default port %u) and raw Ethernet (Ethertype 0x%04X). One event=... line per message on\n"
            "stdout; commands on stdin: send SPEC, peer EEP=HOP[@IF], quit.\n"
            "  --addr A             this node's 23-bit physical EEP address (decimal or 0x hex, not 0)\n"
            "  --udp [ADDR:]PORT    an interface: a UDP socket (port 0: any, the event=interface line says)\n"
            "  --iface IF           an interface: raw Ethernet on network interface IF (needs CAP_NET_RAW)\n"
            "                       interfaces are numbered 0, 1, ... in the order given; default: --udp %u\n"
            "  --router             forward what is not for this node (by the leading L2RH, else the DT)\n"
            "  --peer EEP=HOP[@IF]  next hop for EEP address EEP (or 'default') on interface IF (default 0):\n"
            "                       IPv4:PORT on a UDP interface, aa:bb:cc:dd:ee:ff on an Ethernet one\n"
            "  --subscribe L        deliver messages to the logical address L (24-bit DT, 0xExxxxx)\n"
            "  --mtu [IF:]N         largest message sent on interface IF, or on all (default %u UDP, %u Ethernet)\n"
            "  --echo               answer every delivered message with a copy to its SA\n"
            "  --send SPEC          originate a message after start-up (repeatable; see the man page)\n"
            "  --duration MS        exit after MS milliseconds (default: run until quit or a signal)\n"
            "  --pcap FILE          record every message received and sent (pcap, or pcapng by name)\n"
            "  --ethertype T        Ethertype on Ethernet interfaces (default 0x%04X)\n"
            "  --fault NAME         break one rule on the wire (name or requirement ID, see --list-faults)\n"
            "  --choice LIST        make choices the draft allows (comma-separated, see --list-choices)\n",
            VW_EEP_UDP_PORT, VW_EEP_ETHERTYPE, VW_EEP_UDP_PORT, PN_UDP_MTU_DEFAULT, PN_ETH_MTU_DEFAULT,
            VW_EEP_ETHERTYPE);
}

static int bad(const char *what, const char *arg)
{
    fprintf(stderr, "pktway-node: bad %s '%s' (see --help)\n", what, arg);
    return 2;
}

static long parse_long(const char *s, long min, long max)
{
    char *end;
    errno = 0;
    if (!isdigit((unsigned char)*s))
        return -1;
    long v = strtol(s, &end, 0);
    return *end || errno || v < min || v > max ? -1 : v;
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

struct if_opt {
    enum pn_if_kind kind;
    const char *arg;
};

static int run(struct node *n, const char **sends, unsigned n_sends, long duration_ms)
{
    const char *role = n->cfg.router ? "router" : "end";
    char chosen[200];
    pn_choice_format(&n->cfg, chosen, sizeof chosen);
    event(n, "event=ready addr=0x%06x role=%s fault=%s echo=%d interfaces=%u choices=%s", (unsigned)n->cfg.addr, role,
          pn_fault_name(n->cfg.fault), n->cfg.echo, n->cfg.n_ifs, chosen);
    for (unsigned i = 0; i < n_sends; i++)
        originate(n, sends[i]);
    bool stdin_open = true;
    double end = duration_ms > 0 ? now_ms() + (double)duration_ms : 0;
    char line[PN_MSG_MAX * 2 + 256];
    size_t line_len = 0;
    while (!stop_flag) {
        struct pollfd p[PN_MAX_IFS + 1];
        unsigned np = 0;
        for (unsigned i = 0; i < n->cfg.n_ifs; i++)
            p[np++] = (struct pollfd){n->ifs[i].fd, POLLIN, 0};
        if (stdin_open)
            p[np++] = (struct pollfd){0, POLLIN, 0};
        int wait = 200;
        if (end) {
            double left = end - now_ms();
            if (left <= 0)
                break;
            if (left < wait)
                wait = (int)left + 1;
        }
        if (poll(p, np, wait) < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        for (unsigned i = 0; i < n->cfg.n_ifs; i++)
            if (p[i].revents & (POLLIN | POLLERR))
                for (int k = 0; k < 64; k++) { /* drain, bounded so stdin is not starved */
                    int before = n->ifs[i].fd;
                    struct pollfd q = {before, POLLIN, 0};
                    if (k && poll(&q, 1, 0) <= 0)
                        break;
                    receive(n, i);
                }
        if (stdin_open && (p[np - 1].revents & (POLLIN | POLLHUP | POLLERR))) {
            ssize_t r = read(0, line + line_len, sizeof line - 1 - line_len);
            if (r <= 0) {
                stdin_open = false;
                if (line_len) {
                    line[line_len] = 0;
                    command(n, line);
                }
                continue;
            }
            line_len += (size_t)r;
            char *nl;
            size_t start = 0;
            while ((nl = memchr(line + start, '\n', line_len - start))) {
                *nl = 0;
                command(n, line + start);
                start = (size_t)(nl - line) + 1;
            }
            memmove(line, line + start, line_len - start);
            line_len -= start;
            if (line_len == sizeof line - 1) {
                event(n, "event=error detail=command line too long");
                line_len = 0;
            }
        }
    }
    event(n, "event=stopped");
    return 0;
}

int main(int argc, char **argv)
{
    static const struct option lo[] = {
        {"addr", required_argument, 0, 'a'},      {"udp", required_argument, 0, 'u'},
        {"iface", required_argument, 0, 'i'},     {"router", no_argument, 0, 'r'},
        {"peer", required_argument, 0, 'P'},      {"subscribe", required_argument, 0, 'L'},
        {"mtu", required_argument, 0, 'm'},       {"echo", no_argument, 0, 'e'},
        {"send", required_argument, 0, 's'},      {"duration", required_argument, 0, 'd'},
        {"pcap", required_argument, 0, 'w'},      {"ethertype", required_argument, 0, 'E'},
        {"fault", required_argument, 0, 'f'},     {"list-faults", no_argument, 0, 'l'},
        {"help", no_argument, 0, 'h'},            {"choice", required_argument, 0, 'c'},
        {"list-choices", no_argument, 0, 'C'},    {0, 0, 0, 0}};
    static struct node node;
    struct node *n = &node;
    uint32_t addr = 0;
    bool have_addr = false;
    struct if_opt ifopts[PN_MAX_IFS];
    unsigned n_ifopts = 0;
    const char *peers[PN_MAX_PEERS], *mtus[MAX_IF_OPTS], *sends[MAX_SENDS], *pcap_path = NULL;
    unsigned n_peers = 0, n_mtus = 0, n_sends = 0;
    long duration = 0, v;
    n->ethertype = VW_EEP_ETHERTYPE;
    pn_config_init(&n->cfg, 0);
    int c;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
        switch (c) {
        case 'a':
            if (pn_addr_parse(optarg, &addr) || addr == 0 || addr > 0x7FFFFD)
                return bad("--addr (a physical address 1..0x7FFFFD)", optarg);
            have_addr = true;
            break;
        case 'u':
        case 'i':
            if (n_ifopts == PN_MAX_IFS)
                return bad("interface (at most 8)", optarg);
            ifopts[n_ifopts++] = (struct if_opt){c == 'u' ? PN_IF_UDP : PN_IF_ETH, optarg};
            break;
        case 'r': n->cfg.router = true; break;
        case 'P':
            if (n_peers == PN_MAX_PEERS)
                return bad("--peer (too many)", optarg);
            peers[n_peers++] = optarg;
            break;
        case 'L': {
            uint32_t l;
            if (pn_addr_parse(optarg, &l) || vw_eep_dt_kind(l) != VW_EEP_DT_LOGICAL ||
                n->cfg.n_logical == PN_MAX_LOGICAL)
                return bad("--subscribe (a logical address 0xE00000..0xEFFFFF)", optarg);
            n->cfg.logical[n->cfg.n_logical++] = l;
            break;
        }
        case 'm':
            if (n_mtus == MAX_IF_OPTS)
                return bad("--mtu (too many)", optarg);
            mtus[n_mtus++] = optarg;
            break;
        case 'e': n->cfg.echo = true; break;
        case 's':
            if (n_sends == MAX_SENDS)
                return bad("--send (too many)", optarg);
            sends[n_sends++] = optarg;
            break;
        case 'd':
            if ((duration = parse_long(optarg, 1, 86400000)) < 0)
                return bad("--duration", optarg);
            break;
        case 'w': pcap_path = optarg; break;
        case 'E':
            if ((v = parse_long(optarg, 0x600, 0xFFFF)) < 0)
                return bad("--ethertype", optarg);
            n->ethertype = (uint16_t)v;
            break;
        case 'f':
            if ((n->cfg.fault = pn_fault_by_name(optarg)) == PN_FAULT_NONE) {
                fprintf(stderr, "pktway-node: unknown fault '%s' (see --list-faults)\n", optarg);
                return 2;
            }
            break;
        case 'c': {
            char cerr[160];
            if (pn_choice_parse(&n->cfg, optarg, cerr, sizeof cerr)) {
                fprintf(stderr, "pktway-node: %s\n", cerr);
                return 2;
            }
            break;
        }
        case 'C':
            pn_choice_list(stdout);
            return stdout_check();
        case 'l':
            pn_fault_list(stdout);
            return stdout_check();
        case 'h': usage(stdout); return stdout_check();
        default:
            fprintf(stderr, "pktway-node: unknown option or missing value: %s\n", argv[optind > 1 ? optind - 1 : 1]);
            usage(stderr);
            return 2;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "pktway-node: unexpected argument '%s'\n", argv[optind]);
        return 2;
    }
    if (!have_addr) {
        fprintf(stderr, "pktway-node: --addr is required (see --help)\n");
        return 2;
    }
    n->cfg.addr = addr;
    static char default_udp[8];
    if (n_ifopts == 0) {
        snprintf(default_udp, sizeof default_udp, "%u", VW_EEP_UDP_PORT);
        ifopts[n_ifopts++] = (struct if_opt){PN_IF_UDP, default_udp};
    }
    for (unsigned i = 0; i < n_ifopts; i++) {
        n->ifs[i].fd = -1;
        n->cfg.if_kind[i] = ifopts[i].kind;
        n->cfg.if_mtu[i] = ifopts[i].kind == PN_IF_UDP ? PN_UDP_MTU_DEFAULT : PN_ETH_MTU_DEFAULT;
    }
    n->cfg.n_ifs = n_ifopts;
    for (unsigned i = 0; i < n_mtus; i++) { /* all-interface values first, then per interface */
        for (int pass = 0; pass < 2; pass++) {
            const char *colon = strchr(mtus[i], ':');
            if ((colon != NULL) != (pass == 1))
                continue;
            long ifx = -1, mtu;
            if (colon) {
                char tmp[8];
                size_t l = (size_t)(colon - mtus[i]);
                if (l == 0 || l >= sizeof tmp)
                    return bad("--mtu", mtus[i]);
                memcpy(tmp, mtus[i], l);
                tmp[l] = 0;
                if ((ifx = parse_long(tmp, 0, (long)n->cfg.n_ifs - 1)) < 0)
                    return bad("--mtu interface", mtus[i]);
            }
            if ((mtu = parse_long(colon ? colon + 1 : mtus[i], VW_EEP_MIN_LEN, PN_MSG_MAX)) < 0)
                return bad("--mtu (24..65536)", mtus[i]);
            for (unsigned k = 0; k < n->cfg.n_ifs; k++)
                if (ifx < 0 || (unsigned)ifx == k)
                    n->cfg.if_mtu[k] = (size_t)mtu;
        }
    }
    char err[160];
    for (unsigned i = 0; i < n_peers; i++)
        if (pn_peer_parse(&n->cfg, peers[i], err, sizeof err)) {
            fprintf(stderr, "pktway-node: bad --peer '%s': %s\n", peers[i], err);
            return 2;
        }
    n->res = calloc(1, sizeof *n->res);
    n->spec = calloc(1, sizeof *n->spec);
    if (!n->res || !n->spec) {
        fprintf(stderr, "pktway-node: out of memory\n");
        return 1;
    }
    for (unsigned i = 0; i < n_sends; i++) { /* check every spec before anything goes out */
        if (pn_spec_parse(sends[i], n->spec, err, sizeof err)) {
            fprintf(stderr, "pktway-node: bad --send '%s': %s\n", sends[i], err);
            return 2;
        }
    }
    int rc = 0;
    for (unsigned i = 0; i < n->cfg.n_ifs && !rc; i++) {
        int r = ifopts[i].kind == PN_IF_UDP ? open_udp(&n->ifs[i], ifopts[i].arg)
                                             : open_eth(&n->ifs[i], ifopts[i].arg, n->ethertype);
        if (r == -1) {
            rc = bad(ifopts[i].kind == PN_IF_UDP ? "--udp" : "--iface", ifopts[i].arg);
        } else if (r) {
            rc = 1;
        } else {
            char local[32];
            if (n->ifs[i].kind == PN_IF_UDP) {
                char ip[INET_ADDRSTRLEN] = "?";
                inet_ntop(AF_INET, &n->ifs[i].local.sin_addr, ip, sizeof ip);
                snprintf(local, sizeof local, "%s:%u", ip, ntohs(n->ifs[i].local.sin_port));
            } else {
                struct pn_hop me = {.len = 6};
                memcpy(me.addr, n->ifs[i].mac, 6);
                pn_hop_format(&me, PN_IF_ETH, local, sizeof local);
            }
            event(n, "event=interface if=%u kind=%s local=%s%s%s mtu=%zu", i,
                  n->ifs[i].kind == PN_IF_UDP ? "udp" : "eth", local, n->ifs[i].kind == PN_IF_ETH ? " name=" : "",
                  n->ifs[i].kind == PN_IF_ETH ? n->ifs[i].name : "", n->cfg.if_mtu[i]);
        }
    }
    if (!rc && pcap_path) {
        char perr[160];
        n->pcap = vn_capture_open(pcap_path, vn_capture_format_for(pcap_path), "pktway-node", perr, sizeof perr);
        if (!n->pcap) {
            fprintf(stderr, "pktway-node: cannot write %s: %s\n", pcap_path, perr);
            rc = 1;
        }
    }
    if (!rc) {
        signal(SIGINT, on_signal);
        signal(SIGTERM, on_signal);
        signal(SIGPIPE, SIG_IGN);
        rc = run(n, sends, n_sends, duration);
    }
    if (n->pcap && vn_pcap_close(n->pcap)) {
        fprintf(stderr, "pktway-node: writing %s failed\n", pcap_path);
        rc = rc ? rc : 1;
    }
    for (unsigned i = 0; i < n->cfg.n_ifs; i++)
        if (n->ifs[i].fd >= 0)
            close(n->ifs[i].fd);
    free(n->res);
    free(n->spec);
    if (n->stdout_failed && !rc)
        rc = 1;
    return rc;
}
