/* Shared helpers of the robustness tests (see robust_common.h). */
#include "robust_common.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

uint64_t rb_seed(const char *test, uint64_t dflt)
{
    const char *e = getenv("VITCP_ROBUST_SEED");
    uint64_t s = dflt;
    if (e && *e)
        s = strtoull(e, NULL, 0);
    fprintf(stderr, "# %s: seed %llu (replay: VITCP_ROBUST_SEED=%llu)\n", test,
            (unsigned long long)s, (unsigned long long)s);
    return s;
}

void rb_fill(struct rb_rng *r, uint8_t *buf, size_t len)
{
    for (size_t i = 0; i < len; i += 8) {
        uint64_t v = rb_next(r);
        size_t n = len - i < 8 ? len - i : 8;
        memcpy(buf + i, &v, n);
    }
}

size_t rb_insert_junk(struct rb_rng *r, void *out, const void *in, size_t len, size_t max_junk)
{
    size_t at = (size_t)rb_below(r, len + 1), k = 1 + (size_t)rb_below(r, max_junk);
    uint8_t *o = out;
    const uint8_t *i = in;
    memcpy(o, i, at);
    rb_fill(r, o + at, k);
    memcpy(o + at + k, i + at, len - at);
    return len + k;
}

void rb_tmpdir(char *out, size_t cap, const char *tag)
{
    const char *t = getenv("TMPDIR");
    snprintf(out, cap, "%s/vitcp-robust-%s-XXXXXX", t && *t ? t : "/tmp", tag);
    if (mkdtemp(out) == NULL) {
        perror("mkdtemp");
        abort();
    }
}

void rb_rmdir(const char *dir)
{
    const char *keep = getenv("VITCP_ROBUST_KEEP");
    if (keep && *keep && strcmp(keep, "0") != 0) {
        fprintf(stderr, "# kept %s (VITCP_ROBUST_KEEP)\n", dir);
        return;
    }
    DIR *d = opendir(dir);
    if (d == NULL)
        return;
    struct dirent *e;
    char p[4096];
    while ((e = readdir(d)) != NULL) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        unlink(p);
    }
    closedir(d);
    rmdir(dir);
}

uint8_t *rb_read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return NULL;
    size_t cap = 4096, n = 0;
    uint8_t *b = malloc(cap);
    size_t got;
    while (b && (got = fread(b + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap) {
            uint8_t *nb = realloc(b, cap * 2);
            if (nb == NULL) {
                free(b);
                b = NULL;
                break;
            }
            b = nb;
            cap *= 2;
        }
    }
    fclose(f);
    *len = n;
    return b;
}

int rb_write_file(const char *path, const void *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    if (f == NULL)
        return -1;
    size_t w = len ? fwrite(data, 1, len, f) : 0;
    return fclose(f) == 0 && w == len ? 0 : -1;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

#define RB_KEEP (64u << 10)

struct capbuf {
    char *b;
    size_t n;
};

static void cap_read(int fd, struct capbuf *c, bool *open)
{
    char tmp[4096];
    ssize_t r = read(fd, tmp, sizeof tmp);
    if (r <= 0) {
        if (r == 0 || (errno != EINTR && errno != EAGAIN))
            *open = false;
        return;
    }
    size_t k = (size_t)r;
    if (c->n + k > RB_KEEP)
        k = RB_KEEP - c->n;
    memcpy(c->b + c->n, tmp, k);
    c->n += k;
    c->b[c->n] = '\0';
}

void rb_run(char *const argv[], double timeout_s, struct rb_run *res)
{
    rb_run_out(argv, timeout_s, NULL, res);
}

void rb_run_out(char *const argv[], double timeout_s, const char *stdout_path, struct rb_run *res)
{
    memset(res, 0, sizeof *res);
    res->status = -1;
    struct capbuf out = {calloc(1, RB_KEEP + 1), 0}, err = {calloc(1, RB_KEEP + 1), 0};
    res->out = out.b;
    res->err = err.b;
    int po[2], pe[2];
    if (pipe(po) || pipe(pe)) {
        perror("pipe");
        abort();
    }
    fflush(NULL);
    double t0 = now_s();
    pid_t pid = fork();
    if (pid == 0) {
        struct rlimit rl = {0, 0};
        setrlimit(RLIMIT_CORE, &rl);
        int devnull = open("/dev/null", O_RDONLY);
        dup2(devnull, 0);
        if (stdout_path) {
            int o = open(stdout_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
            dup2(o, 1);
            close(o);
        } else {
            dup2(po[1], 1);
        }
        dup2(pe[1], 2);
        close(po[0]), close(pe[0]), close(po[1]), close(pe[1]), close(devnull);
        setpgid(0, 0);
        execv(argv[0], argv);
        fprintf(stderr, "exec %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    close(po[1]);
    close(pe[1]);
    bool oo = true, eo = true, exited = false;
    int wst = 0;
    while (oo || eo || !exited) {
        double left = timeout_s - (now_s() - t0);
        if (left <= 0) {
            res->timed_out = true;
            kill(-pid, SIGKILL);
            kill(pid, SIGKILL);
            waitpid(pid, &wst, 0);
            exited = true;
            break;
        }
        if (!exited && waitpid(pid, &wst, WNOHANG) == pid)
            exited = true;
        struct pollfd pf[2] = {{oo ? po[0] : -1, POLLIN, 0}, {eo ? pe[0] : -1, POLLIN, 0}};
        if (!oo && !eo) {
            if (!exited)
                poll(NULL, 0, 5);
            continue;
        }
        int n = poll(pf, 2, 20);
        if (n > 0) {
            if (pf[0].revents)
                cap_read(po[0], &out, &oo);
            if (pf[1].revents)
                cap_read(pe[0], &err, &eo);
        }
    }
    close(po[0]);
    close(pe[0]);
    res->seconds = now_s() - t0;
    if (!res->timed_out) {
        if (WIFEXITED(wst))
            res->status = WEXITSTATUS(wst);
        else if (WIFSIGNALED(wst))
            res->signal = WTERMSIG(wst);
    }
}

void rb_run_free(struct rb_run *res)
{
    free(res->out);
    free(res->err);
    res->out = res->err = NULL;
}

bool rb_has_sanitizer_report(const char *text)
{
    static const char *const marks[] = {"AddressSanitizer", "LeakSanitizer",
                                        "UndefinedBehaviorSanitizer", "runtime error:",
                                        "Segmentation fault", "core dumped", "stack smashing"};
    for (size_t i = 0; i < sizeof marks / sizeof marks[0]; i++)
        if (text && strstr(text, marks[i]))
            return true;
    return false;
}

unsigned rb_count_lines(const char *text)
{
    unsigned n = 0;
    const char *p = text;
    while (p && *p) {
        const char *e = strchr(p, '\n');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (len > 0)
            n++;
        p = e ? e + 1 : p + len;
    }
    return n;
}

#ifdef __SANITIZE_ADDRESS__
size_t __sanitizer_get_current_allocated_bytes(void);
size_t rb_heap_bytes(void) { return __sanitizer_get_current_allocated_bytes(); }
#else
size_t rb_heap_bytes(void) { return mallinfo2().uordblks; }
#endif
