/* See pcapng_block.h. */
#include "pcapng_block.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define BT_SHB 0x0A0D0D0Au
#define BT_IDB 0x00000001u
#define BT_EPB 0x00000006u
#define BYTE_ORDER_MAGIC 0x1A2B3C4Du
#define OPT_ENDOFOPT 0
#define OPT_COMMENT 1
#define SHB_USERAPPL 4
#define IF_TSRESOL 9
/* A block's options and body stay far below this; larger comments are an error. */
#define BLOCK_MAX (16u * 1024u * 1024u)

struct block {
    uint8_t *b;
    size_t len, cap;
    bool bad;
};

static void put(struct block *k, const void *p, size_t n)
{
    if (k->bad || n == 0)
        return;
    if (k->len + n > BLOCK_MAX) {
        k->bad = true;
        return;
    }
    if (k->len + n > k->cap) {
        size_t cap = (k->len + n) * 2 + 64;
        uint8_t *nb = realloc(k->b, cap);
        if (nb == NULL) {
            k->bad = true;
            return;
        }
        k->b = nb;
        k->cap = cap;
    }
    memcpy(k->b + k->len, p, n);
    k->len += n;
}

static void put16(struct block *k, uint16_t v)
{
    uint8_t b[2] = {(uint8_t)v, (uint8_t)(v >> 8)};
    put(k, b, 2);
}

static void put32(struct block *k, uint32_t v)
{
    uint8_t b[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)};
    put(k, b, 4);
}

static void pad4(struct block *k)
{
    static const uint8_t zero[3] = {0, 0, 0};
    put(k, zero, (4 - k->len % 4) % 4);
}

static void option(struct block *k, uint16_t code, const void *data, size_t len)
{
    if (len > 0xFFFFu) {
        k->bad = true;
        return;
    }
    put16(k, code);
    put16(k, (uint16_t)len);
    put(k, data, len);
    pad4(k);
}

static void text_option(struct block *k, uint16_t code, const char *text)
{
    if (text != NULL && text[0] != '\0')
        option(k, code, text, strlen(text));
}

static void begin(struct block *k, uint32_t type)
{
    put32(k, type);
    put32(k, 0); /* total length, patched by finish */
}

/* Patch the length at both ends and write the block. */
static int finish(struct block *k, FILE *f)
{
    put32(k, 0);
    int rc = -1;
    if (!k->bad && k->len % 4 == 0) {
        uint32_t n = (uint32_t)k->len;
        uint8_t le[4] = {(uint8_t)n, (uint8_t)(n >> 8), (uint8_t)(n >> 16), (uint8_t)(n >> 24)};
        memcpy(k->b + 4, le, 4);
        memcpy(k->b + k->len - 4, le, 4);
        rc = fwrite(k->b, 1, k->len, f) == k->len ? 0 : -1;
    }
    free(k->b);
    return rc;
}

int vn_pcapng_write_shb(FILE *f, const char *comment, const char *application)
{
    struct block k = {0};
    begin(&k, BT_SHB);
    put32(&k, BYTE_ORDER_MAGIC);
    put16(&k, 1); /* version 1.0 */
    put16(&k, 0);
    put32(&k, 0xFFFFFFFFu); /* section length not given (-1) */
    put32(&k, 0xFFFFFFFFu);
    text_option(&k, OPT_COMMENT, comment);
    text_option(&k, SHB_USERAPPL, application);
    option(&k, OPT_ENDOFOPT, NULL, 0);
    return finish(&k, f);
}

int vn_pcapng_write_idb(FILE *f, uint16_t linktype, uint32_t snaplen)
{
    struct block k = {0};
    begin(&k, BT_IDB);
    put16(&k, linktype);
    put16(&k, 0);
    put32(&k, snaplen);
    uint8_t usec = 6; /* timestamps in microseconds (also the default) */
    option(&k, IF_TSRESOL, &usec, 1);
    option(&k, OPT_ENDOFOPT, NULL, 0);
    return finish(&k, f);
}

int vn_pcapng_write_epb(FILE *f, uint64_t ts_usec, const uint8_t *data, size_t len, const char *comment)
{
    if (len > 0xFFFFFFFFu)
        return -1;
    struct block k = {0};
    begin(&k, BT_EPB);
    put32(&k, 0); /* interface 0 */
    put32(&k, (uint32_t)(ts_usec >> 32));
    put32(&k, (uint32_t)ts_usec);
    put32(&k, (uint32_t)len); /* captured */
    put32(&k, (uint32_t)len); /* on the wire */
    put(&k, data, len);
    pad4(&k);
    if (comment != NULL && comment[0] != '\0') {
        text_option(&k, OPT_COMMENT, comment);
        option(&k, OPT_ENDOFOPT, NULL, 0);
    }
    return finish(&k, f);
}
