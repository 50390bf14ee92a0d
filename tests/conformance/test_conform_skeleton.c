/* The skeleton protocol module (skeleton_module.c, docs/conformance-engine.md
 * "Adding a protocol") on the engine's core: registered here alone, in a
 * registry of this test's own that takes the place of proto/registry.c (a
 * static library's member is linked only when it is needed), it lints a
 * conversation through the lint core and reports it, supplies lint's and
 * run's options and help, and its conformance module encodes a send and
 * decodes the target's bytes however they are cut. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <cmocka.h>

#include "conform/case.h"
#include "conform/cli.h"
#include "conform/lint.h"
#include "skeleton_module.h"
#include "vitcp/tcp_flow.h"

/* ------------------------------------------ the registry, SKEL's alone */

const struct conform_protocol *const cf_protocols[] = {&cf_proto_skeleton, NULL};
const struct cf_lint_module *const cf_lint_modules[] = {&cf_lint_skeleton, NULL};

const struct conform_protocol *cf_protocol_find(const char *name)
{
    return strcasecmp(name, cf_proto_skeleton.name) == 0 ? &cf_proto_skeleton : NULL;
}

const struct conform_protocol *cf_protocol_default(void)
{
    return &cf_proto_skeleton;
}

const char *cf_protocol_names(void)
{
    return cf_proto_skeleton.name;
}

const struct cf_lint_module *cf_lint_module_default(void)
{
    return &cf_lint_skeleton;
}

/* ------------------------------------------------------------ helpers */

#define LINKTYPE_ETHERNET 1
#define MAX_FRAMES 32

struct frames {
    struct cf_lint_frame f[MAX_FRAMES];
    size_t n;
};

static int keep_frame(void *ctx, const uint8_t *frame, size_t len)
{
    struct frames *fr = ctx;
    assert_true(fr->n < MAX_FRAMES);
    uint8_t *copy = malloc(len);
    assert_non_null(copy);
    memcpy(copy, frame, len);
    fr->f[fr->n] = (struct cf_lint_frame){1000000u * (fr->n + 1), copy, len};
    fr->n++;
    return 0;
}

static void frames_free(struct frames *fr)
{
    for (size_t i = 0; i < fr->n; i++)
        free((void *)fr->f[i].data);
    fr->n = 0;
}

/* A SKEL conversation on server port `port`: the client's Hello, the
 * server's Data in two segments, a message of unknown type 9 from the
 * client, the server's last 2 bytes of a message it never finishes, FINs. */
static void conversation(struct frames *fr, uint16_t port)
{
    struct vn_tcp_flow f;
    assert_int_equal(vn_tcp_flow_init(&f, (struct vn_sink){keep_frame, fr}, "10.0.0.1", 40000, "10.0.0.2", port), 0);
    assert_int_equal(vn_tcp_handshake(&f), 0);
    static const uint8_t hello[] = {1, 1, 0, 3, 'a', 'b', 'c'};
    static const uint8_t data[] = {2, 0, 0, 5, 1, 2, 3, 4, 5};
    static const uint8_t odd[] = {9, 0, 0, 0};
    static const uint8_t part[] = {2, 0};
    assert_int_equal(vn_tcp_send(&f, VN_C2S, hello, sizeof hello), 0);
    assert_int_equal(vn_tcp_send(&f, VN_S2C, data, 6), 0);
    assert_int_equal(vn_tcp_send(&f, VN_S2C, data + 6, sizeof data - 6), 0);
    assert_int_equal(vn_tcp_send(&f, VN_C2S, odd, sizeof odd), 0);
    assert_int_equal(vn_tcp_send(&f, VN_S2C, part, sizeof part), 0);
    assert_int_equal(vn_tcp_close(&f), 0);
}

/* What a report writer prints, as a string (free it). */
static char *report(void (*write)(FILE *, const char *, const struct cf_lint_result *),
                    const struct cf_lint_result *r)
{
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    assert_non_null(out);
    write(out, "skel.pcap", r);
    fclose(out);
    return text;
}

/* ------------------------------------------------------------ the tests */

static void lint_core_runs_the_skeleton(void **state)
{
    (void)state;
    struct frames fr = {.n = 0};
    conversation(&fr, 7999);
    struct cf_lint_result r;
    char err[256];
    assert_int_equal(cf_lint_frames(LINKTYPE_ETHERNET, fr.f, fr.n, NULL, &r, err, sizeof err), 0);
    assert_int_equal(cf_lint_counter(&r, "skel_connections"), 1);
    assert_int_equal(cf_lint_counter(&r, "skel_messages"), 3);
    assert_int_equal(r.errors, 0);
    assert_int_equal(r.notes, 2);
    assert_ptr_equal(r.issues[0].module, &cf_lint_skeleton);
    assert_int_equal(r.issues[0].dir, 0); /* the client sent the first bytes */
    assert_string_equal(r.issues[0].detail, "SKEL message of type 9");
    assert_int_equal(r.issues[1].dir, 1);
    assert_string_equal(r.issues[1].detail, "2 bytes of an unfinished SKEL message at the end of this direction");

    char *text = report(cf_lint_write_text, &r);
    assert_non_null(strstr(text, "skel.pcap: frame 7: conn 0: note: SKEL message of type 9\n"));
    assert_non_null(strstr(text, " frames, 1 SKEL connections, 3 messages: 0 errors, 0 warnings, 2 notes ("));
    free(text);
    char *json = report(cf_lint_write_json, &r);
    assert_non_null(strstr(json, "\"protocol\": \"SKEL\", \"connection\": 0, \"severity\": \"note\""));
    assert_non_null(strstr(json, "\"skel_connections\": 1, \"skel_messages\": 3, \"errors\": 0"));
    free(json);
    cf_lint_result_free(&r);
    frames_free(&fr);
}

/* --skel-port moves SKEL; a bad value is refused with the option's name. */
static void lint_options_are_the_modules(void **state)
{
    (void)state;
    struct cf_lint_options o;
    cf_lint_options_init(&o);
    bool takes_value = false;
    char why[200] = "";
    assert_int_equal(cf_lint_set_option(&o, "--skel-port", NULL, &takes_value, why, sizeof why), 1);
    assert_true(takes_value);
    assert_int_equal(cf_lint_set_option(&o, "--port", NULL, &takes_value, why, sizeof why), 0);
    assert_int_equal(cf_lint_set_option(&o, "--skel-port", "0", NULL, why, sizeof why), -1);
    assert_string_equal(why, "bad --skel-port '0' (1..65535)");
    assert_int_equal(cf_lint_set_option(&o, "--skel-port", "8000", NULL, why, sizeof why), 1);

    struct frames fr = {.n = 0};
    conversation(&fr, 7999);
    struct cf_lint_result r;
    char err[256];
    assert_int_equal(cf_lint_frames(LINKTYPE_ETHERNET, fr.f, fr.n, &o, &r, err, sizeof err), 0);
    assert_int_equal(cf_lint_counter(&r, "skel_connections"), 0); /* port 7999 is no longer SKEL's */
    assert_int_equal(r.count, 0);
    cf_lint_result_free(&r);
    frames_free(&fr);
}

/* lint --help and run --help show what the modules supply. */
static void help_comes_from_the_modules(void **state)
{
    (void)state;
    static const struct {
        const char *sub;
        const char *want[2];
    } help[] = {
        {"lint", {"vitcp-conform lint [--json] [--skel-port N]\n", "  SKEL: TCP port --skel-port (7999).\n"}},
        {"run", {"  skel (SKEL, the default)\n", "[--protocol NAME]"}},
    };
    for (size_t h = 0; h < sizeof help / sizeof *help; h++) {
        char *text = NULL;
        size_t len = 0;
        FILE *out = open_memstream(&text, &len);
        assert_non_null(out);
        char *argv[] = {(char *)"vitcp-conform", (char *)help[h].sub, (char *)"--help", NULL};
        assert_int_equal(cf_main(3, argv, out, stderr), 0);
        fclose(out);
        for (int w = 0; w < 2; w++)
            if (!strstr(text, help[h].want[w]))
                fail_msg("%s --help lacks '%s': %s", help[h].sub, help[h].want[w], text);
        free(text);
    }
}

struct got {
    unsigned n;
    int64_t type, payload, flags;
    char line[80];
};

static void sink(void *ctx, const struct cf_msg *m)
{
    struct got *g = ctx;
    const struct conform_protocol *p = &cf_proto_skeleton;
    g->n++;
    g->type = m->type;
    assert_true(p->field_value(m, (unsigned)cf_proto_field_by_name(p, "payload"), &g->payload));
    assert_true(p->field_value(m, (unsigned)cf_proto_field_by_name(p, "flags"), &g->flags));
    p->describe(m, g->line, sizeof g->line);
    struct cf_msg copy = *m;
    p->msg_free(&copy);
}

/* send Data payload=300 flags=7, through encode; the bytes fed back a byte
 * at a time make one message with those fields. */
static void conformance_module_encodes_and_decodes(void **state)
{
    (void)state;
    const struct conform_protocol *p = &cf_proto_skeleton;
    struct cf_step st;
    memset(&st, 0, sizeof st);
    st.kind = CF_STEP_SEND;
    st.type = (unsigned)cf_proto_type_by_name(p, "Data");
    int64_t vals[CF_MAX_FIELDS] = {0};
    int payload = cf_proto_field_by_name(p, "payload"), flags = cf_proto_field_by_name(p, "flags");
    assert_true(payload >= 0 && flags >= 0 && cf_proto_field_by_name(p, "nonsense") < 0);
    assert_false(p->field_settable((unsigned)cf_proto_field_by_name(p, "length")));
    /* type 0 has no name in the table: neither found nor named */
    assert_true(cf_proto_type_by_name(p, "?") < 0 && strcmp(cf_proto_type_name(p, 0), "?") == 0);
    st.set[payload] = st.set[flags] = true;
    vals[payload] = 300;
    vals[flags] = 7;
    struct cf_encoded enc;
    char why[100];
    void *session = p->session_new(NULL, NULL);
    assert_non_null(session);
    assert_int_equal(p->encode(session, &st, vals, &enc, why, sizeof why), 0);
    assert_int_equal(enc.len, 304);
    assert_int_equal(enc.payload_len, 300);
    struct got g = {0};
    struct cf_rx_verdict v = {.req = VW_REQ_NONE};
    for (size_t i = 0; i < enc.len; i++)
        p->session_feed(session, enc.bytes + i, 1, sink, &g, &v);
    p->session_finish(session, &v);
    assert_int_equal(g.n, 1);
    assert_int_equal(g.type, (int64_t)st.type);
    assert_int_equal(g.payload, 300);
    assert_int_equal(g.flags, 7);
    assert_string_equal(g.line, "Data flags=7 length=300");
    assert_int_equal(v.req, VW_REQ_NONE);
    free(enc.bytes);
    p->session_free(session);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(lint_core_runs_the_skeleton),
        cmocka_unit_test(lint_options_are_the_modules),
        cmocka_unit_test(help_comes_from_the_modules),
        cmocka_unit_test(conformance_module_encodes_and_decodes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
