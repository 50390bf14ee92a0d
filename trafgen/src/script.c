/* VI/TCP scenario files: one step per line.
 *   connect [crc] [rdma-write] [rdma-read] [dfc]
 *   send|write c2s|s2c BYTES [imm]
 *   read c2s|s2c BYTES       (the request from that side, the response from the other)
 *   nop c2s|s2c
 *   close
 * '#' starts a comment. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "script.h"

#define MAX_STEPS 100000

static int parse_dir(const char *w, int *dir)
{
    if (w && strcmp(w, "c2s") == 0)
        *dir = 0;
    else if (w && strcmp(w, "s2c") == 0)
        *dir = 1;
    else
        return -1;
    return 0;
}

static int parse_step(char *line, struct tg_step *st, char *why, size_t whylen)
{
    char *words[8] = {0};
    int n = 0;
    for (char *tok = strtok(line, " \t\r\n"); tok; tok = strtok(NULL, " \t\r\n")) {
        if (n == 8) {
            snprintf(why, whylen, "more than 8 words in one step");
            return -1;
        }
        words[n++] = tok;
    }
    memset(st, 0, sizeof *st);
    if (n == 0) {
        snprintf(why, whylen, "empty step");
        return -1;
    }
    const char *verb = words[0];
    if (strcmp(verb, "connect") == 0) {
        st->kind = TG_STEP_CONNECT;
        for (int i = 1; i < n; i++) {
            if (strcmp(words[i], "crc") == 0)
                st->crc = true;
            else if (strcmp(words[i], "rdma-write") == 0)
                st->attrs |= VW_VITCP_ATTR_RDMA_WRITE;
            else if (strcmp(words[i], "rdma-read") == 0)
                st->attrs |= VW_VITCP_ATTR_RDMA_READ;
            else if (strcmp(words[i], "dfc") == 0)
                st->attrs |= VW_VITCP_ATTR_DFC;
            else {
                snprintf(why, whylen, "unknown connect option \"%s\"", words[i]);
                return -1;
            }
        }
        return 0;
    }
    if (strcmp(verb, "close") == 0) {
        st->kind = TG_STEP_CLOSE;
        return n == 1 ? 0 : (snprintf(why, whylen, "close takes no arguments"), -1);
    }
    if (strcmp(verb, "nop") == 0)
        st->kind = TG_STEP_NOP;
    else if (strcmp(verb, "send") == 0)
        st->kind = TG_STEP_SEND;
    else if (strcmp(verb, "write") == 0)
        st->kind = TG_STEP_WRITE;
    else if (strcmp(verb, "read") == 0)
        st->kind = TG_STEP_READ;
    else {
        snprintf(why, whylen, "unknown step \"%s\" (connect, send, write, read, nop, close)", verb);
        return -1;
    }
    if (parse_dir(n > 1 ? words[1] : NULL, &st->dir) != 0) {
        snprintf(why, whylen, "%s needs a direction: c2s or s2c", verb);
        return -1;
    }
    if (st->kind == TG_STEP_NOP)
        return n == 2 ? 0 : (snprintf(why, whylen, "nop takes only a direction"), -1);
    if (n < 3) {
        snprintf(why, whylen, "%s needs a byte count", verb);
        return -1;
    }
    char *end;
    errno = 0;
    unsigned long v = strtoul(words[2], &end, 10);
    if (errno || *end || !isdigit((unsigned char)words[2][0]) || v > (1ul << 30) ||
        (v == 0 && st->kind != TG_STEP_SEND)) {
        snprintf(why, whylen, "bad byte count \"%s\"", words[2]);
        return -1;
    }
    st->bytes = (uint32_t)v;
    if (n == 4 && strcmp(words[3], "imm") == 0 && st->kind != TG_STEP_READ)
        st->imm = true;
    else if (n > 3) {
        snprintf(why, whylen, "unexpected \"%s\"", words[3]);
        return -1;
    }
    return 0;
}

struct tg_script *tg_script_load(const char *path, char *err, size_t errlen)
{
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        snprintf(err, errlen, "cannot read scenario file %s: %s", path, strerror(errno));
        return NULL;
    }
    size_t cap = 16;
    struct tg_script *s = malloc(sizeof *s + cap * sizeof s->step[0]);
    if (s == NULL) {
        fclose(f);
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    s->n = 0;
    char line[512];
    unsigned lineno = 0;
    bool connected = false, closed = false;
    while (fgets(line, sizeof line, f)) {
        lineno++;
        if (strchr(line, '\n') == NULL && !feof(f)) {
            snprintf(err, errlen, "%s:%u: line too long", path, lineno);
            goto fail;
        }
        char *hash = strchr(line, '#');
        if (hash)
            *hash = '\0';
        if (strspn(line, " \t\r\n") == strlen(line))
            continue;
        if (s->n == MAX_STEPS) {
            snprintf(err, errlen, "%s: more than %d steps", path, MAX_STEPS);
            goto fail;
        }
        if (s->n == cap) {
            cap *= 2;
            struct tg_script *b = realloc(s, sizeof *s + cap * sizeof s->step[0]);
            if (b == NULL) {
                snprintf(err, errlen, "out of memory");
                goto fail;
            }
            s = b;
        }
        char why[160];
        if (parse_step(line, &s->step[s->n], why, sizeof why) != 0) {
            snprintf(err, errlen, "%s:%u: %s", path, lineno, why);
            goto fail;
        }
        enum tg_step_kind k = s->step[s->n].kind;
        if (k == TG_STEP_CONNECT && (connected || closed)) {
            snprintf(err, errlen, "%s:%u: one connect per file", path, lineno);
            goto fail;
        }
        if (k != TG_STEP_CONNECT && !connected) {
            snprintf(err, errlen, "%s:%u: %s", path, lineno,
                     s->n ? "nothing may follow close (one connection per file)" : "the first step must be connect");
            goto fail;
        }
        connected = k != TG_STEP_CLOSE;
        if (k == TG_STEP_CLOSE)
            closed = true;
        s->n++;
    }
    fclose(f);
    if (s->n == 0) {
        snprintf(err, errlen, "%s: no steps", path);
        free(s);
        return NULL;
    }
    return s;
fail:
    fclose(f);
    free(s);
    return NULL;
}

void tg_script_free(struct tg_script *s) { free(s); }
