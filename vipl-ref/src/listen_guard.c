/*
 * The listener when descriptors run out (EMFILE/ENFILE). accept() fails and
 * the connection stays queued, so the listener stays readable: polled again
 * at once, the progress thread would spin at 100% of a core and every
 * client, real ones included, would wait for its timeout. Instead:
 *   1. shed the idle half-open connection that has waited longest for its
 *      ConnectRequest (a flood of idle connects is what fills the table,
 *      and a real client sends its request at once), which frees a
 *      descriptor for the next accept;
 *   2. with none to shed, refuse the queued connection through the
 *      reserved descriptor (close it, accept, close the new socket, reopen
 *      it), so the refused client learns at once instead of timing out;
 *   3. in both cases stop polling the listener for LISTEN_BACKOFF_MS.
 */
#include <errno.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "provider.h"

enum { LISTEN_BACKOFF_MS = 50 };

void listen_guard_init(struct vipl_nic *nic)
{
    nic->reserve_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    nic->listen_paused_until = 0;
}

void listen_guard_free(struct vipl_nic *nic)
{
    if (nic->reserve_fd >= 0)
        close(nic->reserve_fd);
    nic->reserve_fd = -1;
}

static struct vipl_conn *oldest_idle_half_open(struct vipl_nic *nic)
{
    struct vipl_conn *oldest = NULL;
    for (struct vipl_conn *c = nic->conns; c; c = c->next)
        if (c->state == IN_WAIT_REQ && !c->linger && (!oldest || c->deadline_ms < oldest->deadline_ms))
            oldest = c;
    return oldest;
}

void listen_guard_out_of_fds(struct vipl_nic *nic)
{
    nic->listen_paused_until = now_ms() + LISTEN_BACKOFF_MS;
    struct vipl_conn *idle = oldest_idle_half_open(nic);
    if (idle) {
        for (struct vipl_conn **pp = &nic->conns; *pp; pp = &(*pp)->next)
            if (*pp == idle) {
                *pp = idle->next;
                break;
            }
        conn_free(idle);
        nic->stats.ConnectionsShed++;
        nic->listen_paused_until = 0; /* a descriptor is free: accept at once */
        return;
    }
    if (nic->reserve_fd < 0)
        return;
    close(nic->reserve_fd);
    int fd = accept4(nic->listen_fd, NULL, NULL, SOCK_CLOEXEC);
    if (fd >= 0) {
        close(fd);
        nic->stats.ConnectionsRefusedNoFds++;
    }
    nic->reserve_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
}

bool listen_guard_paused(const struct vipl_nic *nic, int64_t now)
{
    return now < nic->listen_paused_until;
}
