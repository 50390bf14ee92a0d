/*
 * The listener when descriptors run out (EMFILE/ENFILE), as libvipl's
 * (vipl-ref/src/listen_guard.c, docs/robustness.md): accept() fails and the
 * connection stays queued, so the listener stays readable and a poll loop
 * would spin. Instead the queued connection is refused through a reserved
 * descriptor (close it, accept, close the new socket, reopen it), so the
 * client learns at once, and the listener rests LISTEN_GUARD_BACKOFF_MS.
 */
#ifndef IFT_PEER_LISTEN_GUARD_H
#define IFT_PEER_LISTEN_GUARD_H

#include <stdbool.h>

#define LISTEN_GUARD_BACKOFF_MS 50

struct listen_guard {
    int reserve_fd;
    double paused_until_ms;
    unsigned long refused;
};

void ift_guard_init(struct listen_guard *g);
void ift_guard_free(struct listen_guard *g);
/* accept() on lfd failed with EMFILE/ENFILE at now_ms: refuse one queued connection. */
void ift_guard_out_of_fds(struct listen_guard *g, int lfd, double now_ms);
bool ift_guard_paused(const struct listen_guard *g, double now_ms);

#endif
