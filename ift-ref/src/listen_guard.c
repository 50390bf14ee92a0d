/* ift-peer's listener when descriptors run out (listen_guard.h). */
#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>
#include "listen_guard.h"

void ift_guard_init(struct listen_guard *g)
{
    g->reserve_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    g->paused_until_ms = 0;
    g->refused = 0;
}

void ift_guard_free(struct listen_guard *g)
{
    if (g->reserve_fd >= 0)
        close(g->reserve_fd);
    g->reserve_fd = -1;
}

void ift_guard_out_of_fds(struct listen_guard *g, int lfd, double now_ms)
{
    g->paused_until_ms = now_ms + LISTEN_GUARD_BACKOFF_MS;
    if (g->reserve_fd < 0)
        return;
    close(g->reserve_fd);
    int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
    if (fd >= 0) {
        close(fd);
        g->refused++;
    }
    g->reserve_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
}

bool ift_guard_paused(const struct listen_guard *g, double now_ms) { return now_ms < g->paused_until_ms; }
