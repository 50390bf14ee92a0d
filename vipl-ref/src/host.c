/*
 * The per-host VI/TCP listener (issue 17, point 3). VI/TCP has one
 * well-known port per host (draft section 4.3, V1) and routes by
 * discriminator, but on one host several processes (MPI-style ranks) each
 * open "the" NIC. So every default NIC of a host (one network namespace)
 * shares one TCP listener:
 *
 * - The first default NIC binds the abstract Unix name "vipl/<addr>:<port>"
 *   (SOCK_SEQPACKET; the name is the lock, per network namespace, and goes
 *   away with its process) and then the TCP port: it is the front. Every
 *   later default NIC connects to that name (its watch connection) and is a
 *   member.
 * - A NIC that waits on a discriminator (VipConnectWait, or the passive side
 *   of a peer-to-peer request) binds "vipl/<addr>:<port>/d/<hash>" (or
 *   ".../any" for DiscriminatorLen 0) and pings the front over its watch.
 * - The front reads each ConnectRequest, and hands a request it holds to
 *   the NIC bound to its Called Discriminator (exact, then any): the TCP
 *   socket goes over SCM_RIGHTS with the request's bytes; the receiving NIC
 *   parses them as if they had arrived on its own listener. A request that
 *   no NIC wants stays at the front, held for the grace period (A4), then
 *   gets ConnectNoMatch; a ping makes the front try its held requests again.
 * - When the front goes away, its members see their watch close and one of
 *   them takes the names and the port over. Requests lost with it are
 *   re-sent by their requesters (they retry until their Timeout, 9.4.4).
 *
 * A second NIC of the host that waits on a discriminator already bound by
 * another is not routed to (the first keeps it); discriminators are hashed
 * (FNV-1a, 64 bits) into the name, so two that collide reach one NIC, which
 * holds the other's request until ConnectNoMatch.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include "provider.h"

#define HOST_TAKEOVER_RETRY_MS 20
#define HOST_NO_PORT_RETRY_MS 500
#define HOST_HANDOFF_WAIT_MS 200 /* a handoff's bytes follow its connect at once */

struct host_want {
    uint8_t disc[VW_VITCP_DISC_MAX];
    uint16_t len;
    unsigned waits; /* VipConnectWait calls in progress */
    bool p2p;       /* a pending peer-to-peer listener of this NIC waits on it */
    int fd;         /* the bound name, -1 while another NIC holds it */
    struct host_want *next;
};

struct host_member {
    int fd;
    struct host_member *next;
};

struct vipl_host {
    char key[64];
    struct sockaddr_storage tcp_ss;
    socklen_t tcp_sl;
    int epfd;      /* front_fd, watch_fd, members' and wants' fds */
    int front_fd;  /* this NIC is the front: the host name's listener */
    int watch_fd;  /* this NIC is a member: its connection to the front */
    int64_t retry_at; /* neither, for now: try again then (-1: no) */
    struct host_member *members;
    struct host_want *wants;
};

enum host_claim { HOST_FRONT, HOST_TAKEN, HOST_NO_PORT };

static uint64_t fnv1a(const uint8_t *p, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ull;
    while (n--) {
        h ^= *p++;
        h *= 0x100000001b3ull;
    }
    return h;
}

static socklen_t host_sun(struct sockaddr_un *su, const struct vipl_host *h, const uint8_t *disc, int disc_len)
{
    memset(su, 0, sizeof *su);
    su->sun_family = AF_UNIX;
    int n; /* sun_path[0] = 0: the abstract namespace */
    if (disc_len < 0)
        n = snprintf(su->sun_path + 1, sizeof su->sun_path - 1, "%s", h->key);
    else if (disc_len == 0)
        n = snprintf(su->sun_path + 1, sizeof su->sun_path - 1, "%s/any", h->key);
    else
        n = snprintf(su->sun_path + 1, sizeof su->sun_path - 1, "%s/d/%016llx", h->key,
                     (unsigned long long)fnv1a(disc, (size_t)disc_len));
    return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)n);
}

static int seqpacket(void)
{
    return socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
}

static void ep_add(struct vipl_host *h, int fd)
{
    struct epoll_event ev = {.events = EPOLLIN, .data.fd = fd};
    epoll_ctl(h->epfd, EPOLL_CTL_ADD, fd, &ev);
}

static void ep_close(struct vipl_host *h, int fd)
{
    if (fd < 0)
        return;
    epoll_ctl(h->epfd, EPOLL_CTL_DEL, fd, NULL);
    close(fd);
}

/* Bind a name and listen on it; -1 if another socket holds it. */
static int bind_name(const struct sockaddr_un *su, socklen_t sl)
{
    int fd = seqpacket();
    if (fd < 0)
        return -1;
    if (bind(fd, (const struct sockaddr *)su, sl) < 0 || listen(fd, 64) < 0) {
        close(fd);
        return -1;
    }
    return fd;
}

static enum host_claim claim_front(struct vipl_nic *nic)
{
    struct vipl_host *h = nic->host;
    struct sockaddr_un su;
    socklen_t sl = host_sun(&su, h, NULL, -1);
    int fd = bind_name(&su, sl);
    if (fd < 0)
        return HOST_TAKEN;
    int tfd = vipl_open_listener(&h->tcp_ss, h->tcp_sl);
    if (tfd < 0) {
        close(fd); /* the port belongs to something else: no front */
        return HOST_NO_PORT;
    }
    h->front_fd = fd;
    ep_add(h, fd);
    nic->listen_fd = tfd;
    return HOST_FRONT;
}

static bool connect_watch(struct vipl_nic *nic)
{
    struct vipl_host *h = nic->host;
    struct sockaddr_un su;
    socklen_t sl = host_sun(&su, h, NULL, -1);
    int fd = seqpacket();
    if (fd < 0)
        return false;
    if (connect(fd, (struct sockaddr *)&su, sl) < 0) {
        close(fd);
        return false;
    }
    h->watch_fd = fd;
    ep_add(h, fd);
    return true;
}

/* Front or member, or neither for now (then retry_at is set). */
static void host_settle(struct vipl_nic *nic)
{
    struct vipl_host *h = nic->host;
    switch (claim_front(nic)) {
    case HOST_FRONT: h->retry_at = -1; return;
    case HOST_NO_PORT: h->retry_at = now_ms() + HOST_NO_PORT_RETRY_MS; return;
    case HOST_TAKEN:
        if (connect_watch(nic)) {
            h->retry_at = -1;
            return;
        }
        /* the front is between bind and listen, or just went away */
        h->retry_at = now_ms() + HOST_TAKEOVER_RETRY_MS;
        return;
    }
}

bool host_join(struct vipl_nic *nic, const struct sockaddr_storage *ss, socklen_t sl)
{
    struct vipl_host *h = calloc(1, sizeof *h);
    if (!h)
        return false;
    h->front_fd = h->watch_fd = -1;
    h->retry_at = -1;
    h->tcp_ss = *ss;
    h->tcp_sl = sl;
    char addr[INET6_ADDRSTRLEN] = "?";
    uint16_t port;
    if (ss->ss_family == AF_INET6) {
        const struct sockaddr_in6 *a = (const struct sockaddr_in6 *)ss;
        inet_ntop(AF_INET6, &a->sin6_addr, addr, sizeof addr);
        port = ntohs(a->sin6_port);
    } else {
        const struct sockaddr_in *a = (const struct sockaddr_in *)ss;
        inet_ntop(AF_INET, &a->sin_addr, addr, sizeof addr);
        port = ntohs(a->sin_port);
    }
    snprintf(h->key, sizeof h->key, "vipl/%s:%u", addr, port);
    h->epfd = epoll_create1(EPOLL_CLOEXEC);
    if (h->epfd < 0 || port == 0) {
        if (h->epfd >= 0)
            close(h->epfd);
        free(h);
        return false;
    }
    nic->host = h;
    for (int tries = 0; tries < 5; tries++) {
        enum host_claim c = claim_front(nic);
        if (c == HOST_FRONT)
            return true;
        if (c == HOST_NO_PORT)
            break;
        if (connect_watch(nic)) {
            nic->listen_port = port;
            return true;
        }
        usleep(HOST_TAKEOVER_RETRY_MS * 1000); /* a front between bind and listen, or leaving */
    }
    close(h->epfd);
    free(h);
    nic->host = NULL;
    return false;
}

void host_leave(struct vipl_nic *nic)
{
    struct vipl_host *h = nic->host;
    if (!h)
        return;
    while (h->wants) {
        struct host_want *w = h->wants;
        h->wants = w->next;
        if (w->fd >= 0)
            close(w->fd);
        free(w);
    }
    while (h->members) {
        struct host_member *m = h->members;
        h->members = m->next;
        close(m->fd);
        free(m);
    }
    if (h->front_fd >= 0)
        close(h->front_fd);
    if (h->watch_fd >= 0)
        close(h->watch_fd);
    close(h->epfd);
    free(h);
    nic->host = NULL;
}

bool host_can_wait(const struct vipl_nic *nic)
{
    return nic->host && (nic->host->front_fd >= 0 || nic->host->watch_fd >= 0 || nic->host->retry_at >= 0);
}

int host_poll_fd(const struct vipl_nic *nic)
{
    return nic->host ? nic->host->epfd : -1;
}

int64_t host_deadline(const struct vipl_nic *nic)
{
    return nic->host ? nic->host->retry_at : -1;
}

/* --------------------------------------------------------------- front */

/* Hand a held request to the NIC bound to its discriminator. true: done,
 * c is freed. */
bool host_route_held(struct vipl_conn *c)
{
    struct vipl_nic *nic = c->nic;
    struct vipl_host *h = nic->host;
    if (!h || h->front_fd < 0 || c->routed || !c->req_raw || c->fd < 0 || c->state != IN_HELD || c->linger)
        return false;
    int ufd = -1;
    struct sockaddr_un su;
    for (int any = 0; any < 2 && ufd < 0; any++) {
        if (!any && c->req_ce.called_disc_len == 0)
            continue;
        socklen_t sl = host_sun(&su, h, c->req_ce.called_disc, any ? 0 : c->req_ce.called_disc_len);
        ufd = seqpacket();
        if (ufd >= 0 && connect(ufd, (struct sockaddr *)&su, sl) < 0) {
            close(ufd);
            ufd = -1;
        }
    }
    if (ufd < 0)
        return false; /* nobody on the host waits for it (yet) */
    union {
        struct cmsghdr align;
        char buf[CMSG_SPACE(sizeof(int))];
    } ctl;
    memset(&ctl, 0, sizeof ctl);
    struct iovec iov = {.iov_base = c->req_raw, .iov_len = c->req_raw_len};
    struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf, .msg_controllen = sizeof ctl.buf};
    struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
    cm->cmsg_level = SOL_SOCKET;
    cm->cmsg_type = SCM_RIGHTS;
    cm->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(cm), &c->fd, sizeof(int));
    ssize_t w = sendmsg(ufd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);
    close(ufd);
    if (w != (ssize_t)c->req_raw_len)
        return false;
    conn_release(c); /* the other NIC has the socket now */
    return true;
}

/* Try every held request again (a NIC of the host began to wait). */
static void host_reroute(struct vipl_nic *nic)
{
    for (struct vipl_conn *c = nic->conns, *next; c; c = next) {
        next = c->next;
        host_route_held(c);
    }
}

static void accept_members(struct vipl_nic *nic)
{
    struct vipl_host *h = nic->host;
    for (;;) {
        int fd = accept4(h->front_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0)
            return;
        struct host_member *m = calloc(1, sizeof *m);
        if (!m) {
            close(fd);
            continue;
        }
        m->fd = fd;
        m->next = h->members;
        h->members = m;
        ep_add(h, fd);
    }
}

static void member_ready(struct vipl_nic *nic, struct host_member *m)
{
    struct vipl_host *h = nic->host;
    char b[16];
    ssize_t n = recv(m->fd, b, sizeof b, MSG_DONTWAIT);
    if (n > 0) {
        host_reroute(nic);
        return;
    }
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
        return;
    for (struct host_member **pp = &h->members; *pp; pp = &(*pp)->next)
        if (*pp == m) {
            *pp = m->next;
            break;
        }
    ep_close(h, m->fd);
    free(m);
}

/* ---------------------------------------------------------- any NIC */

static void ping_front(struct vipl_nic *nic)
{
    struct vipl_host *h = nic->host;
    if (h->front_fd >= 0)
        host_reroute(nic);
    else if (h->watch_fd >= 0)
        send(h->watch_fd, "w", 1, MSG_NOSIGNAL | MSG_DONTWAIT);
}

static void want_bind(struct vipl_nic *nic, struct host_want *w)
{
    struct vipl_host *h = nic->host;
    struct sockaddr_un su;
    socklen_t sl = host_sun(&su, h, w->disc, w->len);
    w->fd = bind_name(&su, sl);
    if (w->fd < 0)
        return; /* another NIC of the host waits on it: it gets them */
    ep_add(h, w->fd);
    ping_front(nic);
}

static struct host_want *want_find(struct vipl_host *h, const uint8_t *disc, uint16_t len, bool create)
{
    for (struct host_want *w = h->wants; w; w = w->next)
        if (w->len == len && !memcmp(w->disc, disc, len))
            return w;
    if (!create)
        return NULL;
    struct host_want *w = calloc(1, sizeof *w);
    if (!w)
        return NULL;
    memcpy(w->disc, disc, len);
    w->len = len;
    w->fd = -1;
    w->next = h->wants;
    h->wants = w;
    return w;
}

static void want_drop_unused(struct vipl_host *h)
{
    for (struct host_want **pp = &h->wants; *pp;) {
        struct host_want *w = *pp;
        if (w->waits || w->p2p) {
            pp = &w->next;
            continue;
        }
        *pp = w->next;
        ep_close(h, w->fd);
        free(w);
    }
}

void host_wait_begin(struct vipl_nic *nic, const uint8_t *disc, uint16_t len)
{
    if (!nic->host || len > VW_VITCP_DISC_MAX)
        return;
    struct host_want *w = want_find(nic->host, disc, len, true);
    if (!w)
        return;
    if (w->waits++ == 0 && !w->p2p)
        want_bind(nic, w);
    else if (w->fd < 0)
        want_bind(nic, w); /* the other NIC may have let go of it */
}

void host_wait_end(struct vipl_nic *nic, const uint8_t *disc, uint16_t len)
{
    if (!nic->host || len > VW_VITCP_DISC_MAX)
        return;
    struct host_want *w = want_find(nic->host, disc, len, false);
    if (w && w->waits)
        w->waits--;
    want_drop_unused(nic->host);
}

/* A handoff: the front's bytes of a ConnectRequest and its TCP socket. */
static void take_handoff(struct vipl_nic *nic, int lfd)
{
    for (;;) {
        int cfd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
        if (cfd < 0)
            return;
        struct timeval tv = {.tv_sec = 0, .tv_usec = HOST_HANDOFF_WAIT_MS * 1000};
        setsockopt(cfd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
        uint8_t buf[1024];
        union {
            struct cmsghdr align;
            char b[CMSG_SPACE(sizeof(int))];
        } ctl;
        struct iovec iov = {.iov_base = buf, .iov_len = sizeof buf};
        struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.b, .msg_controllen = sizeof ctl.b};
        ssize_t n = recvmsg(cfd, &mh, MSG_CMSG_CLOEXEC);
        close(cfd);
        int tfd = -1;
        for (struct cmsghdr *cm = n > 0 ? CMSG_FIRSTHDR(&mh) : NULL; cm; cm = CMSG_NXTHDR(&mh, cm))
            if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS && cm->cmsg_len == CMSG_LEN(sizeof(int)))
                memcpy(&tfd, CMSG_DATA(cm), sizeof tfd);
        if (tfd < 0)
            continue;
        int type = 0;
        socklen_t tl = sizeof type;
        if (n <= 0 || (mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) ||
            getsockopt(tfd, SOL_SOCKET, SO_TYPE, &type, &tl) < 0 || type != SOCK_STREAM) {
            close(tfd); /* not a front's handoff of a TCP connection */
            continue;
        }
        int one = 1;
        setsockopt(tfd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        conn_adopt(nic, tfd, buf, (size_t)n);
    }
}

/* The progress thread: keep the passive peer-to-peer requests' names bound,
 * and find a front again when there is none. */
void host_tick(struct vipl_nic *nic)
{
    struct vipl_host *h = nic->host;
    if (!h)
        return;
    if (h->retry_at >= 0 && now_ms() >= h->retry_at)
        host_settle(nic);
    for (struct host_want *w = h->wants; w; w = w->next)
        w->p2p = false;
    for (struct vipl_vi *vi = nic->vis; vi; vi = vi->next) {
        if (vi->phase != PH_P2P_LISTEN || vi->state != VIP_STATE_CONNECT_PENDING)
            continue;
        struct host_want *w = want_find(h, vi->local_disc, vi->local_disc_len, true);
        if (!w)
            continue;
        bool fresh = !w->p2p && !w->waits;
        w->p2p = true;
        if (fresh)
            want_bind(nic, w);
    }
    want_drop_unused(h);
}

void host_on_ready(struct vipl_nic *nic)
{
    struct vipl_host *h = nic->host;
    if (!h)
        return;
    struct epoll_event evs[16];
    int n = epoll_wait(h->epfd, evs, 16, 0);
    for (int i = 0; i < n; i++) {
        int fd = evs[i].data.fd;
        if (fd == h->front_fd) {
            accept_members(nic);
            continue;
        }
        if (fd == h->watch_fd) {
            char b[16];
            ssize_t r = recv(fd, b, sizeof b, MSG_DONTWAIT);
            if (r == 0 || (r < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
                ep_close(h, fd); /* the front went away: take over, or follow the one who did */
                h->watch_fd = -1;
                host_settle(nic);
                for (struct host_want *w = h->wants; w; w = w->next)
                    if (w->fd >= 0) { /* let the new front try what it may hold */
                        ping_front(nic);
                        break;
                    }
            }
            continue;
        }
        struct host_member *m = h->members;
        while (m && m->fd != fd)
            m = m->next;
        if (m) {
            member_ready(nic, m);
            continue;
        }
        struct host_want *w = h->wants;
        while (w && w->fd != fd)
            w = w->next;
        if (w)
            take_handoff(nic, fd);
        else
            epoll_ctl(h->epfd, EPOLL_CTL_DEL, fd, NULL); /* stale */
    }
}
