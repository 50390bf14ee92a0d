/* The capture of a run: each case's connection as a TCP flow (datagram links:
 * each datagram as UDP) in the run's
 * pcapng (the frames a verdict names), between the real addresses. */
#include "conform/core.h"

#include <arpa/inet.h>
#include <linux/if_packet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "vitcp/pcap_writer.h"
#include "vitcp/tcp_flow.h"

/* An address as text and port; false when it is neither IPv4 nor IPv6. */
static bool addr_text(const struct sockaddr *a, char *ip, size_t iplen, uint16_t *port)
{
    if (a->sa_family == AF_INET) {
        const struct sockaddr_in *in = (const void *)a;
        *port = ntohs(in->sin_port);
        return inet_ntop(AF_INET, &in->sin_addr, ip, (socklen_t)iplen) != NULL;
    }
    if (a->sa_family == AF_INET6) {
        const struct sockaddr_in6 *in6 = (const void *)a;
        *port = ntohs(in6->sin6_port);
        return inet_ntop(AF_INET6, &in6->sin6_addr, ip, (socklen_t)iplen) != NULL;
    }
    return false;
}

bool cf_capture_flow_open(struct cf_engine *e, int fd, bool passive, struct vn_tcp_flow *flow)
{
    if (!e->capture)
        return false;
    struct sockaddr_storage local, peer;
    socklen_t ll = sizeof local, pl = sizeof peer;
    char lip[INET6_ADDRSTRLEN] = "10.0.0.1", pip[INET6_ADDRSTRLEN] = "10.0.0.2";
    uint16_t lport = 40000, pport = (uint16_t)atoi(e->port);
    /* the real addresses when both are IPv4 or both IPv6, else the defaults */
    if (getsockname(fd, (struct sockaddr *)&local, &ll) == 0 &&
        getpeername(fd, (struct sockaddr *)&peer, &pl) == 0 && local.ss_family == peer.ss_family &&
        addr_text((const struct sockaddr *)&local, lip, sizeof lip, &lport))
        addr_text((const struct sockaddr *)&peer, pip, sizeof pip, &pport);
    int ok = passive ? vn_tcp_flow_init(flow, vn_pcap_sink(e->capture), pip, pport, lip, lport)
                     : vn_tcp_flow_init(flow, vn_pcap_sink(e->capture), lip, lport, pip, pport);
    if (ok != 0)
        return false;
    flow->auto_ack = true;
    return vn_tcp_handshake(flow) == 0;
}

void cf_capture_datagram(struct cf_engine *e, int fd, const struct sockaddr *peer, socklen_t peer_len, bool out,
                         const uint8_t *data, size_t len)
{
    if (!e->capture || !peer || peer_len == 0)
        return;
    if (peer->sa_family == AF_PACKET) {
        /* an Ethernet link: the frame between the interface's MAC and the peer's */
        struct sockaddr_ll me;
        socklen_t ml = sizeof me;
        const struct sockaddr_ll *p = (const void *)peer;
        uint8_t lmac[6] = {0}, pmac[6] = {0};
        if (getsockname(fd, (struct sockaddr *)&me, &ml) == 0 && me.sll_halen == 6)
            memcpy(lmac, me.sll_addr, 6);
        if (p->sll_halen == 6)
            memcpy(pmac, p->sll_addr, 6);
        uint16_t type = ntohs(p->sll_protocol);
        if (out)
            vn_eth_send(vn_pcap_sink(e->capture), lmac, pmac, type, data, len);
        else
            vn_eth_send(vn_pcap_sink(e->capture), pmac, lmac, type, data, len);
        return;
    }
    struct sockaddr_storage local;
    socklen_t ll = sizeof local;
    char lip[INET6_ADDRSTRLEN], pip[INET6_ADDRSTRLEN];
    uint16_t lport, pport;
    if (getsockname(fd, (struct sockaddr *)&local, &ll) < 0 ||
        !addr_text((const struct sockaddr *)&local, lip, sizeof lip, &lport) ||
        !addr_text(peer, pip, sizeof pip, &pport))
        return;
    if (strcmp(lip, "0.0.0.0") == 0)
        snprintf(lip, sizeof lip, "127.0.0.1"); /* bound to any: the loopback's */
    else if (strcmp(lip, "::") == 0)
        snprintf(lip, sizeof lip, "::1");
    struct vn_endpoint l, p;
    if (vn_endpoint_set(&l, lip, lport) < 0 || vn_endpoint_set(&p, pip, pport) < 0)
        return;
    if (out)
        vn_udp_send(vn_pcap_sink(e->capture), &l, &p, data, len);
    else
        vn_udp_send(vn_pcap_sink(e->capture), &p, &l, data, len);
}
