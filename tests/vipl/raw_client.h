/* A raw TCP client that speaks VI/TCP segments (built and read with the
 * wire library) to a provider under test: the misbehaving peer of the
 * bad-peer and robustness tests. It needs no VIPL, only a port on
 * 127.0.0.1. Helpers that cannot go on (no connection, a segment the
 * encoder refuses) fail the running cmocka test. */
#ifndef VIPL_RAW_CLIENT_H
#define VIPL_RAW_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "vitcp/vitcp.h"

/* The Message Number of raw_request's ConnectRequest. */
#define RAW_MSG0 1000u

/* Connect to 127.0.0.1:port (TCP_NODELAY, so each segment leaves at once). */
int raw_connect(uint16_t port);
/* Close with a reset (SO_LINGER 0: an abortive close). */
void raw_reset(int fd);

/* Send all n bytes; false when the peer closed first (which a test of a
 * misbehaving peer may allow). */
bool raw_send_all(int fd, const void *buf, size_t n);
/* vw_vitcp_encode into buf; the test fails if the encoder refuses. */
size_t raw_encode(const struct vw_vitcp_enc *enc, uint8_t *buf, size_t cap);
/* Encode and send one segment; false as raw_send_all. */
bool raw_send_enc(int fd, const struct vw_vitcp_enc *enc);
/* A ConnectRequest at Reliable Delivery, Message Number RAW_MSG0, to the
 * called discriminator with the MTU given; crc as vw_vitcp_enc_init. */
void raw_request(struct vw_vitcp_enc *enc, const char *called, uint32_t mtu, bool crc);

/* Read one whole segment (<= cap bytes) within ms per read; its length, or
 * 0 on EOF, reset, timeout or a Segment Length below the header or above cap. */
size_t raw_read_seg(int fd, uint8_t *buf, size_t cap, int ms);
/* The next segment other than a NOP, decoded into *seg (which points into
 * buf); false on close or timeout (5 s). A segment that does not decode
 * fails the test. */
bool raw_next_seg(int fd, bool crc, uint8_t *buf, size_t cap, struct vw_vitcp_seg *seg);

/* true when the peer closes (EOF or reset) within ms, whatever it sends
 * before (drained). */
bool raw_wait_close(int fd, int ms);
/* true when the peer closes within ms without sending a byte first. */
bool raw_closed_silently(int fd, int ms);

#endif
