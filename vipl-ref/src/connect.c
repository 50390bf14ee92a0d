/*
 * Connection management (VIA 9.4, VI/TCP section 4): the passive side holds
 * each incoming ConnectRequest until a VipConnectWait claims it or the grace
 * period ends (A4); the active side and peer-to-peer requests run as state
 * machines in the progress thread (engine.c).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include "provider.h"

void conn_free(struct vipl_conn *c)
{
    if (c->fd >= 0)
        close(c->fd);
    vw_vitcp_framer_free(&c->framer);
    free(c->req_raw);
    free(c);
}

static void unlink_conn(struct vipl_conn *c)
{
    for (struct vipl_conn **pp = &c->nic->conns; *pp; pp = &(*pp)->next)
        if (*pp == c) {
            *pp = c->next;
            return;
        }
}

static bool send_all(int fd, const uint8_t *p, size_t n)
{
    while (n) {
        ssize_t w = send(fd, p, n, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (w <= 0)
            return false;
        p += w;
        n -= (size_t)w;
    }
    return true;
}

/* Answer ConnectReject or ConnectNoMatch and close (VITCP-4.3-REJECT,
 * VITCP-4.3-NOMATCH, VITCP-4-CLOSE-AFTER-REFUSE). Unlinks and frees c. */
void conn_refuse(struct vipl_conn *c, unsigned type)
{
    struct vipl_nic *nic = c->nic;
    if (!(type == VW_VITCP_CONNECT_NOMATCH && nic->fault == VIPL_FAULT_SILENT_NOMATCH) && c->fd >= 0) {
        struct vw_vitcp_enc enc;
        uint8_t buf[64];
        /* V6: the trailer is the sender's option; send it when both offer CRC
         * (or always, with the NIC option refusecrc). */
        vw_vitcp_enc_init(&enc, type, (nic->crc_on && c->req_crc) || nic->refuse_crc);
        if (nic->fault == VIPL_FAULT_BAD_VERSION)
            enc.hdr.version = 2;
        size_t n = vw_vitcp_encode(&enc, buf, sizeof buf);
        send_all(c->fd, buf, n);
        if (nic->fault == VIPL_FAULT_DATA_AFTER_REJECT) {
            vw_vitcp_enc_init(&enc, VW_VITCP_NOP, false);
            n = vw_vitcp_encode(&enc, buf, sizeof buf);
            send_all(c->fd, buf, n);
            c->linger = true; /* keep TCP open for a while */
            c->state = IN_HELD;
            c->deadline_ms = now_ms() + 5000;
            if (handle_valid(c, OBJ_CONN))
                handle_remove(c);
            return;
        }
        shutdown(c->fd, SHUT_WR);
    }
    unlink_conn(c);
    if (handle_valid(c, OBJ_CONN))
        handle_remove(c);
    conn_free(c);
}

static bool disc_match(const uint8_t *want, uint16_t want_len, const uint8_t *have, uint16_t have_len)
{
    return want_len == have_len && memcmp(want, have, want_len) == 0;
}

struct vipl_vi *p2p_listener_for(struct vipl_nic *nic, const struct vw_vitcp_ce *ce)
{
    for (struct vipl_vi *vi = nic->vis; vi; vi = vi->next)
        if (vi->phase == PH_P2P_LISTEN && vi->state == VIP_STATE_CONNECT_PENDING &&
            disc_match(vi->local_disc, vi->local_disc_len, ce->called_disc, ce->called_disc_len) &&
            disc_match(vi->remote_disc, vi->remote_disc_len, ce->calling_disc, ce->calling_disc_len))
            return vi;
    return NULL;
}

static bool attrs_acceptable(const struct vw_vitcp_ce *ce)
{
    unsigned level = ce->attrs & VW_VITCP_ATTR_RELIABILITY_MASK;
    /* V19: exactly one reliability bit, MTU not 0 (VITCP-3.3-ONE-LEVEL, -MTU-NONZERO) */
    return (level == 1 || level == 2 || level == 4) && ce->mtu != 0;
}

/* Move the held connection into vi and answer ConnectAccept. */
VIP_RETURN conn_accept_locked(struct vipl_conn *c, struct vipl_vi *vi)
{
    if (!vi_conn_init(vi, c->fd))
        return VIP_ERROR_RESOURCE;
    c->fd = -1;
    vi->peer_sa = c->peer_sa;
    vi->peer_sa_len = c->peer_sa_len;
    vi->local_disc_len = c->req_ce.called_disc_len;
    memcpy(vi->local_disc, c->req_ce.called_disc, VW_VITCP_DISC_MAX);
    vi->remote_disc_len = c->req_ce.calling_disc_len;
    memcpy(vi->remote_disc, c->req_ce.calling_disc, VW_VITCP_DISC_MAX);
    uint32_t mtu = c->req_ce.mtu < vi->attrs.MaxTransferSize ? c->req_ce.mtu : (uint32_t)vi->attrs.MaxTransferSize;
    vi->mtu = mtu; /* VITCP-3.3-MTU-LESSER, A2 */
    bool crc = vi->nic->crc_on && c->req_crc;
    vi_encode_ce(vi, VW_VITCP_CONNECT_ACCEPT, &c->req_ce, c->req_hdr.msg_num);
    /* vi_open() semantics for the passive side */
    vi->crc = crc;
    vw_vitcp_framer_set_crc(&vi->framer, crc ? VW_VITCP_CRC_ON : VW_VITCP_CRC_OFF);
    vi->attrs.MaxTransferSize = mtu;
    vi->peer_window = c->req_ce.rdma_read_window;
    vi->peer_urgent = c->req_ce.opt_urgent;
    vi->peer_dfc = (c->req_ce.attrs & VW_VITCP_ATTR_DFC) != 0;
    vi->rx_expected = c->req_hdr.msg_num + 1;
    vi->rx_last_ok = c->req_hdr.msg_num;
    vi->peer_rx_posted = c->req_hdr.rx_desc_posted;
    memset(&vi->remote_attrs, 0, sizeof vi->remote_attrs);
    vi->remote_attrs.ReliabilityLevel = c->req_ce.attrs & VW_VITCP_ATTR_RELIABILITY_MASK;
    vi->remote_attrs.MaxTransferSize = mtu;
    vi->remote_attrs.EnableRdmaWrite = (c->req_ce.attrs & VW_VITCP_ATTR_RDMA_WRITE) != 0;
    vi->remote_attrs.EnableRdmaRead = (c->req_ce.attrs & VW_VITCP_ATTR_RDMA_READ) != 0;
    vi->state = VIP_STATE_CONNECTED;
    vi->phase = PH_OPEN;
    vi->connect_result = VIP_SUCCESS;
    vi_pump(vi); /* writes the ConnectAccept */
    pthread_cond_broadcast(&vi->nic->cond);
    nic_wake(vi->nic);
    return VIP_SUCCESS;
}

static void conn_on_segment(void *ctx, const uint8_t *raw, size_t len, uint64_t stream_off,
                            const struct vw_vitcp_seg *seg, enum vw_req err, const struct vw_findings *fs)
{
    (void)raw, (void)stream_off, (void)fs;
    struct vipl_conn *c = ctx;
    if (c->dead)
        return;
    c->nic->stats.SegmentsReceived++;
    c->nic->stats.BytesReceived += len;
    /* V19, V24, V10: anything but a well-formed version-1 ConnectRequest as
     * the first segment closes without an answer. */
    if (c->state != IN_WAIT_REQ || err != VW_REQ_NONE || seg->hdr.version != VW_VITCP_VERSION ||
        seg->hdr.type != VW_VITCP_CONNECT_REQUEST || !seg->has_ce ||
        seg->ce.calling_disc_len > VW_VITCP_DISC_MAX || seg->ce.called_disc_len > VW_VITCP_DISC_MAX ||
        (seg->ce.opt_crc && !seg->crc_ok)) {
        c->nic->stats.ProtocolErrors++;
        if (c->nic->fault == VIPL_FAULT_KEEP_MALFORMED_OPEN)
            return; /* ignores it and keeps waiting, TCP open */
        c->dead = true;
        return;
    }
    c->req_hdr = seg->hdr;
    c->req_ce = seg->ce;
    c->req_ce.options = NULL; /* points into the framer's buffer */
    c->req_ce.options_len = 0;
    c->req_crc = seg->ce.opt_crc;
    if (c->nic->host && !c->routed && !c->req_raw && (c->req_raw = malloc(len)) != NULL) {
        memcpy(c->req_raw, raw, len); /* the front may hand it to another NIC */
        c->req_raw_len = len;
    }
    c->bad_attrs = !attrs_acceptable(&seg->ce);
    c->state = IN_HELD;
    c->deadline_ms = now_ms() + c->nic->grace_ms;
    if (seg->ce.attrs & VW_VITCP_ATTR_P2P) {
        struct vipl_vi *vi = p2p_listener_for(c->nic, &seg->ce);
        if (vi) {
            unsigned mine = vi->attrs.ReliabilityLevel & VW_VITCP_ATTR_RELIABILITY_MASK;
            if (c->bad_attrs || (seg->ce.attrs & VW_VITCP_ATTR_RELIABILITY_MASK) != mine) {
                c->dead = true; /* refused below, after the feed */
                c->bad_attrs = true;
                return;
            }
            vi->p2p = true;
            conn_accept_locked(c, vi);
            c->dead = true;
        }
    }
    pthread_cond_broadcast(&c->nic->cond);
}

void conn_on_readable(struct vipl_conn *c)
{
    struct vipl_nic *nic = c->nic;
    ssize_t n = recv(c->fd, nic->rxbuf, nic->rxbuf_cap, MSG_DONTWAIT);
    if (n > 0) {
        if (vw_vitcp_framer_feed(&c->framer, nic->rxbuf, (size_t)n, conn_on_segment, c) != VW_REQ_NONE)
            c->dead = true;
        if (!c->dead && host_route_held(c))
            return; /* another NIC of the host waits on its discriminator */
    } else if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
        if (c->state == IN_CLAIMED) {
            c->peer_gone = true; /* VipConnectAccept will find the connection lost */
            return;
        }
        c->dead = true;
    }
    if (c->dead) {
        if (c->fd >= 0 && c->bad_attrs && c->state == IN_HELD) {
            conn_refuse(c, VW_VITCP_CONNECT_REJECT);
            return;
        }
        if (c->state == IN_CLAIMED) { /* the consumer still holds the handle */
            c->peer_gone = true;
            c->dead = false;
            return;
        }
        unlink_conn(c);
        conn_free(c);
    }
}

void conn_release(struct vipl_conn *c)
{
    unlink_conn(c);
    if (handle_valid(c, OBJ_CONN))
        handle_remove(c);
    conn_free(c);
}

void conn_adopt(struct vipl_nic *nic, int fd, const uint8_t *req, size_t len)
{
    struct vipl_conn *c = calloc(1, sizeof *c);
    if (!c || vw_vitcp_framer_init(&c->framer, VW_VITCP_CRC_OFF) != 0) {
        free(c);
        close(fd);
        return;
    }
    c->nic = nic;
    c->fd = fd;
    c->routed = true;
    c->state = IN_WAIT_REQ;
    c->deadline_ms = now_ms() + VIPL_INCOMING_TIMEOUT_MS; /* V21 */
    c->peer_sa_len = sizeof c->peer_sa;
    if (getpeername(fd, (struct sockaddr *)&c->peer_sa, &c->peer_sa_len) < 0)
        c->peer_sa_len = 0;
    c->next = nic->conns;
    nic->conns = c;
    nic->stats.ConnectionsAccepted++;
    if (vw_vitcp_framer_feed(&c->framer, req, len, conn_on_segment, c) != VW_REQ_NONE || c->state == IN_WAIT_REQ)
        c->dead = true;
    if (c->dead) {
        if (c->fd >= 0 && c->bad_attrs && c->state == IN_HELD) {
            conn_refuse(c, VW_VITCP_CONNECT_REJECT);
            return;
        }
        conn_release(c);
    }
    nic_wake(nic); /* poll the new socket */
}

/* ---------------------------------------------------------- addresses */
static bool addr_ok(const VIP_NET_ADDRESS *a)
{
    return a && (a->HostAddressLen == 4 || a->HostAddressLen == 16) && a->DiscriminatorLen <= VW_VITCP_DISC_MAX;
}

static bool disc_ok(const VIP_NET_ADDRESS *a)
{
    return a && (a->HostAddressLen == 0 || a->HostAddressLen == 4 || a->HostAddressLen == 16) &&
           a->DiscriminatorLen <= VW_VITCP_DISC_MAX;
}

static void set_endpoints(struct vipl_vi *vi, const VIP_NET_ADDRESS *local, const VIP_NET_ADDRESS *remote)
{
    memset(vi->local_disc, 0, sizeof vi->local_disc);
    memset(vi->remote_disc, 0, sizeof vi->remote_disc);
    vi->local_host_len = local->HostAddressLen;
    memcpy(vi->local_host, local->HostAddress, local->HostAddressLen);
    vi->local_disc_len = local->DiscriminatorLen;
    memcpy(vi->local_disc, local->HostAddress + local->HostAddressLen, local->DiscriminatorLen);
    vi->remote_host_len = remote->HostAddressLen;
    memcpy(vi->remote_host, remote->HostAddress, remote->HostAddressLen);
    vi->remote_disc_len = remote->DiscriminatorLen;
    memcpy(vi->remote_disc, remote->HostAddress + remote->HostAddressLen, remote->DiscriminatorLen);
    memset(&vi->peer_sa, 0, sizeof vi->peer_sa);
    uint16_t port = ns_port_for(vi->nic, remote->HostAddress, remote->HostAddressLen);
    if (remote->HostAddressLen == 4) {
        struct sockaddr_in *a = (struct sockaddr_in *)&vi->peer_sa;
        a->sin_family = AF_INET;
        a->sin_port = htons(port);
        memcpy(&a->sin_addr, remote->HostAddress, 4);
        vi->peer_sa_len = sizeof *a;
    } else {
        struct sockaddr_in6 *a = (struct sockaddr_in6 *)&vi->peer_sa;
        a->sin6_family = AF_INET6;
        a->sin6_port = htons(port);
        memcpy(&a->sin6_addr, remote->HostAddress, 16);
        vi->peer_sa_len = sizeof *a;
    }
}

/* V20/A15: addresses as 128-bit values (IPv4 mapped), then discriminators. */
static void as_v6(const uint8_t *a, uint16_t len, uint8_t out[16])
{
    static const uint8_t prefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF};
    if (len == 4) {
        memcpy(out, prefix, 12);
        memcpy(out + 12, a, 4);
    } else {
        memcpy(out, a, 16);
    }
}

static int p2p_compare(const struct vipl_vi *vi)
{
    uint8_t l[16], r[16];
    as_v6(vi->local_host, vi->local_host_len, l);
    as_v6(vi->remote_host, vi->remote_host_len, r);
    int c = memcmp(l, r, 16);
    if (c)
        return c;
    size_t n = vi->local_disc_len < vi->remote_disc_len ? vi->local_disc_len : vi->remote_disc_len;
    c = memcmp(vi->local_disc, vi->remote_disc, n);
    if (c)
        return c;
    return (int)vi->local_disc_len - (int)vi->remote_disc_len;
}

/* ------------------------------------------------------------- API */
VIP_RETURN VipConnectWait(VIP_NIC_HANDLE NicHandle, VIP_NET_ADDRESS *LocalAddr, VIP_ULONG Timeout,
                          VIP_NET_ADDRESS *RemoteAddr, VIP_VI_ATTRIBUTES *RemoteViAttribs,
                          VIP_CONN_HANDLE *ConnHandle)
{
    struct vipl_nic *nic = NicHandle;
    if (!handle_valid(nic, OBJ_NIC) || !disc_ok(LocalAddr) || !RemoteAddr || !RemoteViAttribs || !ConnHandle)
        return VIP_INVALID_PARAMETER;
    int64_t deadline = deadline_after(Timeout);
    pthread_mutex_lock(&nic->lock);
    if (nic->listen_fd < 0 && !host_can_wait(nic)) {
        nic_unlock(nic);
        return VIP_ERROR_RESOURCE;
    }
    const uint8_t *want = LocalAddr->HostAddress + LocalAddr->HostAddressLen;
    host_wait_begin(nic, want, LocalAddr->DiscriminatorLen);
    for (;;) {
        for (struct vipl_conn *c = nic->conns, *next; c; c = next) {
            next = c->next;
            if (c->state != IN_HELD || c->linger)
                continue;
            /* A4: exact match, or any with DiscriminatorLen 0 */
            if (LocalAddr->DiscriminatorLen &&
                !disc_match(want, LocalAddr->DiscriminatorLen, c->req_ce.called_disc, c->req_ce.called_disc_len))
                continue;
            /* V19 (conformance decision C4): a peer-to-peer request at a
             * client/server wait matched the discriminator but not the
             * attribute: ConnectReject (VITCP-3.3-P2P-MATCH). A request that
             * a pending VipConnectPeerRequest matches was taken on arrival. */
            if (c->bad_attrs || (c->req_ce.attrs & VW_VITCP_ATTR_P2P)) {
                conn_refuse(c, VW_VITCP_CONNECT_REJECT);
                continue;
            }
            c->state = IN_CLAIMED;
            handle_add(c, OBJ_CONN);
            if (c->peer_sa.ss_family == AF_INET6) {
                RemoteAddr->HostAddressLen = 16;
                memcpy(RemoteAddr->HostAddress, &((struct sockaddr_in6 *)&c->peer_sa)->sin6_addr, 16);
            } else {
                RemoteAddr->HostAddressLen = 4;
                memcpy(RemoteAddr->HostAddress, &((struct sockaddr_in *)&c->peer_sa)->sin_addr, 4);
            }
            RemoteAddr->DiscriminatorLen = c->req_ce.calling_disc_len;
            memcpy(RemoteAddr->HostAddress + RemoteAddr->HostAddressLen, c->req_ce.calling_disc,
                   c->req_ce.calling_disc_len);
            memset(RemoteViAttribs, 0, sizeof *RemoteViAttribs);
            RemoteViAttribs->ReliabilityLevel = c->req_ce.attrs & VW_VITCP_ATTR_RELIABILITY_MASK;
            RemoteViAttribs->MaxTransferSize = c->req_ce.mtu;
            RemoteViAttribs->EnableRdmaWrite = (c->req_ce.attrs & VW_VITCP_ATTR_RDMA_WRITE) != 0;
            RemoteViAttribs->EnableRdmaRead = (c->req_ce.attrs & VW_VITCP_ATTR_RDMA_READ) != 0;
            *ConnHandle = c;
            host_wait_end(nic, want, LocalAddr->DiscriminatorLen);
            nic_unlock(nic);
            return VIP_SUCCESS;
        }
        if (!nic_wait(nic, deadline))
            break;
    }
    host_wait_end(nic, want, LocalAddr->DiscriminatorLen);
    nic_unlock(nic);
    return VIP_TIMEOUT;
}

VIP_RETURN VipConnectAccept(VIP_CONN_HANDLE ConnHandle, VIP_VI_HANDLE ViHandle)
{
    struct vipl_conn *c = ConnHandle;
    struct vipl_vi *vi = ViHandle;
    if (!handle_valid(c, OBJ_CONN) || !handle_valid(vi, OBJ_VI) || c->nic != vi->nic)
        return VIP_INVALID_PARAMETER;
    struct vipl_nic *nic = c->nic;
    pthread_mutex_lock(&nic->lock);
    VIP_RETURN rc = VIP_SUCCESS;
    if (vi->state != VIP_STATE_IDLE)
        rc = VIP_INVALID_STATE; /* A3 */
    else if ((c->req_ce.attrs & VW_VITCP_ATTR_RELIABILITY_MASK) !=
             (vi->attrs.ReliabilityLevel & VW_VITCP_ATTR_RELIABILITY_MASK))
        rc = VIP_INVALID_RELIABILITY_LEVEL; /* A14: nothing sent, request stays pending */
    if (rc == VIP_SUCCESS) {
        vi->p2p = false;
        rc = conn_accept_locked(c, vi);
        if (rc == VIP_SUCCESS) {
            if (c->peer_gone)
                vi_fail(vi, true, VIP_ERROR_CONN_LOST);
            unlink_conn(c);
            handle_remove(c);
            conn_free(c);
        }
    }
    nic_unlock(nic);
    return rc;
}

VIP_RETURN VipConnectReject(VIP_CONN_HANDLE ConnHandle)
{
    struct vipl_conn *c = ConnHandle;
    if (!handle_valid(c, OBJ_CONN))
        return VIP_INVALID_PARAMETER;
    struct vipl_nic *nic = c->nic;
    pthread_mutex_lock(&nic->lock);
    conn_refuse(c, VW_VITCP_CONNECT_REJECT);
    nic_unlock(nic);
    return VIP_SUCCESS;
}

static VIP_RETURN start_request(struct vipl_vi *vi, VIP_NET_ADDRESS *LocalAddr, VIP_NET_ADDRESS *RemoteAddr,
                                VIP_ULONG Timeout, bool p2p)
{
    if (vi->state != VIP_STATE_IDLE)
        return VIP_INVALID_STATE;
    set_endpoints(vi, LocalAddr, RemoteAddr);
    vi->p2p = p2p;
    vi->peer_req = p2p;
    vi->state = VIP_STATE_CONNECT_PENDING;
    vi->connect_result = VIP_NOT_DONE;
    vi->deadline_ms = deadline_after(Timeout);
    vi->retry_backoff_ms = 0;
    if (p2p && p2p_compare(vi) < 0) {
        if (vi->nic->listen_fd < 0 && !host_can_wait(vi->nic)) {
            vi->state = VIP_STATE_IDLE;
            return VIP_ERROR_RESOURCE;
        }
        vi->phase = PH_P2P_LISTEN; /* the higher address connects (V20) */
        /* A request may already be held. */
        for (struct vipl_conn *c = vi->nic->conns; c; c = c->next)
            if (c->state == IN_HELD && !c->linger && (c->req_ce.attrs & VW_VITCP_ATTR_P2P) &&
                p2p_listener_for(vi->nic, &c->req_ce) == vi) {
                if (!c->bad_attrs && (c->req_ce.attrs & VW_VITCP_ATTR_RELIABILITY_MASK) ==
                                         (vi->attrs.ReliabilityLevel & VW_VITCP_ATTR_RELIABILITY_MASK)) {
                    conn_accept_locked(c, vi);
                    unlink_conn(c);
                    conn_free(c);
                }
                break;
            }
    } else {
        vi_start_connect(vi);
    }
    nic_wake(vi->nic);
    return VIP_SUCCESS;
}

VIP_RETURN VipConnectRequest(VIP_VI_HANDLE ViHandle, VIP_NET_ADDRESS *LocalAddr, VIP_NET_ADDRESS *RemoteAddr,
                             VIP_ULONG Timeout, VIP_VI_ATTRIBUTES *RemoteViAttribs)
{
    struct vipl_vi *vi = ViHandle;
    if (!handle_valid(vi, OBJ_VI) || !disc_ok(LocalAddr) || !addr_ok(RemoteAddr) || !RemoteViAttribs)
        return VIP_INVALID_PARAMETER;
    if (Timeout == 0)
        return VIP_TIMEOUT; /* 9.4.4: zero is invalid and times out at once */
    struct vipl_nic *nic = vi->nic;
    pthread_mutex_lock(&nic->lock);
    VIP_RETURN rc = start_request(vi, LocalAddr, RemoteAddr, Timeout, false);
    if (rc == VIP_SUCCESS) {
        while (vi->connect_result == VIP_NOT_DONE)
            nic_wait(nic, -1); /* the progress thread enforces the deadline */
        rc = vi->connect_result;
        if (rc == VIP_SUCCESS)
            *RemoteViAttribs = vi->remote_attrs;
    }
    nic_unlock(nic);
    return rc;
}

VIP_RETURN VipConnectPeerRequest(VIP_VI_HANDLE ViHandle, VIP_NET_ADDRESS *LocalAddr, VIP_NET_ADDRESS *RemoteAddr,
                                 VIP_ULONG Timeout)
{
    struct vipl_vi *vi = ViHandle;
    if (!handle_valid(vi, OBJ_VI) || !addr_ok(LocalAddr) || !addr_ok(RemoteAddr))
        return VIP_INVALID_PARAMETER;
    if (Timeout == 0)
        return VIP_TIMEOUT;
    struct vipl_nic *nic = vi->nic;
    pthread_mutex_lock(&nic->lock);
    VIP_RETURN rc = start_request(vi, LocalAddr, RemoteAddr, Timeout, true);
    nic_unlock(nic);
    return rc;
}

static VIP_RETURN peer_result(struct vipl_vi *vi, VIP_VI_ATTRIBUTES *attrs)
{
    VIP_RETURN rc = vi->connect_result;
    if (rc == VIP_SUCCESS && attrs)
        *attrs = vi->remote_attrs;
    return rc;
}

VIP_RETURN VipConnectPeerDone(VIP_VI_HANDLE ViHandle, VIP_VI_ATTRIBUTES *RemoteViAttribs)
{
    struct vipl_vi *vi = ViHandle;
    if (!handle_valid(vi, OBJ_VI) || !RemoteViAttribs)
        return VIP_INVALID_PARAMETER;
    pthread_mutex_lock(&vi->nic->lock);
    VIP_RETURN rc = vi->peer_req ? peer_result(vi, RemoteViAttribs) : VIP_INVALID_STATE;
    nic_unlock(vi->nic);
    return rc;
}

VIP_RETURN VipConnectPeerWait(VIP_VI_HANDLE ViHandle, VIP_VI_ATTRIBUTES *RemoteViAttribs)
{
    struct vipl_vi *vi = ViHandle;
    if (!handle_valid(vi, OBJ_VI) || !RemoteViAttribs)
        return VIP_INVALID_PARAMETER;
    struct vipl_nic *nic = vi->nic;
    pthread_mutex_lock(&nic->lock);
    VIP_RETURN rc;
    if (!vi->peer_req) {
        rc = VIP_INVALID_STATE;
    } else {
        while (vi->connect_result == VIP_NOT_DONE)
            nic_wait(nic, -1);
        rc = peer_result(vi, RemoteViAttribs);
    }
    nic_unlock(nic);
    return rc;
}

VIP_RETURN VipDisconnect(VIP_VI_HANDLE ViHandle)
{
    struct vipl_vi *vi = ViHandle;
    if (!handle_valid(vi, OBJ_VI))
        return VIP_INVALID_PARAMETER;
    struct vipl_nic *nic = vi->nic;
    pthread_mutex_lock(&nic->lock);
    /* A5: allowed in every state; flush, go Idle, close TCP with FIN. */
    if (vi->fd >= 0 && nic->fault == VIPL_FAULT_NO_CLOSE_ON_DISCONNECT) {
        struct vipl_conn *keep = calloc(1, sizeof *keep);
        if (keep && vw_vitcp_framer_init(&keep->framer, VW_VITCP_CRC_OFF) == 0) {
            keep->nic = nic;
            keep->fd = vi->fd;
            keep->linger = true;
            keep->state = IN_HELD;
            keep->deadline_ms = now_ms() + 10000;
            keep->next = nic->conns;
            nic->conns = keep;
            vi->fd = -1;
            vi_ep_update(vi);
        } else {
            free(keep);
        }
    }
    vi_close_fd(vi, false);
    vi->phase = PH_NONE;
    vi_flush_queues(vi);
    if (vi->connect_result == VIP_NOT_DONE)
        vi->connect_result = VIP_ERROR_RESOURCE;
    vi->p2p = vi->peer_req = false;
    vi->state = VIP_STATE_IDLE;
    vi->close_after_flush = false;
    vi->rx_in_msg = false;
    pthread_cond_broadcast(&nic->cond);
    nic_unlock(nic);
    return VIP_SUCCESS;
}
