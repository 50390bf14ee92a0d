/* A synthetic TCP connection with consistent sequence and ACK numbers. */
#include "vitcp/tcp_flow.h"

#include <string.h>

int vn_tcp_flow_init(struct vn_tcp_flow *f, struct vn_sink sink, const char *client_ip,
                     uint16_t client_port, const char *server_ip, uint16_t server_port)
{
    memset(f, 0, sizeof *f);
    f->sink = sink;
    if (vn_endpoint_set(&f->ep[VN_C2S], client_ip, client_port) != 0 ||
        vn_endpoint_set(&f->ep[VN_S2C], server_ip, server_port) != 0 ||
        f->ep[VN_C2S].ip.family != f->ep[VN_S2C].ip.family)
        return -1;
    f->isn[VN_C2S] = 1000;
    f->isn[VN_S2C] = 5000;
    f->mss = 1460;
    f->window = 65535;
    f->ip_id[VN_C2S] = 1;
    f->ip_id[VN_S2C] = 1;
    return 0;
}

/* Emit one segment; seq_num and ack are absolute. */
static int emit(struct vn_tcp_flow *f, enum vn_dir dir, uint8_t flags, uint32_t seq, uint16_t urgent,
                const uint8_t *options, size_t options_len, const uint8_t *data, size_t len)
{
    enum vn_dir peer = dir == VN_C2S ? VN_S2C : VN_C2S;
    uint8_t opts[40];
    if (f->timestamps && options_len + 12 <= sizeof opts) {
        /* Caller's options, then NOP NOP TS: TSval ticks per segment, TSecr echoes the peer. */
        if (options_len)
            memcpy(opts, options, options_len);
        uint8_t *t = opts + options_len;
        t[0] = 1;
        t[1] = 1;
        t[2] = 8;
        t[3] = 10;
        uint32_t val = ++f->ts_val[dir];
        uint32_t ecr = f->ts_val[peer];
        for (int i = 0; i < 4; i++) {
            t[4 + i] = (uint8_t)(val >> (24 - 8 * i));
            t[8 + i] = (uint8_t)(ecr >> (24 - 8 * i));
        }
        options = opts;
        options_len += 12;
    }
    struct vn_tcp_hdr_spec s = {
        .src = &f->ep[dir],
        .dst = &f->ep[peer],
        .vlan = f->vlan,
        .seq = seq,
        .flags = flags,
        .window = f->window,
        .urgent = urgent,
        .options = options,
        .options_len = options_len,
        .ip_id = f->ip_id[dir]++,
    };
    if (flags & VN_TCP_ACK) {
        /* Acknowledge everything the peer has sent, including its SYN/FIN. */
        uint64_t peer_next = f->next_off[peer] + (f->fin_sent[peer] ? 1u : 0u);
        s.ack = (uint32_t)(f->isn[peer] + 1u + peer_next);
        f->acked_off[dir] = f->next_off[peer];
    }
    uint8_t frame[VN_FRAME_MAX];
    size_t n = vn_build_tcp(frame, sizeof frame, &s, data, len);
    if (n == 0)
        return -1;
    return f->sink.emit(f->sink.ctx, frame, n);
}

int vn_tcp_handshake(struct vn_tcp_flow *f)
{
    /* MSS option on SYN and SYN-ACK so analyzers know the segment size. */
    uint8_t mss_opt[4] = {2, 4, (uint8_t)(f->mss >> 8), (uint8_t)f->mss};
    if (emit(f, VN_C2S, VN_TCP_SYN, f->isn[VN_C2S], 0, mss_opt, 4, NULL, 0) != 0)
        return -1;
    if (emit(f, VN_S2C, VN_TCP_SYN | VN_TCP_ACK, f->isn[VN_S2C], 0, mss_opt, 4, NULL, 0) != 0)
        return -1;
    return emit(f, VN_C2S, VN_TCP_ACK, vn_tcp_seq(f, VN_C2S, 0), 0, NULL, 0, NULL, 0);
}

int vn_tcp_send_at(struct vn_tcp_flow *f, enum vn_dir dir, uint64_t offset, const uint8_t *data,
                   size_t len)
{
    return vn_tcp_raw(f, dir, VN_TCP_ACK | VN_TCP_PSH, offset, 0, NULL, 0, data, len);
}

int vn_tcp_raw(struct vn_tcp_flow *f, enum vn_dir dir, uint8_t flags, uint64_t offset,
               uint16_t urgent, const uint8_t *options, size_t options_len,
               const uint8_t *data, size_t len)
{
    if (emit(f, dir, flags, vn_tcp_seq(f, dir, offset), urgent, options, options_len, data, len) != 0)
        return -1;
    if (offset + len > f->next_off[dir])
        f->next_off[dir] = offset + len;
    return 0;
}

int vn_tcp_send_segment(struct vn_tcp_flow *f, enum vn_dir dir, const uint8_t *data, size_t len)
{
    return vn_tcp_send_at(f, dir, f->next_off[dir], data, len);
}

int vn_tcp_send(struct vn_tcp_flow *f, enum vn_dir dir, const uint8_t *data, size_t len)
{
    size_t mss = f->mss ? f->mss : 1460;
    size_t done = 0;
    do {
        size_t n = len - done < mss ? len - done : mss;
        uint8_t flags = VN_TCP_ACK | (done + n == len ? VN_TCP_PSH : 0);
        if (vn_tcp_raw(f, dir, flags, f->next_off[dir], 0, NULL, 0, data + done, n) != 0)
            return -1;
        done += n;
    } while (done < len);
    if (f->auto_ack)
        return vn_tcp_ack(f, dir == VN_C2S ? VN_S2C : VN_C2S);
    return 0;
}

void vn_tcp_skip(struct vn_tcp_flow *f, enum vn_dir dir, uint64_t n) { f->next_off[dir] += n; }

int vn_tcp_ack(struct vn_tcp_flow *f, enum vn_dir dir)
{
    uint32_t seq = vn_tcp_seq(f, dir, f->next_off[dir]) + (f->fin_sent[dir] ? 1u : 0u);
    return emit(f, dir, VN_TCP_ACK, seq, 0, NULL, 0, NULL, 0);
}

int vn_tcp_fin(struct vn_tcp_flow *f, enum vn_dir dir)
{
    if (emit(f, dir, VN_TCP_FIN | VN_TCP_ACK, vn_tcp_seq(f, dir, f->next_off[dir]), 0, NULL, 0,
             NULL, 0) != 0)
        return -1;
    f->fin_sent[dir] = true;
    return 0;
}

int vn_tcp_close(struct vn_tcp_flow *f)
{
    if (vn_tcp_fin(f, VN_C2S) != 0 || vn_tcp_ack(f, VN_S2C) != 0 || vn_tcp_fin(f, VN_S2C) != 0)
        return -1;
    return vn_tcp_ack(f, VN_C2S);
}

int vn_tcp_rst(struct vn_tcp_flow *f, enum vn_dir dir)
{
    return emit(f, dir, VN_TCP_RST | VN_TCP_ACK, vn_tcp_seq(f, dir, f->next_off[dir]), 0, NULL, 0,
                NULL, 0);
}
