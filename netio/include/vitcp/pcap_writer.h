/*
 * Capture writer: classic pcap files (LINKTYPE_ETHERNET) written through
 * libpcap (pcap_open_dead + pcap_dump), or pcapng files (libpcap 1.10 cannot
 * write pcapng: a small block writer does, with a section comment and
 * per-packet comments), with deterministic timestamps so the same input
 * always gives a byte-identical file.
 *
 * Typical use:
 *   char err[256];
 *   struct vn_pcap_writer *w = vn_pcap_open("x.pcap", err, sizeof err);
 *   struct vn_tcp_flow f;
 *   vn_tcp_flow_init(&f, vn_pcap_sink(w), "10.0.0.1", 40000, "10.0.0.2", 5995);
 *   vn_tcp_handshake(&f);
 *   vn_tcp_send(&f, VN_C2S, pdu, pdu_len);
 *   vn_udp_send(vn_pcap_sink(w), &a, &b, dgram, n);
 *   vn_pcap_close(w);
 */
#ifndef VITCP_PCAP_WRITER_H
#define VITCP_PCAP_WRITER_H

#include <stddef.h>
#include <stdint.h>
#include "vitcp/frame.h"
#include "vitcp/tcp_flow.h"

struct vn_pcap_writer;

/* Default clock: first frame at 2001-09-09 01:46:40 UTC (10^9 s), then
 * 100 microseconds per frame. */
#define VN_PCAP_START_SEC 1000000000u
#define VN_PCAP_STEP_USEC 100u

enum vn_capture_format { VN_CAPTURE_PCAP, VN_CAPTURE_PCAPNG };

/* Create path ("-" is not accepted). NULL on error, with the reason in err. */
struct vn_pcap_writer *vn_pcap_open(const char *path, char *err, size_t errlen);
/* The same in either format. pcapng: section_comment (may be NULL) goes into
 * the Section Header Block's opt_comment, "vitcp" into shb_userappl. */
struct vn_pcap_writer *vn_capture_open(const char *path, enum vn_capture_format format,
                                       const char *section_comment, char *err, size_t errlen);
/* pcapng: an opt_comment on the next frame written (copied; NULL clears).
 * Ignored for pcap, which has no comments. */
void vn_pcap_comment_next(struct vn_pcap_writer *w, const char *comment);
/* "x.pcapng" (any case) -> pcapng, anything else pcap. */
enum vn_capture_format vn_capture_format_for(const char *path);
/* Flush and close; returns 0, or -1 if writing failed at any point (disk
 * full...). NULL is accepted. */
int vn_pcap_close(struct vn_pcap_writer *w);
/* Change the clock: the next frame gets sec.usec, later ones step_usec more. */
void vn_pcap_set_clock(struct vn_pcap_writer *w, uint32_t sec, uint32_t usec, uint32_t step_usec);
/* Leave a pause of usec microseconds before the next frame. */
void vn_pcap_pause(struct vn_pcap_writer *w, uint64_t usec);
/* Write one whole Ethernet frame. Returns 0 or -1. */
int vn_pcap_write(struct vn_pcap_writer *w, const uint8_t *frame, size_t len);
/* Frames written so far. */
uint64_t vn_pcap_frames(const struct vn_pcap_writer *w);
/* A sink that writes to w. */
struct vn_sink vn_pcap_sink(struct vn_pcap_writer *w);

/* A UDP datagram / a raw Ethernet frame with any Ethertype, to a sink. */
int vn_udp_send(struct vn_sink sink, const struct vn_endpoint *src, const struct vn_endpoint *dst,
                const uint8_t *data, size_t len);
int vn_eth_send(struct vn_sink sink, const uint8_t src_mac[6], const uint8_t dst_mac[6],
                uint16_t ethertype, const uint8_t *data, size_t len);

#endif
