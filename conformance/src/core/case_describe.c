/* What a capture case compiles to, for `vitcp-conform show`: one describer
 * for every module with capture cases, named with the module's own type and
 * field names. */
#include "conform/case.h"
#include "conform/protocol.h"

#include <stdio.h>
#include <string.h>
#include "vitcp/catalog.h"

/* "$name" of the module's run-time variable var: the var-th word of its
 * var_names (protocol.h). */
static void put_var(FILE *out, const struct conform_protocol *pr, unsigned var)
{
    const char *w = pr->var_names ? pr->var_names : "";
    for (unsigned k = 1; k < var && *w; k++) {
        w += strcspn(w, " ");
        w += strspn(w, " ");
    }
    if (*w)
        fprintf(out, "%.*s", (int)strcspn(w, " "), w);
    else
        fprintf(out, "$%u", var);
}

void cf_case_describe(FILE *out, const struct cf_case *c, const char *(*send_note)(const struct cf_step *st))
{
    static const char *const kinds[] = {"connect", "send", "expect", "expect-close", "expect-open", "close",
                                        "wait", "accept", "check", "only-if", "expect-nothing"};
    const struct conform_protocol *pr = c->proto;
    fprintf(out, "case %s (%s, protocol %s, role %s): %u steps%s\n", c->id, c->file, pr->name,
            c->passive ? "passive" : "active", c->nsteps, c->expect_fail ? ", expected verdict fail" : "");
    if (c->relay) {
        fprintf(out, "  through the packet relay");
        for (unsigned i = 0; i < c->npacket; i++) {
            char text[64];
            cf_relay_action_text(&c->packet[i], text, sizeof text);
            fprintf(out, "%s%s", i ? ", " : ": ", text);
        }
        fputc('\n', out);
    }
    for (unsigned i = 0; i < c->nsteps; i++) {
        const struct cf_step *st = &c->steps[i];
        fprintf(out, "  %2u %-14s", i, st->kind < sizeof kinds / sizeof kinds[0] ? kinds[st->kind] : "?");
        if (st->kind == CF_STEP_SEND || st->kind == CF_STEP_EXPECT || st->kind == CF_STEP_CHECK ||
            st->kind == CF_STEP_ONLY_IF)
            fprintf(out, " %s", cf_proto_type_name(pr, st->type));
        if (st->kind == CF_STEP_SEND && st->cap_pdu)
            fprintf(out, " (recorded, frame %u, %zu bytes%s)", st->line, st->pdu_len, send_note ? send_note(st) : "");
        else if (st->cap_pdu)
            fprintf(out, " (as recorded in frame %u)", st->line);
        for (unsigned k = 0; k < st->nmatch; k++) {
            const struct cf_match *mt = &st->match[k];
            fprintf(out, " %s=", cf_proto_field_name(pr, mt->field));
            if (mt->var != CF_VAR_NONE)
                put_var(out, pr, mt->var);
            else
                fprintf(out, "%s%lld", mt->relative && mt->value >= 0 ? "+" : "", (long long)mt->value);
        }
        if (st->data_echo)
            fputs(" data=echo", out);
        if (st->data_capture)
            fputs(" data=recorded", out);
        if (st->na_if_closed)
            fputs(" if-open", out);
        if (st->wait_ms)
            fprintf(out, " %u ms", st->wait_ms);
        fprintf(out, " [%s]\n", vw_req_id(st->req));
    }
}
