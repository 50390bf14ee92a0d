/* The VI/TCP module's entry in the protocol table: the case vocabulary
 * (segment types, fields, attribute names, CE options, discriminators, the
 * CRC trailer) and the judgement of a relay case's recording. Its cases
 * run on the core's generic runner with the session of session.c and
 * send.c. */
#include "conform/proto/vitcp.h"
#include "conform/engine.h"
#include "conform/lint.h"
#include "conform/proto/vitcp_capcase.h"
#include "conform/relay.h"
#include "session.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const field_names[CF_F_COUNT] = {
    [CF_F_VERSION] = "version",   [CF_F_EOM] = "eom",           [CF_F_IDV] = "idv",
    [CF_F_TXERR] = "txerr",       [CF_F_SEGLEN] = "seglen",     [CF_F_OFFSET] = "offset",
    [CF_F_IMM] = "imm",           [CF_F_MSG] = "msg",           [CF_F_ACK] = "ack",
    [CF_F_RXPOSTED] = "rxposted", [CF_F_ERR] = "err",           [CF_F_ATTRS] = "attrs",
    [CF_F_LEVEL] = "level",       [CF_F_MTU] = "mtu",           [CF_F_WINDOW] = "window",
    [CF_F_CALLING_LEN] = "calling_len", [CF_F_CALLED_LEN] = "called_len",
    [CF_F_RDMA_ADDR] = "addr",    [CF_F_RDMA_HANDLE] = "handle", [CF_F_RDMA_LEN] = "rlen",
    [CF_F_OPT_CRC] = "opt.crc",   [CF_F_OPT_URGENT] = "opt.urgent",
    [CF_F_OPT_UNKNOWN] = "opt.unknown", [CF_F_PAYLOAD] = "payload", [CF_F_CRC] = "crc",
};

const char *cf_field_name(enum cf_field f)
{
    return cf_name_at(field_names, CF_F_COUNT, (unsigned)f);
}

int cf_field_by_name(const char *name)
{
    return cf_name_index(field_names, CF_F_COUNT, name);
}

static int type_by_name(const char *name)
{
    for (unsigned t = 0; t < VW_VITCP_TYPE_COUNT; t++)
        if (strcmp(vw_vitcp_type_name(t), name) == 0)
            return (int)t;
    return -1;
}

static bool field_settable(unsigned f)
{
    return f < CF_F_COUNT && f != CF_F_LEVEL && f != CF_F_OPT_CRC && f != CF_F_OPT_URGENT &&
           f != CF_F_OPT_UNKNOWN && f != CF_F_CRC;
}

static bool field_relative(unsigned f)
{
    return f == CF_F_MSG || f == CF_F_ACK;
}

struct flag_name {
    const char *name;
    uint32_t bit;
};

/* Names of the table joined by sep ("U|RWE", "crc,urgent"): their bits
 * ORed into *out. NULL, or the first unknown name (up to sep). */
static const char *parse_flag_names(const char *s, char sep, const struct flag_name *table, size_t count,
                                    uint32_t *out)
{
    const char seps[2] = {sep, 0};
    while (*s) {
        size_t n = strcspn(s, seps), i = 0;
        while (i < count && !(strlen(table[i].name) == n && strncmp(table[i].name, s, n) == 0))
            i++;
        if (i == count)
            return s;
        *out |= table[i].bit;
        s += n;
        if (*s == sep)
            s++;
    }
    return NULL;
}

/* Calling Attributes by name (V8), joined with '|'. */
static int parse_symbol(unsigned field, const char *text, int64_t *out, char *why, size_t whylen)
{
    static const struct flag_name attrs[] = {
        {"U", VW_VITCP_ATTR_UNRELIABLE},   {"RD", VW_VITCP_ATTR_RELIABLE_DELIVERY},
        {"RR", VW_VITCP_ATTR_RELIABLE_RECEPTION}, {"RWE", VW_VITCP_ATTR_RDMA_WRITE},
        {"RRE", VW_VITCP_ATTR_RDMA_READ},  {"DFC", VW_VITCP_ATTR_DFC},
        {"P2P", VW_VITCP_ATTR_P2P},        {"NONE", 0},
    };
    if (field != CF_F_ATTRS && field != CF_F_LEVEL)
        return 0;
    uint32_t bits = 0;
    if (parse_flag_names(text, '|', attrs, sizeof attrs / sizeof attrs[0], &bits)) {
        snprintf(why, whylen, "unknown attribute name in '%s' (U RD RR RWE RRE DFC P2P)", text);
        return -1;
    }
    *out = bits;
    return 1;
}

static int parse_directive(struct cf_case *c, char *const *tok, int ntok, char *why, size_t whylen)
{
    uint32_t flag = strcmp(tok[0], "segments") == 0         ? CF_VITCP_CASE_SEGMENTS
                    : strcmp(tok[0], "level-optional") == 0 ? CF_VITCP_CASE_LEVEL_OPTIONAL
                                                            : 0;
    if (!flag)
        return 0;
    if (ntok != 1) {
        snprintf(why, whylen, "'%s' takes nothing", tok[0]);
        return -1;
    }
    c->flags |= flag;
    return 1;
}

static unsigned var_by_name(const char *text, size_t *len)
{
    static const struct { const char *name; unsigned var; } vars[] = {
        {"$addr", CF_VAR_ADDR}, {"$handle", CF_VAR_HANDLE}, {"$len", CF_VAR_LEN},
        {"$window", CF_VAR_WINDOW}, {"$rx", CF_VAR_RX}, {"$level", CF_VAR_LEVEL},
    };
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
        size_t n = strlen(vars[i].name);
        if (strncmp(text, vars[i].name, n) == 0 && !isalnum((unsigned char)text[n])) {
            *len = n;
            return vars[i].var;
        }
    }
    return 0;
}

static bool var_is_bits(unsigned var)
{
    return var == CF_VAR_LEVEL;
}

static int parse_options_list(struct cf_step *st, const char *v, char *why, size_t whylen)
{
    static const struct flag_name opts[] = {
        {"crc", CF_VITCP_OPT_CRC}, {"urgent", CF_VITCP_OPT_URGENT}, {"unknown", CF_VITCP_OPT_UNKNOWN},
        {"eol", CF_VITCP_OPT_EOL}, {"badlen", CF_VITCP_OPT_BAD_LEN}, {"none", 0},
    };
    const char *bad = parse_flag_names(v, ',', opts, sizeof opts / sizeof opts[0], &st->opts);
    if (bad) {
        snprintf(why, whylen, "unknown option '%.*s' (crc urgent unknown eol badlen none)", (int)strcspn(bad, ","),
                 bad);
        return -1;
    }
    return 1;
}

static int parse_send_arg(struct cf_step *st, const char *name, const char *v, char *why, size_t whylen)
{
    if (!v)
        return strcmp(name, "noeom") == 0 ? (st->noeom = true, 1) : 0;
    if (strcmp(name, "calling") == 0 || strcmp(name, "called") == 0) {
        if (strlen(v) >= CF_STEP_STR_MAX) {
            snprintf(why, whylen, "discriminator too long");
            return -1;
        }
        strcpy(st->str[name[4] == 'i' ? CF_VITCP_STR_CALLING : CF_VITCP_STR_CALLED], v);
        return 1;
    }
    if (strcmp(name, "opts") == 0)
        return parse_options_list(st, v, why, whylen);
    if (strcmp(name, "crc") == 0) {
        if (strcmp(v, "none") == 0) st->trailer = CF_TRAILER_NONE;
        else if (strcmp(v, "good") == 0) st->trailer = CF_TRAILER_GOOD;
        else if (strcmp(v, "bad") == 0) st->trailer = CF_TRAILER_BAD;
        else if (strcmp(v, "auto") == 0) st->trailer = CF_TRAILER_AUTO;
        else {
            snprintf(why, whylen, "crc= takes none, good, bad or auto");
            return -1;
        }
        return 1;
    }
    return 0;
}

static void state_init(void *state)
{
    struct cf_vitcp_settings *s = state;
    memset(s, 0, sizeof *s);
    snprintf(s->discriminator, sizeof s->discriminator, "vitcp-conform");
    s->announce = true;
}

struct cf_vitcp_settings *cf_vitcp_settings(struct cf_engine *e)
{
    return cf_engine_state(e, &cf_proto_vitcp);
}

static const struct cf_option run_options[] = {
    {"--discriminator", true},
    {"--no-announce", false},
    {NULL, false},
};

static int set_option(void *state, const char *name, const char *value, char *why, size_t whylen)
{
    struct cf_vitcp_settings *s = state;
    if (strcmp(name, "--no-announce") == 0) {
        s->announce = false;
        return 0;
    }
    if (strlen(value) > 64) {
        snprintf(why, whylen, "--discriminator '%s' is longer than 64 bytes", value);
        return -1;
    }
    snprintf(s->discriminator, sizeof s->discriminator, "%s", value);
    return 0;
}

#define LINKTYPE_RAW 101 /* bare IP packets, as the relay keeps them */

/* The lint's rules on a relay case's recording (C30): the real TCP
 * segments of both sides, the connection VI/TCP by the server's port, the
 * target's segments judged. Errors fail the case (the first one wins),
 * warnings are advisory notes. */
static void judge_recording(const struct cf_engine *e, const struct cf_case *c, const struct cf_relay_packet *pk,
                            size_t n, unsigned first_frame, struct cf_result *res, bool *decided)
{
    /* the lint's directions count from the side that sent the first bytes */
    int target_dir = 1;
    for (size_t i = 0; i < n; i++)
        if (cf_relay_payload(&pk[i], NULL) > 0) {
            target_dir = pk[i].from == CF_RELAY_TARGET ? 0 : 1;
            break;
        }
    struct cf_lint_result lr = {0};
    struct cf_lint_frame *frames = calloc(n ? n : 1, sizeof *frames);
    char err[256] = "out of memory";
    int rc = -1;
    if (frames) {
        snprintf(err, sizeof err, "no lint module takes --port");
        for (size_t i = 0; i < n; i++)
            frames[i] = (struct cf_lint_frame){pk[i].usec, pk[i].data, pk[i].len};
        struct cf_lint_options o;
        cf_lint_options_init(&o);
        char port[8];
        snprintf(port, sizeof port, "%u", c->passive ? (unsigned)e->listen_port : (unsigned)atoi(e->port));
        rc = cf_lint_set_option(&o, "--port", port, NULL, err, sizeof err) > 0 /* VI/TCP's lint port */
                 ? cf_lint_frames(LINKTYPE_RAW, frames, n, &o, &lr, err, sizeof err)
                 : -1;
        free(frames);
    }
    if (rc < 0 && !*decided) {
        *decided = true;
        res->verdict = CF_FAIL;
        res->failed_req = c->reqs[0];
        cf_result_set_message(res, "%s: cannot lint the relay's recording: %s", c->file, err);
    }
    for (size_t i = 0; i < lr.count && rc == 0; i++) {
        const struct cf_lint_issue *is = &lr.issues[i];
        if (is->dir != target_dir || is->req == VW_REQ_NONE)
            continue;
        unsigned frame = first_frame + (unsigned)is->frame;
        if (is->severity == VW_SEV_ERROR && !*decided) {
            *decided = true;
            cf_result_add_frame(res, frame);
            res->verdict = CF_FAIL;
            res->failed_req = is->req;
            res->rule_broken = true; /* the target's bytes broke it */
            cf_result_set_message(res, "%s: the relay's recording, frame %u: %s [%s]", c->file, frame, is->detail,
                                  vw_req_id(is->req));
        } else if (is->severity == VW_SEV_WARN && !*decided && !strstr(res->message, vw_req_id(is->req))) {
            size_t have = strlen(res->message);
            if (have + 8 < sizeof res->message)
                snprintf(res->message + have, sizeof res->message - have, "%sadvisory %s (frame %u): %s",
                         have ? "; " : "", vw_req_id(is->req), frame, is->detail);
        }
    }
    cf_lint_result_free(&lr);
}

const struct conform_protocol cf_proto_vitcp = {
    .name = "vitcp",
    .title = "VI/TCP",
    .unit = "segment",
    .req_prefix = "VITCP-",
    .default_port = VW_VITCP_DEFAULT_PORT,
    .cases_subdir = "",
    .type_by_name = type_by_name,
    .type_name = vw_vitcp_type_name,
    .field_names = field_names,
    .field_count = CF_F_COUNT,
    .field_settable = field_settable,
    .field_relative = field_relative,
    .max_payload = VW_VITCP_SEG_MAX,
    .parse_symbol = parse_symbol,
    .parse_directive = parse_directive,
    .var_by_name = var_by_name,
    .var_is_bits = var_is_bits,
    .var_names = "$addr $handle $len $window $rx $level",
    .parse_send_arg = parse_send_arg,
    .state_init = state_init,
    .run_options = run_options,
    .run_usage = "[--discriminator D] [--no-announce]",
    .run_help = "  --discriminator D: the discriminator of the tester's ConnectRequests (and of capture cases\n"
                "  with 'discriminator run'). --no-announce: the target's first 16-byte Send is data, not the\n"
                "  announcement of its RDMA region (C8; then --region names the region).\n",
    .set_option = set_option,
    .judge_recording = judge_recording,
    .run_case = cf_vitcp_run_case,
    .check_alive = cf_vitcp_check_alive,
    .encode = cf_vitcp_encode,
    .session_new = cf_vitcp_session_new,
    .session_free = cf_vitcp_session_free,
    .session_feed = cf_vitcp_session_feed,
    /* no session_finish: an expect that meets the close names what is missing */
    .msg_free = cf_msg_free,
    .field_value = cf_vitcp_field_value,
    .describe = cf_vitcp_describe,
    .runner_flags = CF_RUNNER_FRAMES_AT_VERDICT | CF_RUNNER_AWAIT_KEEPS | CF_RUNNER_CLOSE_ANY | CF_RUNNER_DRAIN,
    .resolve = cf_vitcp_resolve,
    .field_ignored = cf_vitcp_field_ignored,
    .unmatched = cf_vitcp_unmatched,
    .match_more = cf_vitcp_match_more,
    .send_ready = cf_vitcp_send_ready,
    .idle_send = cf_vitcp_idle_send,
    .session_sending = cf_vitcp_session_sending,
    .session_flush = cf_vitcp_session_flush,
    .flush_quiet_ms = 300, /* no next segment for this long: the message is compared as it is */
    .session_urgent = cf_vitcp_session_urgent,
    .session_unframed = cf_vitcp_session_unframed,
    .load_capture_case = cf_capcase_load,
    .capture_send_note = cf_capcase_send_note,
    .is_capture_meta = cf_capcase_is_meta_name,
};
