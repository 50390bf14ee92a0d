/* Network impairment profiles (conform/relay.h, C61): parsing, the
 * shipped named profiles, a case's seed and what a recording shows of
 * them. The relay (relay.c) applies them. */
#include "conform/relay.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* name, its parameters, what it exercises */
const char *const cf_impair_profiles[][3] = {
    {"lossy", "loss=3%,dup=1%",
     "TCP retransmissions and duplicate segments: a receiver must see the same byte stream"},
    {"reordering", "reorder=10%,delay=0-1ms",
     "segments overtaking each other: out-of-order arrival, TCP's reassembly, SACK"},
    {"jittery", "delay=1-20ms",
     "varying delay, which also reorders: timers, ACK clocking, slow answers inside the slack"},
    {"tiny-segments", "resegment=1-100",
     "every data segment cut into pieces of 1 to 100 bytes: PDUs split anywhere, headers across segments"},
    {NULL, NULL, NULL},
};

/* "2%", "0.5%" or "0.02": per million. */
static int parse_rate(const char *v, unsigned *ppm)
{
    char *end;
    errno = 0;
    double d = strtod(v, &end);
    if (errno || end == v)
        return -1;
    if (*end == '%') {
        d /= 100.0;
        end++;
    }
    if (*end || d < 0.0 || d > 0.5) /* more than half lost is no network a stack could use */
        return -1;
    *ppm = (unsigned)(d * 1e6 + 0.5);
    return 0;
}

/* "5ms", "500us", "0" (milliseconds by default): microseconds. */
static int parse_time(const char *v, const char *stop, unsigned *us)
{
    char *end;
    errno = 0;
    double d = strtod(v, &end);
    if (errno || end == v || d < 0.0)
        return -1;
    double unit = 1000.0;
    if (end < stop && strncmp(end, "us", 2) == 0) {
        unit = 1.0;
        end += 2;
    } else if (end < stop && strncmp(end, "ms", 2) == 0) {
        end += 2;
    } else if (end < stop && *end == 's') {
        unit = 1e6;
        end++;
    }
    if (end != stop || d * unit > 1e6) /* a second at most: a suite must still finish */
        return -1;
    *us = (unsigned)(d * unit + 0.5);
    return 0;
}

/* "A-B" or "A" of times or of numbers. */
static int parse_range(const char *v, bool times, unsigned *lo, unsigned *hi)
{
    const char *dash = strchr(v, '-');
    const char *end = v + strlen(v);
    if (times) {
        if (!dash) {
            if (parse_time(v, end, lo) < 0)
                return -1;
            *hi = *lo;
            return 0;
        }
        /* "1-20ms": a lower bound without a unit takes the upper's */
        char first[32];
        bool bare = dash > v && strchr("0123456789.", dash[-1]);
        const char *unit = bare ? dash + 1 + strspn(dash + 1, "0123456789.") : "";
        int w = snprintf(first, sizeof first, "%.*s%s", (int)(dash - v), v, unit);
        if (w < 0 || (size_t)w >= sizeof first || parse_time(first, first + strlen(first), lo) < 0)
            return -1;
        if (parse_time(dash + 1, end, hi) < 0)
            return -1;
    } else {
        char *e;
        errno = 0;
        unsigned long a = strtoul(v, &e, 10), b = a;
        if (errno || e == v || (*e && *e != '-'))
            return -1;
        if (*e == '-') {
            const char *s2 = e + 1;
            b = strtoul(s2, &e, 10);
            if (e == s2 || *e)
                return -1;
        }
        if (a == 0 || b > 65535)
            return -1;
        *lo = (unsigned)a;
        *hi = (unsigned)b;
    }
    return *hi < *lo ? -1 : 0;
}

static int apply(struct cf_impair *imp, const char *key, const char *val, char *why, size_t whylen)
{
    int rc = -1;
    if (strcmp(key, "loss") == 0)
        rc = parse_rate(val, &imp->loss_ppm);
    else if (strcmp(key, "dup") == 0)
        rc = parse_rate(val, &imp->dup_ppm);
    else if (strcmp(key, "reorder") == 0)
        rc = parse_rate(val, &imp->reorder_ppm);
    else if (strcmp(key, "delay") == 0)
        rc = parse_range(val, true, &imp->delay_min_us, &imp->delay_max_us);
    else if (strcmp(key, "hold") == 0)
        rc = parse_range(val, true, &imp->reorder_hold_us, &imp->reorder_hold_us);
    else if (strcmp(key, "resegment") == 0)
        rc = parse_range(val, false, &imp->reseg_min, &imp->reseg_max);
    else if (strcmp(key, "seed") == 0) {
        char *e;
        errno = 0;
        imp->seed = strtoull(val, &e, 0);
        rc = errno || e == val || *e ? -1 : 0;
    } else {
        snprintf(why, whylen, "--impair: unknown '%s' (loss, dup, reorder, delay, hold, resegment, seed, or a "
                 "profile: lossy, reordering, jittery, tiny-segments)", key);
        return -1;
    }
    if (rc < 0)
        snprintf(why, whylen, "--impair: bad %s '%s' (loss/dup/reorder: N%% up to 50%%; delay/hold: N or A-B in "
                 "ms or us, up to 1 s; resegment: A-B bytes, 1..65535; seed: a number)", key, val);
    return rc;
}

int cf_impair_parse(const char *spec, struct cf_impair *out, char *why, size_t whylen)
{
    memset(out, 0, sizeof *out);
    out->seed = 1;
    out->reorder_hold_us = 5000;
    char buf[256];
    if (!*spec || strlen(spec) >= sizeof buf) {
        snprintf(why, whylen, "--impair: give a profile (lossy, reordering, jittery, tiny-segments) or "
                 "loss=N%%,dup=N%%,reorder=N%%,delay=A-Bms,resegment=A-B,seed=N");
        return -1;
    }
    strcpy(buf, spec);
    for (char *save = NULL, *w = strtok_r(buf, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(w, '=');
        if (!eq) {
            const char *params = NULL;
            for (size_t i = 0; cf_impair_profiles[i][0]; i++)
                if (strcmp(cf_impair_profiles[i][0], w) == 0)
                    params = cf_impair_profiles[i][1];
            if (!params) {
                snprintf(why, whylen, "--impair: unknown profile '%s' (lossy, reordering, jittery, tiny-segments)",
                         w);
                return -1;
            }
            char sub[128];
            snprintf(sub, sizeof sub, "%s", params);
            for (char *s2 = NULL, *p = strtok_r(sub, ",", &s2); p; p = strtok_r(NULL, ",", &s2)) {
                char *e2 = strchr(p, '=');
                *e2 = 0;
                if (apply(out, p, e2 + 1, why, whylen) < 0)
                    return -1;
            }
            continue;
        }
        *eq = 0;
        if (apply(out, w, eq + 1, why, whylen) < 0)
            return -1;
    }
    out->on = out->loss_ppm || out->dup_ppm || out->reorder_ppm || out->delay_max_us || out->reseg_max;
    if (!out->on) {
        snprintf(why, whylen, "--impair '%s' impairs nothing", spec);
        return -1;
    }
    snprintf(out->text, sizeof out->text,
             "loss=%.4g%%,dup=%.4g%%,reorder=%.4g%%,hold=%uus,delay=%u-%uus,resegment=%u-%u,seed=%llu",
             out->loss_ppm / 1e4, out->dup_ppm / 1e4, out->reorder_ppm / 1e4, out->reorder_hold_us,
             out->delay_min_us, out->delay_max_us, out->reseg_min, out->reseg_max, (unsigned long long)out->seed);
    return 0;
}

uint64_t cf_impair_case_seed(const struct cf_impair *imp, const char *case_id)
{
    uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a of the id */
    for (const unsigned char *p = (const unsigned char *)case_id; *p; p++)
        h = (h ^ *p) * 0x100000001b3ull;
    uint64_t s = h ^ (imp->seed * 0x9E3779B97F4A7C15ull);
    return s ? s : 1;
}

void cf_impair_counts_text(const struct cf_impair_counts *k, char *out, size_t n)
{
    out[0] = 0;
    const unsigned v[] = {k->lost, k->copied, k->reordered, k->delayed, k->pieces};
    const char *const w[] = {"lost", "copied", "reordered", "delayed", "pieces of cut segments"};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
        size_t have = strlen(out);
        if (v[i])
            snprintf(out + have, n - have, "%s%u %s", have ? ", " : "", v[i], w[i]);
    }
}

void cf_impair_summary(const struct cf_relay_packet *p, size_t count, char *out, size_t n)
{
    struct cf_impair_counts k = {0};
    for (size_t i = 0; i < count; i++) {
        k.lost += (p[i].impaired & CF_IMPAIR_LOST) != 0;
        k.copied += (p[i].impaired & CF_IMPAIR_COPY) != 0;
        k.reordered += (p[i].impaired & CF_IMPAIR_REORDERED) != 0;
        k.delayed += (p[i].impaired & CF_IMPAIR_DELAYED) != 0;
        k.pieces += (p[i].impaired & CF_IMPAIR_PIECE) != 0;
    }
    cf_impair_counts_text(&k, out, n);
}

static uint64_t cf_impair_next(uint64_t *s) /* splitmix64 */
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

bool cf_impair_chance(uint64_t *s, unsigned ppm)
{
    return ppm && cf_impair_next(s) % 1000000u < ppm;
}

unsigned cf_impair_between(uint64_t *s, unsigned lo, unsigned hi)
{
    return hi <= lo ? lo : lo + (unsigned)(cf_impair_next(s) % (uint64_t)(hi - lo + 1u));
}
