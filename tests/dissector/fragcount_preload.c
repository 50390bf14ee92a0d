/*
 * Test helper (LD_PRELOAD into the stock tshark): counts the calls Wireshark's
 * dissectors make to fragment_add_seq_next, per frame, and writes at exit to
 * the file named by VITCP_FRAGCOUNT_OUT one line
 *   calls=<total> frames=<frames with a call> repeated=<frames with more than one>
 * so a test can count reassembly work instead of timing it (issue 22:
 * iwarp_ddp_rdmap added every earlier Send segment again on each later pass).
 * Wireshark's own calls go through the PLT, so this definition wins.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <epan/packet.h>
#include <epan/reassemble.h>

typedef fragment_head *(*add_seq_next_fn)(reassembly_table *, tvbuff_t *, const int, const packet_info *,
                                          const guint32, const void *, const guint32, const gboolean);

static unsigned char *per_frame; /* calls per frame number, saturating at 255 */
static size_t per_frame_cap;
static unsigned long calls;

fragment_head *fragment_add_seq_next(reassembly_table *table, tvbuff_t *tvb, const int offset,
                                     const packet_info *pinfo, const guint32 id, const void *data,
                                     const guint32 frag_data_len, const gboolean more_frags)
{
    static add_seq_next_fn real;
    if (!real) {
        void *sym = dlsym(RTLD_NEXT, "fragment_add_seq_next");
        if (!sym) {
            fprintf(stderr, "fragcount_preload: fragment_add_seq_next not found\n");
            abort();
        }
        memcpy(&real, &sym, sizeof real);
    }
    calls++;
    size_t num = pinfo->num;
    if (num >= per_frame_cap) {
        size_t cap = per_frame_cap ? per_frame_cap : 4096;
        while (cap <= num)
            cap *= 2;
        unsigned char *grown = realloc(per_frame, cap);
        if (grown) {
            memset(grown + per_frame_cap, 0, cap - per_frame_cap);
            per_frame = grown;
            per_frame_cap = cap;
        }
    }
    if (num < per_frame_cap && per_frame[num] < 255)
        per_frame[num]++;
    return real(table, tvb, offset, pinfo, id, data, frag_data_len, more_frags);
}

__attribute__((destructor)) static void fragcount_report(void)
{
    const char *path = getenv("VITCP_FRAGCOUNT_OUT");
    if (!path)
        return;
    unsigned long frames = 0, repeated = 0;
    for (size_t i = 0; i < per_frame_cap; i++) {
        frames += per_frame[i] > 0;
        repeated += per_frame[i] > 1;
    }
    FILE *f = fopen(path, "w");
    if (f) {
        fprintf(f, "calls=%lu frames=%lu repeated=%lu\n", calls, frames, repeated);
        fclose(f);
    }
    free(per_frame);
}
