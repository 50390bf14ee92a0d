/* The packet relay's recordings as captures: appended to the run's capture
 * (see conform/relay.h; the protocol module judges them). */
#include "conform/relay.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vitcp/pcap_writer.h"

#define ETH_HEADER 14

/* What the run's impairment (C61) did to the packet, for its comment. */
static bool impairment_note(const struct cf_relay_packet *p, char *out, size_t n)
{
    if (!p->impaired)
        return false;
    int w = snprintf(out, n, "impairment (seed %llu):", (unsigned long long)p->seed);
    if (p->impaired & CF_IMPAIR_LOST)
        w += snprintf(out + w, n - (size_t)w, " lost, the receiver never got it");
    if ((p->impaired & CF_IMPAIR_PIECE) && (size_t)w < n)
        w += snprintf(out + w, n - (size_t)w, " piece %u of %u of one segment", p->piece, p->pieces);
    if ((p->impaired & CF_IMPAIR_COPY) && (size_t)w < n)
        w += snprintf(out + w, n - (size_t)w, " a second copy");
    if ((p->impaired & CF_IMPAIR_REORDERED) && (size_t)w < n)
        w += snprintf(out + w, n - (size_t)w, " held back %u us so later packets overtook it", p->delay_us);
    else if ((p->impaired & CF_IMPAIR_DELAYED) && (size_t)w < n)
        snprintf(out + w, n - (size_t)w, " delayed %u us", p->delay_us);
    return true;
}

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
        char note[200];
        if (p[i].dropped)
            vn_pcap_comment_next(w, "dropped by the packet relay (the case's packet action): the receiver never got it");
        else if (p[i].duplicated)
            vn_pcap_comment_next(w, "the packet relay's second copy of the packet before (the case's packet action)");
        else if (impairment_note(&p[i], note, sizeof note))
            vn_pcap_comment_next(w, note);
        vn_pcap_set_clock(w, (uint32_t)(p[i].usec / 1000000u), (uint32_t)(p[i].usec % 1000000u), 1);
        if (vn_pcap_write(w, frame, p[i].len + ETH_HEADER) < 0)
            rc = -1;
    }
    free(frame);
    return rc;
}
