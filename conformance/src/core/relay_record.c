/* The packet relay's recordings as captures: appended to the run's capture
 * and judged by the lint's rules (see conform/relay.h). */
#include "conform/relay.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conform/lint.h"
#include "vitcp/pcap_writer.h"

#define ETH_HEADER 14
#define LINKTYPE_RAW 101 /* bare IP packets, as the relay keeps them */

int cf_relay_write(struct vn_pcap_writer *w, const struct cf_relay_packet *p, size_t count)
{
    /* Locally administered addresses, one per side, so a reader can tell
     * the sides apart at the link layer too. */
    static const uint8_t mac[2][6] = {{0x02, 0x76, 0x63, 0, 0, 1}, {0x02, 0x76, 0x63, 0, 0, 2}};
    uint8_t *frame = NULL;
    size_t cap = 0;
    int rc = 0;
    for (size_t i = 0; i < count; i++) {
        if (p[i].len + ETH_HEADER > cap) {
            uint8_t *n = realloc(frame, p[i].len + ETH_HEADER);
            if (!n) {
                rc = -1;
                break;
            }
            frame = n;
            cap = p[i].len + ETH_HEADER;
        }
        int from = p[i].from == CF_RELAY_TESTER ? 0 : 1;
        memcpy(frame, mac[1 - from], 6);
        memcpy(frame + 6, mac[from], 6);
        frame[12] = 0x08;
        frame[13] = 0x00;
        memcpy(frame + ETH_HEADER, p[i].data, p[i].len);
        if (p[i].dropped)
            vn_pcap_comment_next(w, "dropped by the packet relay (the case's packet action): the receiver never got it");
        else if (p[i].duplicated)
            vn_pcap_comment_next(w, "the packet relay's second copy of the packet before (the case's packet action)");
        vn_pcap_set_clock(w, (uint32_t)(p[i].usec / 1000000u), (uint32_t)(p[i].usec % 1000000u), 1);
        if (vn_pcap_write(w, frame, p[i].len + ETH_HEADER) < 0)
            rc = -1;
    }
    free(frame);
    return rc;
}

int cf_relay_lint(const struct cf_relay_packet *p, size_t count, uint16_t target_port,
                  struct cf_lint_result *res, char *why, size_t whylen)
{
    struct cf_lint_frame *frames = calloc(count ? count : 1, sizeof *frames);
    if (!frames) {
        memset(res, 0, sizeof *res);
        snprintf(why, whylen, "out of memory for the relay's recording");
        return -1;
    }
    for (size_t i = 0; i < count; i++)
        frames[i] = (struct cf_lint_frame){p[i].usec, p[i].data, p[i].len};
    struct cf_lint_options o;
    cf_lint_options_init(&o);
    o.vitcp_port = target_port;
    char err[256];
    int rc = cf_lint_frames(LINKTYPE_RAW, frames, count, &o, res, err, sizeof err);
    if (rc < 0)
        snprintf(why, whylen, "cannot lint the relay's recording: %s", err);
    free(frames);
    return rc;
}
