/* warp-peer's allowed choices (choices.h). */
#include "choices.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tx.h"

static const struct choice {
    const char *name, *arg, *what, *draft;
} CHOICES[] = {
    {"frag", "N", "payload bytes per chunk, 1..65515 (as --frag)",
     "182-183 fragment and reassemble the ULP PDU; 361 Sends may be split into multiple WARP fragments"},
    {"header-chunk", "N", "the first chunk of every ULP PDU holds at most N payload bytes (the ULP header apart)",
     "159-160 separate ULP header from ULP data by chunkifying into two messages"},
    {"last-byte", NULL, "the last byte of every ULP PDU of two or more bytes goes in a chunk of its own",
     "361 Sends may be split into multiple WARP fragments; 514 RDMA Writes MAY be of any size"},
    {"first-ssn", "N|random", "the first Send Sequence Number of a connection (default 1; 4294967295 wraps)",
     "244-245, 360 a 32 bit SSN, the sequence number of the current Send: no start is fixed (W4 fixes +1)"},
    {"no-completion", NULL, "never sets the Completion bit (iSCSI mode: the Data PDU headers still notify, B.4)",
     "178-180 sender managed ULP receive completion model; 237 C - send a completion event"},
    {"completion-all", NULL, "sets C on the last chunk of every ULP PDU (not on iSCSI data RDMA Writes, B.4)",
     "178-180 sender managed completion; 242-243 C only with L"},
    {"announce", NULL, "echo mode: first sends a Send announcing its region (text: region rid= base= len=)",
     "196-201 the ULP will exchange these variables with the remote end (no packet format)"},
    {"no-close", NULL, "discards an invalid chunk (a framing loss: the rest of the stream) instead of closing",
     "218-219 invalid segments will not be DMA'ed into host memory (no reaction defined; W10 is ours)"},
    {"base", "HEX", "the region's base offset (64-bit, non-zero based), e.g. 7f0000000000",
     "205 zero based or non-zero based RDMA offset; 246-247 RDMAs shall have a 64 bit offset"},
    {"rid", "N", "the RID it allocates for its region or iSCSI task buffer (as --handle)",
     "153-154 a buffer-id allocated by the receiver; 533-535 the target supplies the RID in the transfer tag"},
    {"readback", NULL, "echo mode: an RDMA Write is echoed as a Send of the bytes read back, not an RDMA Write",
     "129-130, 196-201 the draft defines no echo (W6 is a test convention)"},
    {"no-rdma-echo", NULL, "echo mode: RDMA Writes are placed and never echoed",
     "129-130, 196-201 the draft defines no echo (W6 is a test convention)"},
    {"mix", NULL, "echo mode: an RDMA Write's echo goes with a Send telling of it (placed rid= offset= len=), "
     "their chunks interleaved", "176 a single stream can mix RDMA and Send semantics"},
    {"data-in", "0x25|0x45", "iSCSI: the Data-In opcode byte, RFC 3720's 0x25 (W8) or the draft's 0x45",
     "490, 497-498 target opcode 0x45"},
};
#define NCHOICES (sizeof CHOICES / sizeof CHOICES[0])

void peer_choices_list(FILE *out)
{
    for (size_t i = 0; i < NCHOICES; i++)
        fprintf(out, "%s%s%s  %s (draft lines %s)\n", CHOICES[i].name, CHOICES[i].arg ? "=" : "",
                CHOICES[i].arg ? CHOICES[i].arg : "", CHOICES[i].what, CHOICES[i].draft);
}

static int number(const char *s, unsigned long long max, int base, unsigned long long *out)
{
    char *end;
    errno = 0;
    if (!isxdigit((unsigned char)*s))
        return -1;
    unsigned long long v = strtoull(s, &end, base);
    if (*end || errno || v > max)
        return -1;
    *out = v;
    return 0;
}

/* One NAME[=VALUE]; 0, or -1 (the caller says why). */
static int apply(const struct choice *c, const char *val, struct peer_choices *ch, size_t *frag, uint32_t *rid)
{
    unsigned long long v = 0;
    const char *n = c->name;
    if (!strcmp(n, "frag")) {
        if (number(val, TX_FRAG_MAX, 0, &v) || v == 0)
            return -1;
        *frag = (size_t)v;
    } else if (!strcmp(n, "header-chunk")) {
        if (number(val, TX_FRAG_MAX, 0, &v) || v == 0)
            return -1;
        ch->header_chunk = (size_t)v;
    } else if (!strcmp(n, "last-byte")) {
        ch->last_byte = true;
    } else if (!strcmp(n, "first-ssn")) {
        if (!strcmp(val, "random"))
            ch->ssn_random = true;
        else if (number(val, 0xFFFFFFFFull, 0, &v))
            return -1;
        ch->ssn_set = true;
        ch->first_ssn = (uint32_t)v;
    } else if (!strcmp(n, "no-completion")) {
        ch->completion = COMPLETION_NEVER;
    } else if (!strcmp(n, "completion-all")) {
        ch->completion = COMPLETION_ALL;
    } else if (!strcmp(n, "announce")) {
        ch->announce = true;
    } else if (!strcmp(n, "no-close")) {
        ch->no_close = true;
    } else if (!strcmp(n, "base")) {
        if (number(val, UINT64_MAX, 16, &v))
            return -1;
        ch->base_set = true;
        ch->base = v;
    } else if (!strcmp(n, "rid")) {
        if (number(val, 0xFFFFFFFFull, 0, &v))
            return -1;
        *rid = (uint32_t)v;
    } else if (!strcmp(n, "readback")) {
        ch->readback = true;
    } else if (!strcmp(n, "no-rdma-echo")) {
        ch->no_rdma_echo = true;
    } else if (!strcmp(n, "mix")) {
        ch->mix = true;
    } else if (!strcmp(n, "data-in")) {
        if (!strcmp(val, "0x45") || !strcmp(val, "0X45"))
            ch->draft_data_in = true;
        else if (!strcmp(val, "0x25") || !strcmp(val, "0X25"))
            ch->draft_data_in = false;
        else
            return -1;
    }
    return 0;
}

int peer_choices_parse(const char *arg, struct peer_choices *ch, size_t *frag, uint32_t *rid)
{
    char list[512];
    if (strlen(arg) >= sizeof list) {
        fprintf(stderr, "warp-peer: --choice list too long\n");
        return -1;
    }
    strcpy(list, arg);
    if (!*list) {
        fprintf(stderr, "warp-peer: empty --choice (see --list-choices)\n");
        return -1;
    }
    for (char *save, *item = strtok_r(list, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
        char *val = strchr(item, '=');
        if (val)
            *val++ = '\0';
        const struct choice *c = NULL;
        for (size_t i = 0; i < NCHOICES; i++)
            if (!strcmp(CHOICES[i].name, item))
                c = &CHOICES[i];
        if (!c) {
            fprintf(stderr, "warp-peer: unknown choice '%s' (see --list-choices)\n", item);
            return -1;
        }
        if (!c->arg != !val) {
            fprintf(stderr, "warp-peer: choice '%s' %s\n", item, c->arg ? "needs =VALUE" : "takes no value");
            return -1;
        }
        if (apply(c, val, ch, frag, rid)) {
            fprintf(stderr, "warp-peer: bad value '%s' for choice '%s' (%s=%s)\n", val, item, item, c->arg);
            return -1;
        }
    }
    if (ch->readback && ch->no_rdma_echo) {
        fprintf(stderr, "warp-peer: choices 'readback' and 'no-rdma-echo' exclude each other\n");
        return -1;
    }
    return 0;
}

uint32_t peer_choices_first_ssn(const struct peer_choices *ch)
{
    if (!ch->ssn_set)
        return 1;
    if (!ch->ssn_random)
        return ch->first_ssn;
    static bool seeded;
    if (!seeded) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        srandom((unsigned)ts.tv_nsec ^ (unsigned)getpid());
        seeded = true;
    }
    return (uint32_t)random() << 1 ^ (uint32_t)random();
}
