/* What a capture case compiles to, for `vitcp-conform show`: one describer
 * for every module with capture cases, named with the module's own type and
 * field names. */
#include "conform/case.h"
#include "conform/protocol.h"

#include <stdio.h>
#include "vitcp/catalog.h"

void cf_case_describe(FILE *out, const struct cf_case *c, const char *(*send_note)(const struct cf_step *st))
{
    static const char *const kinds[] = {"connect", "send", "expect", "expect-close", "expect-open", "close",
                                        "wait", "accept", "check", "only-if", "expect-nothing"};
    const struct conform_protocol *pr = c->proto;
    fprintf(out, "case %s (%s, protocol %s, role %s): %u steps%s\n", c->id, c->file, pr->name,
            c->passive ? "passive" : "active", c->nsteps, c->expect_fail ? ", expected verdict fail" : "");
    for (unsigned i = 0; i < c->nsteps; i++) {
        const struct cf_step *st = &c->steps[i];
        fprintf(out, "  %2u %-14s", i, st->kind < sizeof kinds / sizeof kinds[0] ? kinds[st->kind] : "?");
        if (st->kind == CF_STEP_SEND || st->kind == CF_STEP_EXPECT || st->kind == CF_STEP_CHECK ||
            st->kind == CF_STEP_ONLY_IF)
            fprintf(out, " %s", pr->type_name(st->type));
        if (st->kind == CF_STEP_SEND && st->cap_pdu)
            fprintf(out, " (recorded, frame %u, %zu bytes%s)", st->line, st->pdu_len, send_note ? send_note(st) : "");
        else if (st->cap_pdu)
            fprintf(out, " (as recorded in frame %u)", st->line);
        for (unsigned k = 0; k < st->nmatch; k++)
            fprintf(out, " %s=%lld", pr->field_name(st->match[k].field), (long long)st->match[k].value);
        if (st->na_if_closed)
            fputs(" if-open", out);
        if (st->wait_ms)
            fprintf(out, " %u ms", st->wait_ms);
        fprintf(out, " [%s]\n", vw_req_id(st->req));
    }
}
