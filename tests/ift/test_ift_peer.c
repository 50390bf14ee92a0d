/*
 * ift-peer over loopback, driven by raw clients built on the wire library:
 *  - each role (ift-peer as B against a raw A, as A against a raw B) and
 *    flag set negotiates; Send echoes, RDMA Write placement and Read
 *    Responses are checked byte for byte;
 *  - every I8 reaction: the connection is closed with RST and nothing is
 *    placed (read back through a new connection);
 *  - every --fault makes the wire visibly wrong: the session is relayed or
 *    recorded, written as a pcap (netio) and linted with vitcp-conform, which
 *    must name the fault's requirement ID (reaction faults: the wrong
 *    reaction itself is checked); a clean session lints clean.
 * Child processes run under the same sanitizers; their stderr is checked.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>
#include "vitcp/ift_stream.h"
#include "vitcp/pcap_writer.h"
#include "vitcp/tcp_flow.h"

#define REGION_ADDR 0x10000000ull
#define SINK_STAG 7u
#define SINK_TO 0x5000ull

static const char *peer_path, *conform_path;
static char tmpdir[64];

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* ------------------------------------------------------------ processes */

struct proc {
    pid_t pid;
    int out;              /* its stdout */
    char *text;           /* everything it printed so far */
    size_t len, cap;
    char errpath[128];
    int status;
    bool exited;
};

static rlim_t child_nofile; /* RLIMIT_NOFILE of the next child, 0: inherited */

static void proc_start(struct proc *p, const char *const *args)
{
    static unsigned n;
    memset(p, 0, sizeof *p);
    snprintf(p->errpath, sizeof p->errpath, "%s/stderr.%u", tmpdir, n++);
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    const char *argv[64] = {peer_path};
    size_t k = 1;
    while (args[k - 1] && k < 63) {
        argv[k] = args[k - 1];
        k++;
    }
    argv[k] = NULL;
    p->pid = fork();
    assert_true(p->pid >= 0);
    if (p->pid == 0) {
        dup2(fds[1], 1);
        int e = open(p->errpath, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        dup2(e, 2);
        close(fds[0]);
        if (child_nofile) {
            struct rlimit rl = {child_nofile, child_nofile};
            setrlimit(RLIMIT_NOFILE, &rl);
        }
        execv(peer_path, (char *const *)argv);
        _exit(127);
    }
    close(fds[1]);
    p->out = fds[0];
    fcntl(p->out, F_SETFL, O_NONBLOCK);
}

/* Read what is there (waiting at most ms for something). */
static void proc_drain(struct proc *p, int ms)
{
    struct pollfd pf = {p->out, POLLIN, 0};
    if (p->out < 0 || poll(&pf, 1, ms) <= 0)
        return;
    for (;;) {
        if (p->cap - p->len < 4096) {
            p->cap = p->cap ? p->cap * 2 : 65536;
            p->text = realloc(p->text, p->cap);
            assert_non_null(p->text);
        }
        ssize_t r = read(p->out, p->text + p->len, p->cap - p->len - 1);
        if (r <= 0) {
            if (r == 0) {
                close(p->out);
                p->out = -1;
            }
            break;
        }
        p->len += (size_t)r;
        p->text[p->len] = '\0';
    }
}

/* The first whole line containing every needle (NULL-terminated list), copied to line. */
static bool find_line(const struct proc *p, const char *a, const char *b, char *line, size_t cap)
{
    const char *s = p->text;
    while (s && *s) {
        const char *e = strchr(s, '\n');
        if (!e)
            break;
        size_t n = (size_t)(e - s);
        char buf[1024];
        if (n >= sizeof buf)
            n = sizeof buf - 1;
        memcpy(buf, s, n);
        buf[n] = '\0';
        if (strstr(buf, a) && (!b || strstr(buf, b))) {
            if (line && cap) { /* cut to the caller's buffer (a copy, not a format: -O2's truncation check) */
                size_t m = n < cap - 1 ? n : cap - 1;
                memcpy(line, buf, m);
                line[m] = '\0';
            }
            return true;
        }
        s = e + 1;
    }
    return false;
}

static bool proc_wait_line(struct proc *p, const char *a, const char *b, char *line, size_t cap, int timeout_ms)
{
    double end = now_ms() + timeout_ms;
    for (;;) {
        if (p->text && find_line(p, a, b, line, cap))
            return true;
        if (now_ms() > end)
            return false;
        proc_drain(p, 50);
    }
}

static int count_lines(const char *text, const char *a, const char *b)
{
    int n = 0;
    for (const char *s = text; s && *s;) {
        const char *e = strchr(s, '\n');
        size_t len = e ? (size_t)(e - s) : strlen(s);
        char buf[1024];
        if (len >= sizeof buf)
            len = sizeof buf - 1;
        memcpy(buf, s, len);
        buf[len] = '\0';
        if (strstr(buf, a) && (!b || strstr(buf, b)))
            n++;
        s = e ? e + 1 : NULL;
    }
    return n;
}

static void check_stderr(const struct proc *p)
{
    FILE *f = fopen(p->errpath, "r");
    char buf[4096] = "";
    size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
    buf[n] = '\0';
    if (f)
        fclose(f);
    unlink(p->errpath);
    if (strstr(buf, "AddressSanitizer") || strstr(buf, "runtime error") || strstr(buf, "LeakSanitizer"))
        fail_msg("ift-peer stderr: %s", buf);
}

/* Wait for the process to exit (at most ms); its exit status, -1 on timeout. */
static int proc_wait_exit(struct proc *p, int ms)
{
    double end = now_ms() + ms;
    while (!p->exited) {
        int st;
        pid_t r = waitpid(p->pid, &st, WNOHANG);
        if (r == p->pid) {
            p->exited = true;
            p->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
            break;
        }
        if (now_ms() > end)
            return -1;
        proc_drain(p, 20);
    }
    while (p->out >= 0)
        proc_drain(p, 100);
    return p->status;
}

/* SIGTERM a target, which must exit 0 with clean stderr. */
static void proc_stop(struct proc *p)
{
    if (!p->exited)
        kill(p->pid, SIGTERM);
    int rc = proc_wait_exit(p, 10000);
    check_stderr(p);
    assert_int_equal(rc, 0);
}

static void proc_free(struct proc *p)
{
    free(p->text);
    if (p->out >= 0)
        close(p->out);
    p->text = NULL;
    p->out = -1;
}

struct target {
    struct proc p;
    int port;
};

/* ift-peer --listen 0 with extra arguments (NULL-terminated). */
static void target_start(struct target *t, ...)
{
    const char *args[48] = {"--listen", "0", "--bind", "127.0.0.1", "--idle", "5000"};
    size_t n = 6;
    va_list ap;
    va_start(ap, t);
    for (const char *a; (a = va_arg(ap, const char *)) && n < 47;)
        args[n++] = a;
    va_end(ap);
    args[n] = NULL;
    proc_start(&t->p, args);
    char line[256];
    assert_true(proc_wait_line(&t->p, "event=listening port=", NULL, line, sizeof line, 10000));
    t->port = atoi(strstr(line, "port=") + 5);
    assert_true(t->port > 0);
    assert_true(find_line(&t->p, "event=region addr=0x", NULL, NULL, 0));
}

static void target_stop(struct target *t)
{
    proc_stop(&t->p);
    proc_free(&t->p);
}

/* ------------------------------------------------------------ recording and lint */

struct rec {
    struct chunk {
        int dir; /* 0: from A (the TCP client), 1: from B */
        uint8_t *data;
        size_t len;
    } *ch;
    size_t n, cap;
};

static void rec_add(struct rec *r, int dir, const uint8_t *d, size_t len)
{
    if (!r || !len)
        return;
    if (r->n == r->cap) {
        r->cap = r->cap ? r->cap * 2 : 64;
        r->ch = realloc(r->ch, r->cap * sizeof *r->ch);
        assert_non_null(r->ch);
    }
    r->ch[r->n].dir = dir;
    r->ch[r->n].data = malloc(len);
    assert_non_null(r->ch[r->n].data);
    memcpy(r->ch[r->n].data, d, len);
    r->ch[r->n++].len = len;
}

static void rec_free(struct rec *r)
{
    for (size_t i = 0; i < r->n; i++)
        free(r->ch[i].data);
    free(r->ch);
    memset(r, 0, sizeof *r);
}

/* The recorded session as a pcap (TCP port 5996), linted: vitcp-conform's
 * output (malloc'd). */
static char *rec_lint(const struct rec *r)
{
    static unsigned n;
    char path[160], err[256];
    snprintf(path, sizeof path, "%s/session%u.pcap", tmpdir, n++);
    struct vn_pcap_writer *w = vn_pcap_open(path, err, sizeof err);
    assert_non_null(w);
    struct vn_tcp_flow f;
    assert_int_equal(vn_tcp_flow_init(&f, vn_pcap_sink(w), "10.0.0.1", 40000, "10.0.0.2", VW_IFT_DEFAULT_PORT), 0);
    assert_int_equal(vn_tcp_handshake(&f), 0);
    for (size_t i = 0; i < r->n; i++)
        assert_int_equal(vn_tcp_send(&f, r->ch[i].dir ? VN_S2C : VN_C2S, r->ch[i].data, r->ch[i].len), 0);
    assert_int_equal(vn_tcp_close(&f), 0);
    assert_int_equal(vn_pcap_close(w), 0);
    char cmd[512];
    snprintf(cmd, sizeof cmd, "'%s' lint '%s' 2>&1", conform_path, path);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    size_t cap = 65536, len = 0;
    char *out = malloc(cap);
    assert_non_null(out);
    size_t got;
    while ((got = fread(out + len, 1, cap - len - 1, p)) > 0) {
        len += got;
        if (cap - len < 1024) {
            cap *= 2;
            out = realloc(out, cap);
            assert_non_null(out);
        }
    }
    out[len] = '\0';
    pclose(p);
    unlink(path);
    assert_non_null(strstr(out, "1 IFT connections"));
    return out;
}

/* The lint summary's counts. */
static void lint_counts(const char *out, unsigned *errors, unsigned *warnings)
{
    const char *s = strstr(out, " errors, ");
    assert_non_null(s);
    while (s > out && s[-1] != ' ')
        s--;
    assert_int_equal(sscanf(s, "%u errors, %u warnings", errors, warnings), 2);
}

/* ------------------------------------------------------------ raw endpoint */

struct rx_frame {
    struct vw_ddp_hdr h;
    uint8_t *payload;
    size_t len;
};

struct raw {
    int fd;
    bool is_a;
    struct rec *rec;
    uint16_t vtag;
    uint32_t flags;
    struct vw_ift_framer rx;
    bool got_ind;
    struct vw_ift_ind peer;
    uint8_t peer_ind_raw[VW_IFT_IND_LEN];
    struct rx_frame fr[256];
    size_t nfr;
    bool bad_frame;   /* a frame from the peer failed a check */
    bool closed, reset;
    uint32_t msn[3];
};

static void raw_pdu(void *ctx, const uint8_t *raw, size_t len, uint64_t off, const struct vw_ift_pdu *pdu,
                    enum vw_req err, const struct vw_findings *fs)
{
    (void)off;
    (void)fs;
    struct raw *r = ctx;
    if (pdu->is_indication) {
        r->got_ind = err == VW_REQ_NONE;
        r->peer = pdu->ind;
        r->peer.reserved = NULL;
        memcpy(r->peer_ind_raw, raw, len < VW_IFT_IND_LEN ? len : VW_IFT_IND_LEN);
        return;
    }
    if (err != VW_REQ_NONE || vw_ift_frame_fatal(&pdu->frame, &r->rx.mode) != VW_REQ_NONE || !pdu->frame.ddp_decoded) {
        r->bad_frame = true;
        return;
    }
    assert_true(r->nfr < 256);
    struct rx_frame *f = &r->fr[r->nfr++];
    f->h = pdu->frame.ddp_hdr;
    f->len = pdu->frame.payload_size;
    f->payload = malloc(f->len ? f->len : 1);
    assert_non_null(f->payload);
    memcpy(f->payload, pdu->frame.payload, f->len);
}

static void raw_init(struct raw *r, int fd, bool is_a, struct rec *rec, uint16_t vtag, uint32_t flags)
{
    memset(r, 0, sizeof *r);
    r->fd = fd;
    r->is_a = is_a;
    r->rec = rec;
    r->vtag = vtag;
    r->flags = flags;
    r->msn[0] = r->msn[1] = r->msn[2] = 1;
    vw_ift_framer_init(&r->rx, true);
    vw_ift_framer_set_vtag(&r->rx, vtag);
}

static void raw_free(struct raw *r)
{
    for (size_t i = 0; i < r->nfr; i++)
        free(r->fr[i].payload);
    r->nfr = 0;
    vw_ift_framer_free(&r->rx);
    if (r->fd >= 0)
        close(r->fd);
    r->fd = -1;
}

static int connect_port(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_true(fd >= 0);
    assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof a), 0);
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return fd;
}

static void raw_send(struct raw *r, const uint8_t *d, size_t len)
{
    rec_add(r->rec, r->is_a ? 0 : 1, d, len);
    size_t off = 0;
    while (off < len) {
        ssize_t w = send(r->fd, d + off, len - off, MSG_NOSIGNAL);
        if (w <= 0)
            return; /* the peer may have reset: the caller checks what came back */
        off += (size_t)w;
    }
}

/* Read until cond (frames/indication count) or close, at most ms. */
static void raw_pump(struct raw *r, int ms, bool (*done)(const struct raw *, size_t), size_t arg)
{
    double end = now_ms() + ms;
    uint8_t buf[65536];
    while (!r->closed && !(done && done(r, arg)) && now_ms() < end) {
        struct pollfd pf = {r->fd, POLLIN, 0};
        if (poll(&pf, 1, 50) <= 0)
            continue;
        ssize_t n = recv(r->fd, buf, sizeof buf, 0);
        if (n > 0) {
            rec_add(r->rec, r->is_a ? 1 : 0, buf, (size_t)n);
            vw_ift_framer_feed(&r->rx, buf, (size_t)n, raw_pdu, r);
        } else {
            r->closed = true;
            r->reset = n < 0 && errno == ECONNRESET;
        }
    }
}

static bool have_ind(const struct raw *r, size_t arg) { (void)arg; return r->got_ind; }
static bool have_frames(const struct raw *r, size_t arg) { return r->nfr >= arg; }

static size_t make_ind(uint8_t *b, unsigned phase, uint16_t vtag, uint32_t flags)
{
    struct vw_ift_ind_enc e;
    vw_ift_ind_enc_init(&e, phase, vtag, false, false);
    e.flags = flags | (phase ? VW_IFT_FLAG_PH : 0u);
    return vw_ift_ind_encode(&e, b, VW_IFT_IND_LEN);
}

/* One DDP segment from this raw end, good CRCs and the peer's VTag. */
static void raw_segment(struct raw *r, const struct vw_ddp_hdr *h, const uint8_t *payload, size_t len)
{
    uint8_t fr[VW_IFT_FRAME_MAX];
    size_t n = vw_ift_frame_build(h, payload, len, r->peer.vtag, r->flags & VW_IFT_FLAG_HC,
                                  r->flags & VW_IFT_FLAG_PC, fr, sizeof fr);
    assert_true(n > 0);
    raw_send(r, fr, n);
}

static void raw_send_msg(struct raw *r, uint8_t byte1, const uint8_t *d, size_t len)
{
    struct vw_ddp_hdr h = {.tagged = false, .last = true, .dv = 1, .rdmap_rv = (uint8_t)(byte1 >> 6),
                           .rdmap_opcode = byte1 & 0x0Fu, .qn = 0, .msn = r->msn[0]++, .mo = 0};
    raw_segment(r, &h, d, len);
}

static void raw_write(struct raw *r, uint64_t to, const uint8_t *d, size_t len)
{
    struct vw_ddp_hdr h = {.tagged = true, .last = true, .dv = 1, .rdmap_rv = 1, .rdmap_opcode = VW_RDMAP_WRITE,
                           .stag = 1, .to = to};
    raw_segment(r, &h, d, len);
}

static void raw_read_req(struct raw *r, uint64_t src_to, uint32_t len)
{
    struct vw_rdmap_read_req rq = {SINK_STAG, SINK_TO, len, 1, src_to};
    uint8_t b[VW_RDMAP_READ_REQ_HDR_LEN];
    vw_rdmap_read_req_encode(&rq, b, sizeof b);
    struct vw_ddp_hdr h = {.tagged = false, .last = true, .dv = 1, .rdmap_rv = 1,
                           .rdmap_opcode = VW_RDMAP_READ_REQUEST, .qn = 1, .msn = r->msn[1]++, .mo = 0};
    raw_segment(r, &h, b, sizeof b);
}

/* Role A against a target: phase 0 out, phase 1 in. */
static bool raw_negotiate(struct raw *r, int port, struct rec *rec, uint32_t flags)
{
    raw_init(r, connect_port(port), true, rec, (uint16_t)(0x1000u + (unsigned)rand() % 0xE000u), flags);
    uint8_t ind[VW_IFT_IND_LEN];
    make_ind(ind, 0, r->vtag, flags);
    raw_send(r, ind, sizeof ind);
    raw_pump(r, 5000, have_ind, 0);
    return r->got_ind;
}

/* The payload bytes of the frames from index `from` on, concatenated. */
static size_t gather(const struct raw *r, size_t from, size_t to, uint8_t *out, size_t cap)
{
    size_t n = 0;
    for (size_t i = from; i < to && i < r->nfr; i++) {
        assert_true(n + r->fr[i].len <= cap);
        memcpy(out + n, r->fr[i].payload, r->fr[i].len);
        n += r->fr[i].len;
    }
    return n;
}

static void fill(uint8_t *b, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++)
        b[i] = (uint8_t)(seed * 37u + i * 11u + (i >> 7) + 1u);
}

/* Read back len bytes of the target's region at to through a new connection. */
static void read_back(int port, uint64_t to, uint8_t *out, uint32_t len)
{
    struct raw r;
    assert_true(raw_negotiate(&r, port, NULL, VW_IFT_FLAG_R | VW_IFT_FLAG_HC | VW_IFT_FLAG_PC));
    raw_read_req(&r, to, len);
    size_t frames = (len + 1023u) / 1024u;
    raw_pump(&r, 5000, have_frames, frames ? frames : 1);
    assert_int_equal(gather(&r, 0, r.nfr, out, len), len);
    assert_int_equal(r.fr[r.nfr - 1].h.rdmap_opcode, VW_RDMAP_READ_RESPONSE);
    raw_free(&r);
}

/* ------------------------------------------------------------ relay */

static int listen_any(int *port)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in a = {.sin_family = AF_INET};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t l = sizeof a;
    assert_true(fd >= 0);
    assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
    assert_int_equal(listen(fd, 4), 0);
    assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &l), 0);
    *port = ntohs(a.sin_port);
    return fd;
}

static int accept_within(int lfd, int ms)
{
    struct pollfd pf = {lfd, POLLIN, 0};
    if (poll(&pf, 1, ms) <= 0)
        return -1;
    return accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
}

/* ift-peer --connect (args: NULL-terminated) through a recording relay to
 * the target; returns the client's exit status, its output in *client. */
static int relay_session(int target_port, struct rec *rec, struct proc *client, const char *const *extra)
{
    int rport;
    int lfd = listen_any(&rport);
    char hp[64];
    snprintf(hp, sizeof hp, "127.0.0.1:%d", rport);
    const char *args[48] = {"--connect", hp, "--timeout", "2000"};
    size_t n = 4;
    for (size_t i = 0; extra[i] && n < 47; i++)
        args[n++] = extra[i];
    args[n] = NULL;
    proc_start(client, args);
    int a = accept_within(lfd, 10000);
    close(lfd);
    assert_true(a >= 0);
    int b = connect_port(target_port);
    int fds[2] = {a, b};
    bool open_[2] = {true, true};
    double end = now_ms() + 15000;
    uint8_t buf[65536];
    while ((open_[0] || open_[1]) && now_ms() < end) {
        struct pollfd pf[2] = {{open_[0] ? a : -1, POLLIN, 0}, {open_[1] ? b : -1, POLLIN, 0}};
        if (poll(pf, 2, 50) <= 0)
            continue;
        for (int d = 0; d < 2; d++) {
            if (!(pf[d].revents & (POLLIN | POLLHUP | POLLERR)))
                continue;
            ssize_t r = recv(fds[d], buf, sizeof buf, 0);
            if (r > 0) {
                rec_add(rec, d, buf, (size_t)r);
                ssize_t off = 0;
                while (off < r) {
                    ssize_t w = send(fds[1 - d], buf + off, (size_t)(r - off), MSG_NOSIGNAL);
                    if (w <= 0)
                        break;
                    off += w;
                }
            } else if (r == 0) {
                shutdown(fds[1 - d], SHUT_WR);
                open_[d] = false;
            } else { /* a reset: pass it on */
                struct linger lg = {1, 0};
                setsockopt(fds[1 - d], SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
                open_[0] = open_[1] = false;
            }
        }
    }
    close(a);
    close(b);
    int rc = proc_wait_exit(client, 15000);
    check_stderr(client);
    return rc;
}

/* ------------------------------------------------------------ tests */

static const struct {
    const char *target, *client; /* ift-peer --flags; the raw client's flags */
    uint32_t target_bits, client_bits;
} flag_sets[] = {
    {"R,HC,PC", NULL, VW_IFT_FLAG_R | VW_IFT_FLAG_HC | VW_IFT_FLAG_PC, VW_IFT_FLAG_R},
    {"R", NULL, VW_IFT_FLAG_R, VW_IFT_FLAG_R | VW_IFT_FLAG_HC | VW_IFT_FLAG_PC},
    {"R,HC", NULL, VW_IFT_FLAG_R | VW_IFT_FLAG_HC, VW_IFT_FLAG_R | VW_IFT_FLAG_PC},
    {"R,PC", NULL, VW_IFT_FLAG_R | VW_IFT_FLAG_PC, VW_IFT_FLAG_R | VW_IFT_FLAG_HC},
    {"R,HC,PC,IH,IP,SP", NULL, VW_IFT_FLAG_R | VW_IFT_FLAG_HC | VW_IFT_FLAG_PC | VW_IFT_FLAG_IH | VW_IFT_FLAG_IP | VW_IFT_FLAG_SP,
     VW_IFT_FLAG_R | VW_IFT_FLAG_HC | VW_IFT_FLAG_PC | VW_IFT_FLAG_SP},
    {"R,SM,RM", NULL, VW_IFT_FLAG_R | VW_IFT_FLAG_SM | VW_IFT_FLAG_RM, VW_IFT_FLAG_R | VW_IFT_FLAG_RM},
    {"HC,PC", NULL, VW_IFT_FLAG_HC | VW_IFT_FLAG_PC, VW_IFT_FLAG_PC},
    {"none", NULL, 0, 0},
};

/* ift-peer as B, a raw A: every flag set negotiates; a Send comes back, an
 * RDMA Write lands where a Read Request finds it (RDMA mode), the session
 * lints clean; VTags differ between connections (random, 4.2). */
static void test_role_b_each_flag_set(void **state)
{
    (void)state;
    uint16_t vtags[sizeof flag_sets / sizeof flag_sets[0]];
    for (size_t s = 0; s < sizeof flag_sets / sizeof flag_sets[0]; s++) {
        struct target t;
        target_start(&t, "--flags", flag_sets[s].target, "--frag", "100", NULL);
        struct rec rec = {0};
        struct raw r;
        uint32_t cf = flag_sets[s].client_bits;
        assert_true(raw_negotiate(&r, t.port, &rec, cf));
        assert_int_equal(vw_ift_ind_phase(&r.peer), 1);
        assert_true(r.peer.crc_ok);
        assert_int_equal(r.peer.flags, flag_sets[s].target_bits | VW_IFT_FLAG_PH);
        assert_int_equal(r.peer.version, 1);
        assert_int_equal(r.peer.bc_version, 1);
        vtags[s] = r.peer.vtag;
        /* the target's frames carry its own HC/PC and our VTag: the framer checks them */
        assert_int_equal(r.rx.mode.hc, !!(flag_sets[s].target_bits & VW_IFT_FLAG_HC));
        bool rdma = flag_sets[s].target_bits & VW_IFT_FLAG_R;
        uint8_t msg[250], wr[300], got[4096];
        fill(msg, sizeof msg, (unsigned)s);
        fill(wr, sizeof wr, (unsigned)s + 100);
        raw_send_msg(&r, rdma ? VW_RDMAP_VERSION << 6 | VW_RDMAP_SEND : 0x43, msg, sizeof msg);
        raw_pump(&r, 5000, have_frames, 3); /* 250 bytes in segments of 100 */
        assert_false(r.bad_frame);
        assert_int_equal(gather(&r, 0, 3, got, sizeof got), sizeof msg);
        assert_memory_equal(got, msg, sizeof msg);
        assert_false(r.fr[0].h.tagged);
        assert_int_equal(r.fr[0].h.qn, 0);
        assert_int_equal(r.fr[0].h.msn, 1);
        assert_int_equal(r.fr[1].h.mo, 100);
        assert_true(r.fr[2].h.last);
        if (!rdma)
            assert_int_equal(r.fr[0].payload ? r.fr[0].h.rdmap_opcode : 0, 0x43 & 0x0F); /* the ULP's byte echoed */
        raw_write(&r, REGION_ADDR + 0x40, wr, sizeof wr);
        char line[256];
        assert_true(proc_wait_line(&t.p, "event=write conn=1 stag=0x1 to=0x10000040 len=300", NULL, line, sizeof line, 5000));
        if (rdma) {
            raw_read_req(&r, REGION_ADDR + 0x40, sizeof wr);
            raw_pump(&r, 5000, have_frames, 6);
            assert_false(r.bad_frame);
            assert_int_equal(gather(&r, 3, 6, got, sizeof got), sizeof wr);
            assert_memory_equal(got, wr, sizeof wr);
            assert_true(r.fr[3].h.tagged);
            assert_int_equal(r.fr[3].h.rdmap_opcode, VW_RDMAP_READ_RESPONSE);
            assert_int_equal(r.fr[3].h.stag, SINK_STAG);
            assert_int_equal(r.fr[3].h.to, SINK_TO);
            assert_int_equal(r.fr[5].h.to, SINK_TO + 200);
            assert_true(r.fr[5].h.last);
        }
        shutdown(r.fd, SHUT_WR);
        raw_pump(&r, 5000, NULL, 0);
        assert_true(r.closed);
        assert_false(r.reset); /* a clean end: FIN */
        assert_true(proc_wait_line(&t.p, "event=closed conn=1 reason=eof how=fin", NULL, NULL, 0, 5000));
        char *lint = rec_lint(&rec);
        unsigned errors, warnings;
        lint_counts(lint, &errors, &warnings);
        if (errors || warnings)
            fail_msg("flags %s: lint not clean:\n%s", flag_sets[s].target, lint);
        free(lint);
        raw_free(&r);
        rec_free(&rec);
        target_stop(&t);
    }
    bool all_same = true;
    for (size_t s = 1; s < sizeof vtags / sizeof vtags[0]; s++)
        all_same &= vtags[s] == vtags[0];
    assert_false(all_same);
}

/* ift-peer as A (--connect), a raw B: phase 0 carries the flags asked for,
 * frames come only after phase 1, Sends are checked against our echo. */
static void test_role_a_each_flag_set(void **state)
{
    (void)state;
    static const struct {
        const char *flags;
        uint32_t bits, b_bits;
    } sets[] = {
        {"R,HC,PC", VW_IFT_FLAG_R | VW_IFT_FLAG_HC | VW_IFT_FLAG_PC, VW_IFT_FLAG_R},
        {"R", VW_IFT_FLAG_R, VW_IFT_FLAG_R | VW_IFT_FLAG_HC | VW_IFT_FLAG_PC},
        {"R,IH,IP,SP,RM", VW_IFT_FLAG_R | VW_IFT_FLAG_IH | VW_IFT_FLAG_IP | VW_IFT_FLAG_SP | VW_IFT_FLAG_RM,
         VW_IFT_FLAG_R | VW_IFT_FLAG_PC},
    };
    for (size_t s = 0; s < sizeof sets / sizeof sets[0]; s++) {
        int port;
        int lfd = listen_any(&port);
        char hp[64];
        snprintf(hp, sizeof hp, "127.0.0.1:%d", port);
        struct proc c;
        const char *args[] = {"--connect", hp, "--flags", sets[s].flags, "--vtag", "4660", "--send", "150",
                              "--send", "0", "--frag", "64", NULL};
        proc_start(&c, args);
        int fd = accept_within(lfd, 10000);
        close(lfd);
        assert_true(fd >= 0);
        struct rec rec = {0};
        struct raw r;
        raw_init(&r, fd, false, &rec, 0xB0B0, sets[s].b_bits);
        raw_pump(&r, 5000, have_ind, 0);
        assert_true(r.got_ind);
        assert_int_equal(vw_ift_ind_phase(&r.peer), 0);
        assert_int_equal(r.peer.flags, sets[s].bits);
        assert_int_equal(r.peer.vtag, 4660);
        assert_true(r.peer.crc_ok);
        /* nothing but the indication before our phase 1 (I7) */
        raw_pump(&r, 300, have_frames, 1);
        assert_int_equal(r.nfr, 0);
        uint8_t ind[VW_IFT_IND_LEN];
        make_ind(ind, 1, r.vtag, sets[s].b_bits);
        raw_send(&r, ind, sizeof ind);
        raw_pump(&r, 5000, have_frames, 4); /* 150 = 64 + 64 + 22, then the empty Send */
        assert_false(r.bad_frame);
        assert_int_equal(r.nfr, 4);
        uint8_t got[256];
        assert_int_equal(gather(&r, 0, 3, got, sizeof got), 150);
        assert_int_equal(r.fr[3].len, 0);
        assert_int_equal(r.fr[3].h.msn, 2);
        /* echo both Sends back as one frame each */
        raw_send_msg(&r, VW_RDMAP_VERSION << 6 | VW_RDMAP_SEND, got, 150);
        raw_send_msg(&r, VW_RDMAP_VERSION << 6 | VW_RDMAP_SEND, got, 0);
        raw_pump(&r, 5000, NULL, 0); /* the client closes once both came back */
        assert_true(r.closed);
        shutdown(r.fd, SHUT_WR);
        assert_int_equal(proc_wait_exit(&c, 10000), 0);
        check_stderr(&c);
        assert_true(find_line(&c, "event=done conn=0 sends=2 ", "ok=1", NULL, 0));
        char *lint = rec_lint(&rec);
        unsigned errors, warnings;
        lint_counts(lint, &errors, &warnings);
        if (errors || warnings)
            fail_msg("A with %s: lint not clean:\n%s", sets[s].flags, lint);
        free(lint);
        raw_free(&r);
        rec_free(&rec);
        proc_free(&c);
    }
}

/* I8 on the indication: each provocation is reported with its rule and
 * closed with RST; nothing comes back but, for an R disagreement, phase 1. */
static void test_reactions_to_indications(void **state)
{
    (void)state;
    struct target t;
    target_start(&t, NULL);
    static const struct {
        const char *rule;
        uint32_t magic;
        uint16_t version, bc;
        unsigned phase;
        uint32_t flags;
        bool bad_crc, answered;
    } cases[] = {
        {"IFT-4.1-MAGIC", VW_IFT_MAGIC ^ 1u, 1, 1, 0, VW_IFT_FLAG_R, false, false},
        {"IFT-4.2-VERSION", VW_IFT_MAGIC, 0, 1, 0, VW_IFT_FLAG_R, false, false},
        {"IFT-4.2-BC-VERSION-REJECT", VW_IFT_MAGIC, 2, 2, 0, VW_IFT_FLAG_R, false, false},
        {"IFT-4.2-BC-VERSION-SET", VW_IFT_MAGIC, 1, 0, 0, VW_IFT_FLAG_R, false, false},
        {"IFT-4.2-IND-CRC", VW_IFT_MAGIC, 1, 1, 0, VW_IFT_FLAG_R, true, false},
        {"IFT-4.2-PHASE", VW_IFT_MAGIC, 1, 1, 1, VW_IFT_FLAG_R, false, false},
        {"IFT-4.2-R-AGREE", VW_IFT_MAGIC, 1, 1, 0, VW_IFT_FLAG_HC, false, true},
    };
    unsigned conn = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct raw r;
        raw_init(&r, connect_port(t.port), true, NULL, 0x4242, cases[i].flags);
        conn++;
        struct vw_ift_ind_enc e;
        vw_ift_ind_enc_init(&e, cases[i].phase, r.vtag, false, false);
        e.magic = cases[i].magic;
        e.version = cases[i].version;
        e.bc_version = cases[i].bc;
        e.flags = cases[i].flags | (cases[i].phase ? VW_IFT_FLAG_PH : 0u);
        e.crc = cases[i].bad_crc ? VW_IFT_CRC_BAD : VW_IFT_CRC_GOOD;
        uint8_t ind[VW_IFT_IND_LEN];
        vw_ift_ind_encode(&e, ind, sizeof ind);
        raw_send(&r, ind, sizeof ind);
        raw_pump(&r, 5000, NULL, 0);
        assert_true(r.closed);
        if (!r.reset)
            fail_msg("%s: closed without RST", cases[i].rule);
        assert_int_equal(r.got_ind, cases[i].answered);
        if (cases[i].answered)
            assert_int_equal(vw_ift_ind_phase(&r.peer), 1);
        char a[64], b[64];
        snprintf(a, sizeof a, "event=error conn=%u ", conn);
        snprintf(b, sizeof b, "rule=%s ", cases[i].rule);
        if (!proc_wait_line(&t.p, a, b, NULL, 0, 5000))
            fail_msg("no '%s%s' in:\n%s", a, b, t.p.text);
        snprintf(a, sizeof a, "event=closed conn=%u reason=error how=rst", conn);
        assert_true(proc_wait_line(&t.p, a, NULL, NULL, 0, 5000));
        raw_free(&r);
    }
    /* accepted: a newer Version with BC Version 1, reserved bits (ignored) */
    for (int k = 0; k < 2; k++) {
        struct raw r;
        raw_init(&r, connect_port(t.port), true, NULL, 0x4343, VW_IFT_FLAG_R);
        conn++;
        struct vw_ift_ind_enc e;
        uint8_t reserved[VW_IFT_IND_RESERVED_LEN] = {[3] = 0x77};
        vw_ift_ind_enc_init(&e, 0, r.vtag, false, false);
        if (k == 0)
            e.version = 2;
        else {
            e.flags |= 0x10u;
            e.reserved = reserved;
        }
        uint8_t ind[VW_IFT_IND_LEN];
        vw_ift_ind_encode(&e, ind, sizeof ind);
        raw_send(&r, ind, sizeof ind);
        raw_pump(&r, 5000, have_ind, 0);
        assert_true(r.got_ind);
        uint8_t m[10] = "accepted!";
        raw_send_msg(&r, VW_RDMAP_VERSION << 6 | VW_RDMAP_SEND, m, sizeof m);
        raw_pump(&r, 5000, have_frames, 1);
        assert_int_equal(r.nfr, 1);
        assert_memory_equal(r.fr[0].payload, m, sizeof m);
        if (k == 1) {
            char a[64];
            snprintf(a, sizeof a, "event=finding conn=%u rule=IFT-4.2-RESERVED-ZERO", conn);
            assert_true(proc_wait_line(&t.p, a, NULL, NULL, 0, 5000));
        }
        raw_free(&r);
    }
    target_stop(&t);

    /* unacceptable CRC choices (--require): aborted with RST, no answer */
    static const struct {
        const char *require;
        uint32_t flags;
        const char *rule;
    } policy[] = {
        {"hc", VW_IFT_FLAG_R | VW_IFT_FLAG_PC, "IFT-4.2-HC-ACCEPTABLE"},
        {"pc", VW_IFT_FLAG_R | VW_IFT_FLAG_HC, "IFT-4.2-PC-ACCEPTABLE"},
        {"no-hc", VW_IFT_FLAG_R | VW_IFT_FLAG_HC, "IFT-4.2-HC-ACCEPTABLE"},
        {"no-pc", VW_IFT_FLAG_R | VW_IFT_FLAG_PC, "IFT-4.2-PC-ACCEPTABLE"},
        {"checked-hc", VW_IFT_FLAG_R | VW_IFT_FLAG_IH, "IFT-4.2-IH-ACCEPTABLE"},
        {"checked-pc", VW_IFT_FLAG_R | VW_IFT_FLAG_IP, "IFT-4.2-IP-ACCEPTABLE"},
    };
    for (size_t i = 0; i < sizeof policy / sizeof policy[0]; i++) {
        target_start(&t, "--require", policy[i].require, NULL);
        struct raw r;
        bool answered = raw_negotiate(&r, t.port, NULL, policy[i].flags);
        raw_pump(&r, 5000, NULL, 0);
        assert_false(answered);
        assert_true(r.closed && r.reset);
        if (!proc_wait_line(&t.p, "event=error conn=1 ", policy[i].rule, NULL, 0, 5000))
            fail_msg("--require %s: no %s in:\n%s", policy[i].require, policy[i].rule, t.p.text);
        raw_free(&r);
        /* and an offer it accepts is answered */
        uint32_t ok_flags = VW_IFT_FLAG_R | ((policy[i].flags & (VW_IFT_FLAG_HC | VW_IFT_FLAG_PC)) ^
                                             (VW_IFT_FLAG_HC | VW_IFT_FLAG_PC));
        if (strncmp(policy[i].require, "checked", 7) == 0)
            ok_flags = VW_IFT_FLAG_R;
        assert_true(raw_negotiate(&r, t.port, NULL, ok_flags));
        raw_free(&r);
        target_stop(&t);
    }
}

/* I8 on frames: a wrong VTag, a bad CRC, sizes that do not fit: reported,
 * closed with RST, and no byte placed (read back through a new connection). */
static void test_reactions_to_frames(void **state)
{
    (void)state;
    struct target t;
    target_start(&t, NULL);
    enum { WRONG_VTAG, BAD_HDR_CRC, BAD_PAYLOAD_CRC, BAD_SIZES, RDMA_HDR_COUNTED, NCASES };
    static const char *const rules[NCASES] = {"IFT-4.2-VTAG-MATCH", "IFT-5.1-HDR-CRC", "IFT-5.1-PAYLOAD-CRC",
                                             "IFT-5.1-DDP-HDR-PRESENT", "IFT-5.1-RDMA-HDR-IN-PAYLOAD"};
    uint8_t junk[200];
    memset(junk, 0xEE, sizeof junk);
    unsigned conn = 0;
    for (int k = 0; k < NCASES; k++) {
        struct raw r;
        assert_true(raw_negotiate(&r, t.port, NULL, VW_IFT_FLAG_R | VW_IFT_FLAG_HC | VW_IFT_FLAG_PC));
        conn++;
        uint8_t ddp[64];
        struct vw_ddp_hdr h = {.tagged = true, .last = true, .dv = 1, .rdmap_rv = 1, .rdmap_opcode = VW_RDMAP_WRITE,
                               .stag = 1, .to = REGION_ADDR + 0x800};
        size_t dn = vw_ddp_encode(&h, ddp, sizeof ddp);
        const uint8_t *payload = junk;
        size_t plen = sizeof junk;
        if (k == BAD_SIZES)
            dn = 10; /* a header_size that is no RFC 5041 header */
        if (k == RDMA_HDR_COUNTED) {
            struct vw_ddp_hdr u = {.tagged = false, .last = true, .dv = 1, .rdmap_rv = 1,
                                   .rdmap_opcode = VW_RDMAP_READ_REQUEST, .qn = 1, .msn = 1};
            dn = vw_ddp_encode(&u, ddp, sizeof ddp);
            struct vw_rdmap_read_req rq = {SINK_STAG, SINK_TO, 16, 1, REGION_ADDR};
            dn += vw_rdmap_read_req_encode(&rq, ddp + dn, sizeof ddp - dn);
            plen = 0;
        }
        struct vw_ift_frame_enc e;
        vw_ift_frame_enc_init(&e, k == WRONG_VTAG ? (uint16_t)(r.peer.vtag + 1u) : r.peer.vtag, true, true, ddp, dn,
                              payload, plen);
        if (k == BAD_HDR_CRC)
            e.hdr_crc = VW_IFT_CRC_BAD;
        if (k == BAD_PAYLOAD_CRC)
            e.payload_crc = VW_IFT_CRC_BAD;
        uint8_t fr[512];
        size_t n = vw_ift_frame_encode(&e, fr, sizeof fr);
        assert_true(n > 0);
        raw_send(&r, fr, n);
        raw_pump(&r, 5000, NULL, 0);
        assert_true(r.closed && r.reset);
        assert_int_equal(r.nfr, 0); /* not answered (the Read Request of RDMA_HDR_COUNTED) */
        char a[64], b[64];
        snprintf(a, sizeof a, "event=error conn=%u ", conn);
        snprintf(b, sizeof b, "rule=%s ", rules[k]);
        if (!proc_wait_line(&t.p, a, b, NULL, 0, 5000))
            fail_msg("no '%s%s' in:\n%s", a, b, t.p.text);
        raw_free(&r);
    }
    uint8_t back[200], zero[200] = {0};
    read_back(t.port, REGION_ADDR + 0x800, back, sizeof back);
    assert_memory_equal(back, zero, sizeof zero);
    assert_int_equal(count_lines(t.p.text, "event=write ", NULL), 0);
    target_stop(&t);

    /* IH announced: this end ignores header CRCs, so a bad one is placed */
    target_start(&t, "--flags", "R,HC,PC,IH", NULL);
    struct raw r;
    assert_true(raw_negotiate(&r, t.port, NULL, VW_IFT_FLAG_R | VW_IFT_FLAG_HC));
    uint8_t ddp[32];
    struct vw_ddp_hdr h = {.tagged = true, .last = true, .dv = 1, .rdmap_rv = 1, .rdmap_opcode = VW_RDMAP_WRITE,
                           .stag = 1, .to = REGION_ADDR};
    size_t dn = vw_ddp_encode(&h, ddp, sizeof ddp);
    struct vw_ift_frame_enc e;
    vw_ift_frame_enc_init(&e, r.peer.vtag, true, false, ddp, dn, junk, 50);
    e.hdr_crc = VW_IFT_CRC_BAD;
    uint8_t fr[512];
    size_t n = vw_ift_frame_encode(&e, fr, sizeof fr);
    raw_send(&r, fr, n);
    raw_read_req(&r, REGION_ADDR, 50);
    raw_pump(&r, 5000, have_frames, 1);
    assert_int_equal(r.nfr, 1);
    assert_memory_equal(r.fr[0].payload, junk, 50);
    assert_false(r.closed);
    assert_true(proc_wait_line(&t.p, "event=finding conn=1 rule=IFT-5.1-HDR-CRC", NULL, NULL, 0, 5000));
    raw_free(&r);
    target_stop(&t);
}

/* ift-peer as A reacts to a bad phase 1 too: an error line, exit 1. */
static void test_reactions_as_a(void **state)
{
    (void)state;
    static const struct {
        const char *rule;
        unsigned phase;
        uint32_t flags;
        bool bad_crc;
    } cases[] = {
        {"IFT-4.2-IND-CRC", 1, VW_IFT_FLAG_R, true},
        {"IFT-4.2-R-AGREE", 1, 0, false},
        {"IFT-4.2-PHASE", 0, VW_IFT_FLAG_R, false},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int port;
        int lfd = listen_any(&port);
        char hp[64];
        snprintf(hp, sizeof hp, "127.0.0.1:%d", port);
        struct proc c;
        const char *args[] = {"--connect", hp, "--send", "10", NULL};
        proc_start(&c, args);
        int fd = accept_within(lfd, 10000);
        close(lfd);
        struct raw r;
        raw_init(&r, fd, false, NULL, 0x7777, cases[i].flags);
        raw_pump(&r, 5000, have_ind, 0);
        assert_true(r.got_ind);
        struct vw_ift_ind_enc e;
        vw_ift_ind_enc_init(&e, cases[i].phase, r.vtag, false, false);
        e.flags = cases[i].flags | (cases[i].phase ? VW_IFT_FLAG_PH : 0u);
        e.crc = cases[i].bad_crc ? VW_IFT_CRC_BAD : VW_IFT_CRC_GOOD;
        uint8_t ind[VW_IFT_IND_LEN];
        vw_ift_ind_encode(&e, ind, sizeof ind);
        raw_send(&r, ind, sizeof ind);
        raw_pump(&r, 5000, NULL, 0);
        assert_true(r.closed && r.reset);
        assert_int_equal(r.nfr, 0);
        assert_int_equal(proc_wait_exit(&c, 10000), 1);
        check_stderr(&c);
        char b[64];
        snprintf(b, sizeof b, "rule=%s ", cases[i].rule);
        if (!find_line(&c, "event=error conn=0 ", b, NULL, 0))
            fail_msg("no %s in:\n%s", b, c.text);
        raw_free(&r);
        proc_free(&c);
    }
}

static const char *const clean_ops[] = {"--send", "300", "--write", "300", "--read", "300", "--send", "0",
                                        "--frag", "128", NULL};

/* A clean ift-peer session (client and target, through the recording relay) lints clean. */
static void test_clean_session_lints_clean(void **state)
{
    (void)state;
    struct target t;
    target_start(&t, "--frag", "128", "--stag", "10", "--region-addr", "0x20000000", "--region-size", "4096", NULL);
    assert_true(find_line(&t.p, "event=region addr=0x20000000 handle=10 len=4096", NULL, NULL, 0));
    struct rec rec = {0};
    struct proc c;
    const char *ops[24] = {"--region", "20000000:a:4096"};
    for (size_t i = 0; clean_ops[i]; i++)
        ops[i + 2] = clean_ops[i];
    int rc = relay_session(t.port, &rec, &c, ops);
    if (rc != 0)
        fail_msg("client exit %d:\n%s", rc, c.text);
    assert_true(find_line(&c, "event=done conn=0 sends=2 writes=1 reads=1 mismatches=0", "ok=1", NULL, 0));
    assert_true(find_line(&c, "event=readback conn=0 n=2 len=300 verified=300 ok=1", NULL, NULL, 0));
    char *lint = rec_lint(&rec);
    unsigned errors, warnings;
    lint_counts(lint, &errors, &warnings);
    if (errors || warnings)
        fail_msg("clean session does not lint clean:\n%s", lint);
    assert_null(strstr(lint, "IFT-"));
    free(lint);
    rec_free(&rec);
    proc_free(&c);
    target_stop(&t);
}

/* Every fault of --list-faults is visible on the wire. */
static void test_every_fault_is_visible(void **state)
{
    (void)state;
    const char *args[] = {"--list-faults", NULL};
    struct proc lp;
    proc_start(&lp, args);
    assert_int_equal(proc_wait_exit(&lp, 10000), 0);
    check_stderr(&lp);
    unsigned nfaults = 0;
    static const char *const client_side[] = {"rdma-hdr-in-header", "early-frames"};
    static const char *const reactions[] = {"answer-incompatible", "ignore-r-disagree", "place-bad-frames",
                                            "fixed-vtag", "answer-version-0", "answer-bad-ind-crc",
                                            "answer-phase-1"};
    for (char *save, *line = strtok_r(lp.text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char name[64], id[64];
        assert_int_equal(sscanf(line, "%63s %63s", name, id), 2);
        assert_int_equal(strncmp(id, "IFT-", 4), 0);
        nfaults++;
        bool is_reaction = false, is_client = false;
        for (size_t i = 0; i < sizeof reactions / sizeof reactions[0]; i++)
            is_reaction |= strcmp(name, reactions[i]) == 0;
        for (size_t i = 0; i < sizeof client_side / sizeof client_side[0]; i++)
            is_client |= strcmp(name, client_side[i]) == 0;
        struct target t;
        if (!is_reaction) {
            /* lint names the fault's ID in the relayed session */
            if (is_client)
                target_start(&t, NULL);
            else
                target_start(&t, "--fault", name, "--frag", "128", NULL);
            const char *extra[24];
            size_t n = 0;
            if (is_client) {
                extra[n++] = "--fault";
                extra[n++] = name;
            }
            for (size_t i = 0; clean_ops[i]; i++)
                extra[n++] = clean_ops[i];
            extra[n] = NULL;
            struct rec rec = {0};
            struct proc c;
            relay_session(t.port, &rec, &c, extra);
            char *lint = rec_lint(&rec);
            char want[96];
            snprintf(want, sizeof want, "%s %s (", strcmp(name, "reserved-bits") ? "error" : "warning", id);
            /* until issue 31's lint names a wrong magic IFT-4.1-MAGIC too, it says IFT-4-INDICATION-FIRST */
            if (!strstr(lint, want) && !(strcmp(name, "bad-magic") == 0 && strstr(lint, "error IFT-4-INDICATION-FIRST (")))
                fail_msg("fault %s: lint does not name '%s':\n%s", name, want, lint);
            free(lint);
            rec_free(&rec);
            proc_free(&c);
            target_stop(&t);
            continue;
        }
        if (strcmp(name, "fixed-vtag") == 0) {
            /* the same VTag at every connection: not selected at random */
            target_start(&t, "--fault", name, NULL);
            for (int k = 0; k < 2; k++) {
                struct raw r;
                assert_true(raw_negotiate(&r, t.port, NULL, VW_IFT_FLAG_R));
                assert_int_equal(r.peer.vtag, 0x5644);
                raw_free(&r);
            }
            target_stop(&t);
            continue;
        }
        for (int faulty = 0; faulty < 2; faulty++) { /* the control first: the same provocation, no fault */
            if (faulty)
                target_start(&t, "--fault", name, NULL);
            else
                target_start(&t, NULL);
            struct rec rec = {0};
            struct raw r;
            if (strcmp(name, "answer-incompatible") == 0) {
                raw_init(&r, connect_port(t.port), true, &rec, 0x3131, VW_IFT_FLAG_R);
                struct vw_ift_ind_enc e;
                vw_ift_ind_enc_init(&e, 0, r.vtag, false, false);
                e.version = e.bc_version = 2;
                uint8_t ind[VW_IFT_IND_LEN];
                vw_ift_ind_encode(&e, ind, sizeof ind);
                raw_send(&r, ind, sizeof ind);
                raw_pump(&r, 5000, NULL, 0);
                assert_int_equal(r.got_ind, faulty); /* the fault answers */
                char *lint = rec_lint(&rec);
                assert_int_equal(strstr(lint, "error IFT-4.2-BC-VERSION-REJECT (") != NULL, faulty);
                free(lint);
            } else if (strncmp(name, "answer-", 7) == 0) {
                /* I20: B answers an indication it must refuse (Version 0, a bad CRC, phase 1 first) */
                raw_init(&r, connect_port(t.port), true, &rec, 0x3131, VW_IFT_FLAG_R);
                struct vw_ift_ind_enc e;
                vw_ift_ind_enc_init(&e, strcmp(name, "answer-phase-1") == 0 ? 1 : 0, r.vtag, true, true);
                e.flags |= VW_IFT_FLAG_R;
                if (strcmp(name, "answer-version-0") == 0)
                    e.version = 0;
                if (strcmp(name, "answer-bad-ind-crc") == 0)
                    e.crc = VW_IFT_CRC_BAD;
                uint8_t ind[VW_IFT_IND_LEN];
                assert_int_equal(vw_ift_ind_encode(&e, ind, sizeof ind), VW_IFT_IND_LEN);
                raw_send(&r, ind, sizeof ind);
                raw_pump(&r, 3000, NULL, 0);
                assert_int_equal(r.got_ind, faulty); /* the fault answers; the control closes */
            } else if (strcmp(name, "ignore-r-disagree") == 0) {
                bool answered = raw_negotiate(&r, t.port, &rec, VW_IFT_FLAG_HC);
                assert_true(answered);
                uint8_t m[20] = "after disagreement";
                raw_send_msg(&r, 0x43, m, sizeof m);
                raw_pump(&r, 3000, have_frames, 1);
                assert_int_equal(r.nfr, (size_t)faulty); /* the fault answers a frame it must not take */
                assert_int_equal(r.closed, !faulty);
                char *lint = rec_lint(&rec);
                /* the tester's frame breaks it once; the target's echo once more */
                assert_int_equal(count_lines(lint, "error IFT-4.2-R-AGREE (", NULL), 1 + faulty);
                free(lint);
            } else {
                assert_string_equal(name, "place-bad-frames");
                assert_true(raw_negotiate(&r, t.port, &rec, VW_IFT_FLAG_R | VW_IFT_FLAG_PC));
                uint8_t ddp[32], junk[64];
                memset(junk, 0xEE, sizeof junk);
                struct vw_ddp_hdr h = {.tagged = true, .last = true, .dv = 1, .rdmap_rv = 1,
                                       .rdmap_opcode = VW_RDMAP_WRITE, .stag = 1, .to = REGION_ADDR};
                size_t dn = vw_ddp_encode(&h, ddp, sizeof ddp);
                struct vw_ift_frame_enc e;
                vw_ift_frame_enc_init(&e, r.peer.vtag, false, true, ddp, dn, junk, sizeof junk);
                e.payload_crc = VW_IFT_CRC_BAD;
                uint8_t fr[256];
                size_t n = vw_ift_frame_encode(&e, fr, sizeof fr);
                raw_send(&r, fr, n);
                raw_read_req(&r, REGION_ADDR, sizeof junk);
                raw_pump(&r, 3000, have_frames, 1);
                assert_int_equal(r.closed, !faulty);
                assert_int_equal(r.nfr, (size_t)faulty);
                if (faulty) /* the bad frame's bytes were placed */
                    assert_memory_equal(r.fr[0].payload, junk, sizeof junk);
            }
            raw_free(&r);
            rec_free(&rec);
            target_stop(&t);
        }
    }
    assert_int_equal(nfaults, 20);
    proc_free(&lp);
}

/* Bad command lines: "ift-peer: " and exit 2; --help and -h agree. */
static void test_command_line(void **state)
{
    (void)state;
    static const char *const bad[][5] = {
        {"--fault", "nope", NULL}, {"--frag", "0", NULL}, {"--listen", "70000", NULL}, {"--send", "5", NULL},
        {"--flags", "R,XX", NULL}, {"--require", "maybe", NULL}, {"--region", "zz", NULL}, {"--bogus", NULL},
        {"--vtag", "65536", NULL}, {"--connect", "127.0.0.1:1", NULL}, {"--listen", NULL},
        {"--choice", "bogus", NULL}, {"--choice", "frag", NULL}, {"--choice", "ih=1", NULL},
        {"--connect", "5996", "--send", "1", NULL}, {"--connect", "host:", "--send", "1", NULL},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct proc p;
        proc_start(&p, bad[i]);
        assert_int_equal(proc_wait_exit(&p, 10000), 2);
        FILE *f = fopen(p.errpath, "r");
        char buf[512] = "";
        assert_non_null(f);
        size_t n = fread(buf, 1, sizeof buf - 1, f);
        buf[n] = '\0';
        fclose(f);
        if (strncmp(buf, "ift-peer: ", 10))
            fail_msg("%s: stderr '%s'", bad[i][0], buf);
        check_stderr(&p);
        proc_free(&p);
    }
    /* a refused connection is exit 1 */
    int port;
    int lfd = listen_any(&port);
    close(lfd);
    char hp[64];
    snprintf(hp, sizeof hp, "127.0.0.1:%d", port);
    const char *refused[] = {"--connect", hp, "--send", "1", NULL};
    struct proc p;
    proc_start(&p, refused);
    assert_int_equal(proc_wait_exit(&p, 10000), 1);
    check_stderr(&p);
    proc_free(&p);
    const char *help[] = {"--help", NULL}, *h[] = {"-h", NULL};
    struct proc a, b;
    proc_start(&a, help);
    proc_start(&b, h);
    assert_int_equal(proc_wait_exit(&a, 10000), 0);
    assert_int_equal(proc_wait_exit(&b, 10000), 0);
    check_stderr(&a);
    check_stderr(&b);
    assert_non_null(strstr(a.text, "--connect HOST:PORT"));
    assert_string_equal(a.text, b.text);
    proc_free(&a);
    proc_free(&b);
    /* --choice applies over --flags: the listening line and the answer show it */
    struct target t;
    target_start(&t, "--flags", "R,HC,PC", "--choice", "no-r,ih,frag=7", "--choice", "refuse-pc", NULL);
    assert_true(find_line(&t.p, "event=listening ", "flags=HC|PC|IH", NULL, 0));
    struct raw r;
    assert_false(raw_negotiate(&r, t.port, NULL, VW_IFT_FLAG_PC)); /* refuse-pc: aborted */
    raw_free(&r);
    assert_true(raw_negotiate(&r, t.port, NULL, 0));
    assert_int_equal(r.peer.flags, VW_IFT_FLAG_PH | VW_IFT_FLAG_HC | VW_IFT_FLAG_PC | VW_IFT_FLAG_IH);
    uint8_t m[20] = "cut into segments";
    raw_send_msg(&r, 0x40, m, sizeof m);
    raw_pump(&r, 5000, have_frames, 3); /* frag=7: 7 + 7 + 6 */
    assert_int_equal(r.nfr, 3);
    assert_int_equal(r.fr[2].len, 6);
    raw_free(&r);
    target_stop(&t);
    const char *lc[] = {"--list-choices", NULL};
    proc_start(&a, lc);
    assert_int_equal(proc_wait_exit(&a, 10000), 0);
    check_stderr(&a);
    assert_non_null(strstr(a.text, "require-checked-pc  "));
    assert_non_null(strstr(a.text, "frag=N  "));
    proc_free(&a);
}

/* Random bytes never crash the target; each connection is closed. */
static void test_random_bytes(void **state)
{
    (void)state;
    struct target t;
    target_start(&t, NULL);
    srand(15);
    for (unsigned i = 1; i <= 30; i++) {
        struct raw r;
        raw_init(&r, connect_port(t.port), true, NULL, 1, 0);
        uint8_t junk[400];
        size_t n = 1 + (size_t)rand() % sizeof junk;
        for (size_t k = 0; k < n; k++)
            junk[k] = (uint8_t)rand();
        if (i % 2) { /* half of them after a good indication */
            uint8_t ind[VW_IFT_IND_LEN];
            make_ind(ind, 0, 1, VW_IFT_FLAG_R | VW_IFT_FLAG_HC);
            raw_send(&r, ind, sizeof ind);
        }
        raw_send(&r, junk, n);
        shutdown(r.fd, SHUT_WR);
        raw_pump(&r, 5000, NULL, 0);
        assert_true(r.closed);
        char a[64];
        snprintf(a, sizeof a, "event=closed conn=%u ", i);
        assert_true(proc_wait_line(&t.p, a, NULL, NULL, 0, 5000));
        raw_free(&r);
    }
    target_stop(&t);
}

/* Out of descriptors: queued connections are refused at once (the listen
 * guard), the target does not spin, and serves again once descriptors free. */
static void test_out_of_descriptors(void **state)
{
    (void)state;
    struct target t;
    child_nofile = 24;
    target_start(&t, NULL);
    child_nofile = 0;
    enum { N = 40 };
    int fds[N];
    for (int i = 0; i < N; i++) {
        fds[i] = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)t.port)};
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        assert_int_equal(connect(fds[i], (struct sockaddr *)&a, sizeof a), 0);
    }
    if (!proc_wait_line(&t.p, "event=refused reason=no-descriptors", NULL, NULL, 0, 5000))
        fail_msg("no refusal in:\n%s", t.p.text);
    /* the refused ones learn at once: EOF or RST, not a timeout */
    unsigned ended = 0;
    for (int i = 0; i < N; i++) {
        struct pollfd pf = {fds[i], POLLIN, 0};
        char b;
        if (poll(&pf, 1, i < N - 1 ? 0 : 200) > 0 && recv(fds[i], &b, 1, MSG_DONTWAIT) <= 0)
            ended++;
    }
    assert_true(ended > 0);
    /* no busy loop while the accepted ones hold every descriptor */
    char path[64], stat[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)t.p.pid);
    unsigned long ticks[2];
    for (int k = 0; k < 2; k++) {
        FILE *f = fopen(path, "r");
        assert_non_null(f);
        size_t n = fread(stat, 1, sizeof stat - 1, f);
        fclose(f);
        stat[n] = '\0';
        const char *p = strrchr(stat, ')');
        assert_non_null(p);
        unsigned long ut, st;
        assert_int_equal(sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut, &st), 2);
        ticks[k] = ut + st;
        if (k == 0)
            usleep(1000000);
    }
    assert_true(ticks[1] - ticks[0] < (unsigned long)sysconf(_SC_CLK_TCK) / 2);
    for (int i = 0; i < N; i++)
        close(fds[i]);
    struct raw r; /* descriptors free again: served */
    double end = now_ms() + 5000;
    bool ok = false;
    while (!ok && now_ms() < end) {
        ok = raw_negotiate(&r, t.port, NULL, VW_IFT_FLAG_R);
        raw_free(&r);
    }
    assert_true(ok);
    target_stop(&t);
}

int main(void)
{
    peer_path = getenv("IFT_PEER");
    conform_path = getenv("VITCP_CONFORM");
    if (!peer_path || !conform_path) {
        fprintf(stderr, "test_ift_peer: set IFT_PEER and VITCP_CONFORM\n");
        return 1;
    }
    snprintf(tmpdir, sizeof tmpdir, "/tmp/ift-peer-test.XXXXXX");
    if (!mkdtemp(tmpdir))
        return 1;
    signal(SIGPIPE, SIG_IGN);
    srand((unsigned)getpid());
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_role_b_each_flag_set),
        cmocka_unit_test(test_role_a_each_flag_set),
        cmocka_unit_test(test_reactions_to_indications),
        cmocka_unit_test(test_reactions_to_frames),
        cmocka_unit_test(test_reactions_as_a),
        cmocka_unit_test(test_clean_session_lints_clean),
        cmocka_unit_test(test_every_fault_is_visible),
        cmocka_unit_test(test_command_line),
        cmocka_unit_test(test_random_bytes),
        cmocka_unit_test(test_out_of_descriptors),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    rmdir(tmpdir);
    return rc;
}
