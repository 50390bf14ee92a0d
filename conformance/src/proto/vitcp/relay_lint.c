/* The lint's judgement of a relay case's recording: the real TCP segments
 * of both sides, the target's judged as VI/TCP on its port (C30). */
#include "conform/proto/vitcp.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conform/lint.h"
#include "conform/relay.h"

#define LINKTYPE_RAW 101 /* bare IP packets, as the relay keeps them */

int cf_relay_lint(const struct cf_relay_packet *p, size_t count, uint16_t target_port,
                  struct cf_lint_result *res, char *why, size_t whylen)
{
    struct cf_lint_frame *frames = calloc(count ? count : 1, sizeof *frames);
    if (!frames) {
        memset(res, 0, sizeof *res);
        snprintf(why, whylen, "out of memory for the relay's recording");
        return -1;
    }
    for (size_t i = 0; i < count; i++)
        frames[i] = (struct cf_lint_frame){p[i].usec, p[i].data, p[i].len};
    struct cf_lint_options o;
    cf_lint_options_init(&o);
    char err[256], port[8];
    snprintf(port, sizeof port, "%u", (unsigned)target_port);
    cf_lint_set_option(&o, "--port", port, NULL, err, sizeof err); /* VI/TCP's lint port */
    int rc = cf_lint_frames(LINKTYPE_RAW, frames, count, &o, res, err, sizeof err);
    if (rc < 0)
        snprintf(why, whylen, "cannot lint the relay's recording: %s", err);
    free(frames);
    return rc;
}
