/*
 * fuzz-pcap-damage IN OUT SEED: one damaged copy of a capture for the
 * plugin campaign, reproducible from SEED. Half the seeds do what
 * `editcap -E P` does (every byte of every frame replaced by a random one
 * with probability P, P drawn from 0.001..0.05; pcap only), the other half
 * one of rb_pcap_mutate's kinds (tests/robustness/pcap_mutate.h: record
 * lengths, link types, IP/TCP fields, dropped, repeated, swapped records,
 * sequence wrap...). Prints what it did.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pcap_mutate.h"
#include "robust_common.h"

static uint32_t le32(const uint8_t *p) { return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24; }

/* editcap -E: frame bytes only, headers of the file and records intact. */
static unsigned error_probability(struct rb_rng *r, uint8_t *buf, size_t len, double p)
{
    unsigned changed = 0;
    size_t at = 24;
    while (at + 16 <= len) {
        size_t caplen = le32(buf + at + 8);
        at += 16;
        if (caplen > len - at)
            caplen = len - at;
        for (size_t i = 0; i < caplen; i++)
            if ((double)rb_below(r, 1000000) < p * 1e6) {
                buf[at + i] = (uint8_t)rb_next(r);
                changed++;
            }
        at += caplen;
    }
    return changed;
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: fuzz-pcap-damage IN OUT SEED\n");
        return 2;
    }
    size_t len;
    uint8_t *in = rb_read_file(argv[1], &len);
    if (in == NULL) {
        fprintf(stderr, "fuzz-pcap-damage: cannot read %s\n", argv[1]);
        return 2;
    }
    struct rb_rng r = {strtoull(argv[3], NULL, 0)};
    size_t cap = len + RB_MUTATE_SLACK;
    uint8_t *out = malloc(cap);
    char desc[256];
    size_t n;
    bool is_pcap_le = len >= 24 && le32(in) == 0xA1B2C3D4u;
    if (is_pcap_le && rb_below(&r, 2) == 0) {
        static const double probs[] = {0.001, 0.002, 0.005, 0.01, 0.02, 0.05};
        double p = probs[rb_below(&r, sizeof probs / sizeof probs[0])];
        memcpy(out, in, len);
        n = len;
        unsigned k = error_probability(&r, out, n, p);
        snprintf(desc, sizeof desc, "editcap -E %.3f: %u frame bytes changed", p, k);
    } else {
        n = rb_pcap_mutate(&r, RB_MUT_COUNT, in, len, out, cap, desc, sizeof desc);
    }
    if (rb_write_file(argv[2], out, n) != 0) {
        fprintf(stderr, "fuzz-pcap-damage: cannot write %s\n", argv[2]);
        return 1;
    }
    printf("%s\n", desc);
    free(in);
    free(out);
    return 0;
}
