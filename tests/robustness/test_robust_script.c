/*
 * vitcp-trafgen scenario files (-f, tg_script_load) damaged the way case
 * files are: truncation, extreme and negative byte counts, unknown words,
 * binary junk, CRLF, NULs, overlong lines. Each load returns a script
 * inside its limits or NULL with "FILE:LINE: reason" (or "FILE: reason"
 * for the file as a whole); small valid results are then generated to a
 * pcap through tg_main, which must exit 0 (seeded: VITCP_ROBUST_SEED).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "robust_common.h"
#include "vitcp/trafgen.h"

static const char base[] =
    "# a VI/TCP scenario\n"
    "connect crc rdma-write rdma-read\n"
    "send c2s 3000 imm\n"
    "send s2c 0\n"
    "write c2s 5000\n"
    "read s2c 7000\n"
    "nop c2s\n"
    "write s2c 100 imm\n"
    "close\n";

static const char *const words[] = {"connect", "send", "write", "read", "nop", "close", "c2s", "s2c", "imm",
                                    "crc", "dfc", "rdma-read", "0", "1", "-1", "1073741824", "1073741825",
                                    "99999999999999999999", "0x10", "+5", "", "#", "\t", "\r"};

static unsigned lines_of(const char *t, size_t n)
{
    unsigned l = 1;
    for (size_t i = 0; i + 1 < n; i++)
        l += t[i] == '\n';
    return l;
}

static void test_script_damage(void **state)
{
    (void)state;
    char dir[512], path[700], out[700];
    rb_tmpdir(dir, sizeof dir, "script");
    snprintf(path, sizeof path, "%s/s.scn", dir);
    snprintf(out, sizeof out, "%s/o.pcap", dir);
    struct rb_rng r = {rb_seed("scenario files", 0x5EED0501u)};
    static char buf[8192];
    size_t blen = strlen(base);
    unsigned ok = 0, refused = 0, generated = 0;
    for (unsigned it = 0; it < 3000; it++) {
        size_t n = 0;
        unsigned kind = (unsigned)rb_below(&r, 6);
        switch (kind) {
        case 0: /* truncate */
            n = (size_t)rb_below(&r, blen + 1);
            memcpy(buf, base, n);
            break;
        case 1: { /* replace a word by another word or number */
            memcpy(buf, base, blen);
            n = blen;
            size_t at = (size_t)rb_below(&r, blen);
            while (at < n && (buf[at] == ' ' || buf[at] == '\n'))
                at++;
            size_t e = at;
            while (e < n && buf[e] != ' ' && buf[e] != '\n')
                e++;
            const char *w = words[rb_below(&r, sizeof words / sizeof words[0])];
            size_t wl = strlen(w);
            memmove(buf + at + wl, base + e, blen - e);
            memcpy(buf + at, w, wl);
            n = at + wl + blen - e;
            break;
        }
        case 2: /* binary junk, NULs included */
            n = rb_insert_junk(&r, buf, base, blen, 30);
            break;
        case 3: { /* an overlong line */
            size_t k = 400 + (size_t)rb_below(&r, 800);
            memcpy(buf, base, blen);
            for (size_t i = 0; i < k; i++)
                buf[blen + i] = i % 7 ? 'x' : ' ';
            n = blen + k;
            break;
        }
        case 4: /* CRLF */
            for (size_t i = 0; i < blen; i++) {
                if (base[i] == '\n')
                    buf[n++] = '\r';
                buf[n++] = base[i];
            }
            break;
        default: { /* lines in random order */
            const char *ls[16];
            size_t ll[16], nl = 0;
            for (const char *p = base; *p && nl < 16;) {
                const char *e = strchr(p, '\n');
                ls[nl] = p, ll[nl] = (size_t)(e - p) + 1, nl++;
                p = e + 1;
            }
            for (size_t i = 0; i < nl; i++) {
                size_t j = (size_t)rb_below(&r, nl);
                memcpy(buf + n, ls[j], ll[j]);
                n += ll[j];
            }
            break;
        }
        }
        assert_int_equal(rb_write_file(path, buf, n), 0);
        char err[512];
        memset(err, 'X', sizeof err);
        struct tg_script *s = tg_script_load(path, err, sizeof err);
        if (s == NULL) {
            refused++;
            if (memchr(err, '\0', sizeof err) == NULL)
                fail_msg("iteration %u: error not terminated", it);
            size_t pl = strlen(path);
            unsigned line = 0;
            if (strncmp(err, path, pl) != 0 || err[pl] != ':')
                fail_msg("iteration %u (damage %u): error does not start with the file: '%s'", it, kind, err);
            if (sscanf(err + pl, ":%u:", &line) == 1 && (line == 0 || line > lines_of(buf, n)))
                fail_msg("iteration %u: error names line %u of %u: '%s'", it, line, lines_of(buf, n), err);
            continue;
        }
        ok++;
        tg_script_free(s);
        /* generate what loaded (byte counts are at most 1 GiB each: only
         * small files, to stay fast) */
        if (n < 400 && strstr(buf, "1073741824") == NULL && generated < 150) {
            char *argv[] = {(char *)"vitcp-trafgen", (char *)"-q", (char *)"--no-meta", (char *)"-f", path,
                            (char *)"-w", out, NULL};
            fflush(stdout);
            int rc = tg_main(7, argv);
            if (rc != 0)
                fail_msg("iteration %u: a scenario that loads does not generate (exit %d)", it, rc);
            generated++;
        }
    }
    fprintf(stderr, "# scenario files: %u loaded (%u generated), %u refused\n", ok, generated, refused);
    assert_true(ok > 100 && refused > 1000 && generated > 20);
    rb_rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_script_damage)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
