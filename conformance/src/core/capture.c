/* The capture of a run: each case's connection as a TCP flow in the run's
 * pcapng (the frames a verdict names), between the real addresses. */
#include "conform/core.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <sys/socket.h>

#include "vitcp/pcap_writer.h"
#include "vitcp/tcp_flow.h"

bool cf_capture_flow_open(struct cf_engine *e, int fd, bool passive, struct vn_tcp_flow *flow)
{
    if (!e->capture)
        return false;
    struct sockaddr_storage local, peer;
    socklen_t ll = sizeof local, pl = sizeof peer;
    char lip[INET6_ADDRSTRLEN] = "10.0.0.1", pip[INET6_ADDRSTRLEN] = "10.0.0.2";
    uint16_t lport = 40000, pport = (uint16_t)atoi(e->port);
    if (getsockname(fd, (struct sockaddr *)&local, &ll) == 0 &&
        getpeername(fd, (struct sockaddr *)&peer, &pl) == 0 && local.ss_family == peer.ss_family) {
        if (local.ss_family == AF_INET) {
            const struct sockaddr_in *a = (const void *)&local, *b = (const void *)&peer;
            inet_ntop(AF_INET, &a->sin_addr, lip, sizeof lip);
            inet_ntop(AF_INET, &b->sin_addr, pip, sizeof pip);
            lport = ntohs(a->sin_port);
            pport = ntohs(b->sin_port);
        } else if (local.ss_family == AF_INET6) {
            const struct sockaddr_in6 *a = (const void *)&local, *b = (const void *)&peer;
            inet_ntop(AF_INET6, &a->sin6_addr, lip, sizeof lip);
            inet_ntop(AF_INET6, &b->sin6_addr, pip, sizeof pip);
            lport = ntohs(a->sin6_port);
            pport = ntohs(b->sin6_port);
        }
    }
    int ok = passive ? vn_tcp_flow_init(flow, vn_pcap_sink(e->capture), pip, pport, lip, lport)
                     : vn_tcp_flow_init(flow, vn_pcap_sink(e->capture), lip, lport, pip, pport);
    if (ok != 0)
        return false;
    flow->auto_ack = true;
    return vn_tcp_handshake(flow) == 0;
}
