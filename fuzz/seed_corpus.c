/*
 * fuzz-seed OUTDIR CAPTURE_DIR...: the seed corpora of the wire harnesses,
 * cut from captures (the committed ones in captures/ and those
 * vitcp-trafgen generates at build time). Each capture's protocol comes
 * from its name (vitcp-*, vipl-*: VI/TCP; ift-*; warp-*; eep-*). Every TCP
 * direction is framed with the wire library's framer: the stream seeds the
 * framer harnesses, each PDU the decoder harnesses, each CE options area
 * the options walk; EEP datagrams seed the EEP harness; small captures
 * seed the capture reader. Files are named by a hash of their bytes, so
 * repeated PDUs are kept once; OUTDIR's corpus folders are emptied first.
 * Prints the count per corpus.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "robust_common.h"
#include "vitcp/ift_stream.h"
#include "vitcp/pcap_reader.h"
#include "vitcp/vitcp_stream.h"
#include "vitcp/warp_stream.h"

#define STREAM_MAX (64 * 1024) /* bytes of one direction kept as a stream seed */
#define PER_CORPUS_MAX 400     /* enough variety; more only slows the replay */
#define PCAP_SEED_MAX (64 * 1024)

enum corpus {
    C_VITCP_SEGMENT, C_VITCP_OPTIONS, C_VITCP_FRAMER, C_IFT_DECODE, C_IFT_STREAM, C_EEP,
    C_WARP_CHUNK, C_WARP_FRAMER, C_PCAP_READER, C_COUNT
};
static const char *const corpus_name[C_COUNT] = {"vitcp_segment", "vitcp_options", "vitcp_framer",
                                                 "ift_decode",    "ift_stream",    "eep",
                                                 "warp_chunk",    "warp_framer",   "pcap_reader"};
static unsigned corpus_count[C_COUNT];
static const char *outdir;

enum proto { P_NONE, P_VITCP, P_IFT, P_WARP, P_EEP };

static void add_seed(enum corpus c, const uint8_t *d, size_t n)
{
    if (n == 0 || corpus_count[c] >= PER_CORPUS_MAX)
        return;
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ d[i]) * 1099511628211ull;
    char path[4096];
    snprintf(path, sizeof path, "%s/%s/%016llx", outdir, corpus_name[c], (unsigned long long)h);
    struct stat st;
    if (stat(path, &st) == 0)
        return; /* the same bytes already seed it */
    if (rb_write_file(path, d, n) != 0) {
        fprintf(stderr, "fuzz-seed: cannot write %s: %s\n", path, strerror(errno));
        exit(1);
    }
    corpus_count[c]++;
}

struct stream {
    unsigned conn;
    int dir;
    uint8_t *buf;
    size_t len;
};

struct capture_ctx {
    enum proto proto;
    struct stream s[64][2];
};

static void on_vitcp(void *ctx, const uint8_t *raw, size_t len, uint64_t off, const struct vw_vitcp_seg *seg,
                     enum vw_req err, const struct vw_findings *f)
{
    (void)ctx, (void)off, (void)f;
    add_seed(C_VITCP_SEGMENT, raw, len);
    if (err == VW_REQ_NONE && seg && seg->has_ce && seg->ce.options)
        add_seed(C_VITCP_OPTIONS, seg->ce.options, seg->ce.options_len);
}

static void on_ift(void *ctx, const uint8_t *raw, size_t len, uint64_t off, const struct vw_ift_pdu *pdu,
                   enum vw_req err, const struct vw_findings *f)
{
    (void)ctx, (void)off, (void)pdu, (void)err, (void)f;
    add_seed(C_IFT_DECODE, raw, len);
}

static void on_warp(void *ctx, const uint8_t *raw, size_t len, uint64_t off, const struct vw_warp_chunk *c,
                    enum vw_req err, const struct vw_findings *f)
{
    (void)ctx, (void)off, (void)c, (void)err, (void)f;
    add_seed(C_WARP_CHUNK, raw, len);
}

/* One direction's bytes: a stream seed, and its PDUs. */
static void cut_stream(enum proto p, const uint8_t *d, size_t n)
{
    if (n == 0)
        return;
    if (p == P_VITCP) {
        add_seed(C_VITCP_FRAMER, d, n);
        struct vw_vitcp_framer f;
        vw_vitcp_framer_init(&f, VW_VITCP_CRC_AUTO);
        vw_vitcp_framer_feed(&f, d, n, on_vitcp, NULL);
        vw_vitcp_framer_free(&f);
    } else if (p == P_IFT) {
        add_seed(C_IFT_STREAM, d, n);
        struct vw_ift_framer f;
        vw_ift_framer_init(&f, true);
        vw_ift_framer_feed(&f, d, n, on_ift, NULL);
        vw_ift_framer_free(&f);
    } else if (p == P_WARP) {
        add_seed(C_WARP_FRAMER, d, n);
        struct vw_warp_framer f;
        vw_warp_framer_init(&f);
        vw_warp_framer_feed(&f, d, n, on_warp, NULL);
        vw_warp_framer_free(&f);
    }
}

static void on_tcp(void *ctx, const struct vn_tcp_event *ev)
{
    struct capture_ctx *c = ctx;
    if (ev->conn >= 64)
        return;
    struct stream *s = &c->s[ev->conn][ev->dir == VN_S2C];
    if (ev->kind == VN_TCP_DATA && s->len < STREAM_MAX) {
        if (s->buf == NULL && (s->buf = malloc(STREAM_MAX)) == NULL)
            exit(1);
        size_t k = ev->len < STREAM_MAX - s->len ? ev->len : STREAM_MAX - s->len;
        memcpy(s->buf + s->len, ev->data, k);
        s->len += k;
    } else if (ev->kind == VN_TCP_CLOSE) {
        for (int d = 0; d < 2; d++) {
            struct stream *t = &c->s[ev->conn][d];
            cut_stream(c->proto, t->buf, t->len);
            free(t->buf);
            t->buf = NULL;
            t->len = 0;
        }
    }
}

static void on_dgram(void *ctx, const struct vn_datagram *dg)
{
    struct capture_ctx *c = ctx;
    if (c->proto == P_EEP)
        add_seed(C_EEP, dg->data, dg->len);
}

static enum proto proto_of(const char *name)
{
    if (!strncmp(name, "vitcp-", 6) || !strncmp(name, "vipl-", 5))
        return P_VITCP;
    if (!strncmp(name, "ift-", 4))
        return P_IFT;
    if (!strncmp(name, "warp-", 5))
        return P_WARP;
    if (!strncmp(name, "eep-", 4))
        return P_EEP;
    return P_NONE;
}

static void seed_capture(const char *dir, const char *name)
{
    const char *ext = strrchr(name, '.');
    if (!ext || (strcmp(ext, ".pcap") && strcmp(ext, ".pcapng")))
        return;
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    struct capture_ctx *c = calloc(1, sizeof *c);
    c->proto = proto_of(name);
    struct vn_reader_callbacks cb = {on_tcp, on_dgram, NULL, c, NULL};
    char err[256];
    if (vn_pcap_read(path, &cb, NULL, NULL, err, sizeof err) != 0)
        fprintf(stderr, "fuzz-seed: %s: %s (seeded what came before)\n", path, err);
    free(c);
    size_t len;
    uint8_t *whole = rb_read_file(path, &len);
    if (whole && len <= PCAP_SEED_MAX)
        add_seed(C_PCAP_READER, whole, len);
    free(whole);
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: fuzz-seed OUTDIR CAPTURE_DIR...\n");
        return 2;
    }
    outdir = argv[1];
    mkdir(outdir, 0755);
    for (int c = 0; c < C_COUNT; c++) {
        char p[4096];
        snprintf(p, sizeof p, "%s/%s", outdir, corpus_name[c]);
        if (mkdir(p, 0755) != 0 && errno != EEXIST) {
            fprintf(stderr, "fuzz-seed: cannot create %s: %s\n", p, strerror(errno));
            return 1;
        }
        /* a fresh corpus on every run (the folder is ours) */
        DIR *d = opendir(p);
        struct dirent *e;
        while (d && (e = readdir(d)) != NULL) {
            char f[4096 + 256];
            snprintf(f, sizeof f, "%s/%s", p, e->d_name);
            if (e->d_name[0] != '.')
                unlink(f);
        }
        if (d)
            closedir(d);
    }
    for (int i = 2; i < argc; i++) {
        DIR *d = opendir(argv[i]);
        if (!d) {
            fprintf(stderr, "fuzz-seed: cannot open %s: %s\n", argv[i], strerror(errno));
            return 1;
        }
        char *names[512];
        size_t n = 0;
        struct dirent *e;
        while ((e = readdir(d)) != NULL && n < 512)
            if (e->d_name[0] != '.')
                names[n++] = strdup(e->d_name);
        closedir(d);
        qsort(names, n, sizeof names[0], by_name); /* the same corpus on every file system */
        for (size_t k = 0; k < n; k++) {
            seed_capture(argv[i], names[k]);
            free(names[k]);
        }
    }
    /* the captures carry one or two CE option sets: add every combination
     * the encoder builds, and the same followed by an unknown option */
    for (unsigned k = 0; k < 8; k++) {
        uint8_t opts[64];
        size_t n = vw_vitcp_opts_build(opts, sizeof opts, k & 1, k & 2, k & 4);
        add_seed(C_VITCP_OPTIONS, opts, n);
        static const uint8_t unknown[] = {0x00, 0x09, 0x00, 0x08, 1, 2, 3, 4};
        memcpy(opts + n, unknown, sizeof unknown);
        add_seed(C_VITCP_OPTIONS, opts, n + sizeof unknown);
    }
    for (int c = 0; c < C_COUNT; c++) {
        printf("%s%s %u", c ? ", " : "fuzz-seed: ", corpus_name[c], corpus_count[c]);
        if (corpus_count[c] == 0 && c != C_PCAP_READER) {
            printf("\n");
            fprintf(stderr, "fuzz-seed: no seed for %s in the captures given\n", corpus_name[c]);
            return 1;
        }
    }
    printf("\n");
    return 0;
}
