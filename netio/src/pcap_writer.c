/* Capture output with a deterministic clock: classic pcap through libpcap,
 * pcapng through pcapng_block.c. */
#include "vitcp/pcap_writer.h"

#include <errno.h>
#include <pcap/pcap.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "pcapng_block.h"

struct vn_pcap_writer {
    pcap_t *dead;
    pcap_dumper_t *dumper;
    FILE *ng;          /* pcapng output (dead/dumper unused) */
    char *next_comment;
    int ng_failed;
    uint64_t now_usec;
    uint32_t step_usec;
    uint64_t frames;
};

#define SNAPLEN 262144
#define LINKTYPE_ETHERNET 1

enum vn_capture_format vn_capture_format_for(const char *path)
{
    size_t n = path ? strlen(path) : 0;
    return n >= 7 && strcasecmp(path + n - 7, ".pcapng") == 0 ? VN_CAPTURE_PCAPNG : VN_CAPTURE_PCAP;
}

struct vn_pcap_writer *vn_pcap_open(const char *path, char *err, size_t errlen)
{
    return vn_capture_open(path, VN_CAPTURE_PCAP, NULL, err, errlen);
}

struct vn_pcap_writer *vn_capture_open(const char *path, enum vn_capture_format format,
                                       const char *section_comment, char *err, size_t errlen)
{
    if (path == NULL || path[0] == '\0' || strcmp(path, "-") == 0) {
        snprintf(err, errlen, "no output file name given");
        return NULL;
    }
    struct vn_pcap_writer *w = calloc(1, sizeof *w);
    if (w == NULL) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    w->now_usec = (uint64_t)VN_PCAP_START_SEC * 1000000u;
    w->step_usec = VN_PCAP_STEP_USEC;
    if (format == VN_CAPTURE_PCAPNG) {
        w->ng = fopen(path, "wb");
        if (w->ng == NULL) {
            snprintf(err, errlen, "cannot create %s: %s", path, strerror(errno));
            free(w);
            return NULL;
        }
        if (vn_pcapng_write_shb(w->ng, section_comment, "vitcp") != 0 ||
            vn_pcapng_write_idb(w->ng, LINKTYPE_ETHERNET, SNAPLEN) != 0) {
            snprintf(err, errlen, "cannot write the pcapng header to %s", path);
            fclose(w->ng);
            free(w);
            return NULL;
        }
        return w;
    }
    w->dead = pcap_open_dead(DLT_EN10MB, SNAPLEN);
    if (w->dead == NULL) {
        snprintf(err, errlen, "libpcap: pcap_open_dead failed");
        free(w);
        return NULL;
    }
    w->dumper = pcap_dump_open(w->dead, path);
    if (w->dumper == NULL) {
        snprintf(err, errlen, "cannot create %s: %s", path, pcap_geterr(w->dead));
        pcap_close(w->dead);
        free(w);
        return NULL;
    }
    return w;
}

void vn_pcap_comment_next(struct vn_pcap_writer *w, const char *comment)
{
    free(w->next_comment);
    w->next_comment = NULL;
    if (w->ng && comment && comment[0]) {
        w->next_comment = strdup(comment);
        if (w->next_comment == NULL)
            w->ng_failed = 1;
    }
}

int vn_pcap_close(struct vn_pcap_writer *w)
{
    if (w == NULL)
        return 0;
    int rc = 0;
    free(w->next_comment);
    if (w->ng) {
        rc = w->ng_failed || ferror(w->ng) ? -1 : 0;
        if (fclose(w->ng) != 0)
            rc = -1;
        free(w);
        return rc;
    }
    if (pcap_dump_flush(w->dumper) != 0)
        rc = -1;
    FILE *fp = pcap_dump_file(w->dumper);
    if (fp != NULL && ferror(fp))
        rc = -1;
    pcap_dump_close(w->dumper);
    pcap_close(w->dead);
    free(w);
    return rc;
}

void vn_pcap_set_clock(struct vn_pcap_writer *w, uint32_t sec, uint32_t usec, uint32_t step_usec)
{
    w->now_usec = (uint64_t)sec * 1000000u + usec;
    w->step_usec = step_usec;
}

void vn_pcap_pause(struct vn_pcap_writer *w, uint64_t usec) { w->now_usec += usec; }

int vn_pcap_write(struct vn_pcap_writer *w, const uint8_t *frame, size_t len)
{
    if (len > SNAPLEN)
        return -1;
    if (w->ng) {
        int rc = vn_pcapng_write_epb(w->ng, w->now_usec, frame, len, w->next_comment);
        vn_pcap_comment_next(w, NULL);
        if (rc != 0) {
            w->ng_failed = 1;
            return -1;
        }
        w->now_usec += w->step_usec;
        w->frames++;
        return 0;
    }
    struct pcap_pkthdr h;
    h.ts.tv_sec = (time_t)(w->now_usec / 1000000u);
    h.ts.tv_usec = (suseconds_t)(w->now_usec % 1000000u);
    h.caplen = (bpf_u_int32)len;
    h.len = (bpf_u_int32)len;
    pcap_dump((u_char *)w->dumper, &h, frame);
    w->now_usec += w->step_usec;
    w->frames++;
    return 0;
}

uint64_t vn_pcap_frames(const struct vn_pcap_writer *w) { return w->frames; }

static int pcap_emit(void *ctx, const uint8_t *frame, size_t len)
{
    return vn_pcap_write(ctx, frame, len);
}

struct vn_sink vn_pcap_sink(struct vn_pcap_writer *w)
{
    struct vn_sink s = {pcap_emit, w};
    return s;
}

int vn_udp_send(struct vn_sink sink, const struct vn_endpoint *src, const struct vn_endpoint *dst,
                const uint8_t *data, size_t len)
{
    uint8_t frame[VN_FRAME_MAX];
    size_t n = vn_build_udp(frame, sizeof frame, src, dst, 0, data, len);
    return n ? sink.emit(sink.ctx, frame, n) : -1;
}

int vn_eth_send(struct vn_sink sink, const uint8_t src_mac[6], const uint8_t dst_mac[6],
                uint16_t ethertype, const uint8_t *data, size_t len)
{
    uint8_t frame[VN_FRAME_MAX];
    size_t n = vn_build_eth(frame, sizeof frame, src_mac, dst_mac, 0, ethertype, data, len);
    return n ? sink.emit(sink.ctx, frame, n) : -1;
}
