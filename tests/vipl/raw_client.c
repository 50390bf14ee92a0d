#include "raw_client.h"
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

int raw_connect(uint16_t port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(fd >= 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
        int err = errno;
        close(fd);
        fail_msg("cannot connect to port %u: %s", port, strerror(err));
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return fd;
}

void raw_reset(int fd)
{
    struct linger l = {1, 0};
    setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof l);
    close(fd);
}

bool raw_send_all(int fd, const void *buf, size_t n)
{
    const uint8_t *p = buf;
    while (n) {
        ssize_t k = send(fd, p, n, MSG_NOSIGNAL);
        if (k <= 0)
            return false;
        p += k, n -= (size_t)k;
    }
    return true;
}

size_t raw_encode(const struct vw_vitcp_enc *enc, uint8_t *buf, size_t cap)
{
    size_t n = vw_vitcp_encode(enc, buf, cap);
    assert_true(n > 0);
    return n;
}

bool raw_send_enc(int fd, const struct vw_vitcp_enc *enc)
{
    size_t cap = vw_vitcp_encoded_len(enc);
    uint8_t *buf = malloc(cap ? cap : 1);
    assert_non_null(buf);
    size_t n = vw_vitcp_encode(enc, buf, cap);
    bool sent = n > 0 && raw_send_all(fd, buf, n);
    free(buf); /* before asserting: a failed assertion must not leak it */
    assert_true(n > 0);
    return sent;
}

void raw_request(struct vw_vitcp_enc *enc, const char *called, uint32_t mtu, bool crc)
{
    size_t len = strlen(called);
    assert_true(len <= VW_VITCP_DISC_MAX);
    vw_vitcp_enc_init(enc, VW_VITCP_CONNECT_REQUEST, crc);
    enc->hdr.msg_num = RAW_MSG0;
    enc->ce.attrs = VW_VITCP_ATTR_RELIABLE_DELIVERY;
    enc->ce.mtu = mtu;
    enc->ce.called_disc_len = (uint16_t)len;
    memcpy(enc->ce.called_disc, called, len);
}

size_t raw_read_seg(int fd, uint8_t *buf, size_t cap, int ms)
{
    size_t have = 0, want = 4;
    if (cap < want)
        return 0;
    while (have < want) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (poll(&p, 1, ms) <= 0)
            return 0;
        ssize_t n = recv(fd, buf + have, want - have, 0);
        if (n <= 0)
            return 0;
        have += (size_t)n;
        if (have == 4) {
            want = vw_vitcp_peek_seg_len(buf, 4);
            if (want < VW_VITCP_SEG_HDR_LEN || want > cap)
                return 0;
        }
    }
    return have;
}

bool raw_next_seg(int fd, bool crc, uint8_t *buf, size_t cap, struct vw_vitcp_seg *seg)
{
    for (;;) {
        size_t n = raw_read_seg(fd, buf, cap, 5000);
        if (n == 0)
            return false;
        if (vw_vitcp_decode(buf, n, crc ? VW_VITCP_CRC_ON : VW_VITCP_CRC_OFF, seg, NULL) != VW_REQ_NONE)
            fail_msg("the provider sent a segment that does not decode");
        if (seg->hdr.type != VW_VITCP_NOP)
            return true;
    }
}

bool raw_wait_close(int fd, int ms)
{
    uint8_t b[4096];
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (;;) {
        clock_gettime(CLOCK_MONOTONIC, &t);
        int left = ms - (int)((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000);
        if (left <= 0)
            return false;
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (poll(&p, 1, left) <= 0)
            return false;
        if (recv(fd, b, sizeof b, 0) <= 0)
            return true;
    }
}

bool raw_closed_silently(int fd, int ms)
{
    uint8_t b[64];
    struct pollfd p = {.fd = fd, .events = POLLIN};
    if (poll(&p, 1, ms) <= 0)
        return false;
    return recv(fd, b, sizeof b, 0) <= 0;
}
