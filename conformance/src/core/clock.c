/* The engine's clock: deadlines and durations (CLOCK_MONOTONIC). */
#include "conform/core.h"

#include <time.h>

struct timespec cf_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t;
}

struct timespec cf_after_ms(unsigned ms)
{
    struct timespec t = cf_now();
    t.tv_sec += ms / 1000;
    t.tv_nsec += (long)(ms % 1000) * 1000000L;
    if (t.tv_nsec >= 1000000000L) {
        t.tv_sec++;
        t.tv_nsec -= 1000000000L;
    }
    return t;
}

int cf_ms_until(struct timespec t)
{
    struct timespec n = cf_now();
    long long ms = (long long)(t.tv_sec - n.tv_sec) * 1000 + (t.tv_nsec - n.tv_nsec) / 1000000;
    return ms < 0 ? 0 : ms > 600000 ? 600000 : (int)ms;
}

double cf_seconds_since(struct timespec t)
{
    struct timespec n = cf_now();
    return (double)(n.tv_sec - t.tv_sec) + (double)(n.tv_nsec - t.tv_nsec) / 1e9;
}
