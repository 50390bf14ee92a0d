/*
 * Command lines: vitcp-trafgen, vitcp-conform, vipl-peer and vipl-pingpong
 * with bad arguments (missing values, negative and huge numbers, unknown
 * options, nonexistent files, unwritable outputs, bad HOST:PORT, busy and
 * closed ports). Each must exit with the documented code (2 for a bad
 * command line or input, 1 for a failure while running), say why in the
 * first line of stderr (prefixed by the tool's name; further lines may
 * only be the usage text), and never die from a signal or print a
 * sanitizer report. --help exits 0 with the usage on stdout.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>

#include <cmocka.h>

#include "robust_common.h"

enum tool { TRAFGEN, CONFORM, PEER, PINGPONG };
static const char *const tool_path[] = {TRAFGEN_BIN, CONFORM_BIN, PEER_BIN, PINGPONG_BIN};
static const char *const tool_name[] = {"vitcp-trafgen", "vitcp-conform", "vipl-peer", "vipl-pingpong"};

struct cli_case {
    enum tool tool;
    const char *args[14]; /* "{BUSY}" / "{CLOSED}" become a busy / a closed local port */
    int exit;
    const char *mention;  /* the first stderr line contains this */
    const char *known;    /* a known issue (tests/robustness/known/): only no crash, exit 1 or 2 */
};

#define CAP "{TMP}/x.pcap"

static const struct cli_case cases[] = {
    /* vitcp-trafgen: 2 bad command line, 1 failed while generating or sending */
    {TRAFGEN, {NULL}, 2, "no scenario", NULL},
    {TRAFGEN, {"--bogus"}, 2, "--bogus", NULL},
    {TRAFGEN, {"-w"}, 2, "-w", NULL},
    {TRAFGEN, {"vitcp-send", "--seed"}, 2, "--seed", NULL},
    {TRAFGEN, {"--seed", "-5", "-w", CAP, "vitcp-send"}, 2, "-5", NULL},
    {TRAFGEN, {"--seed", "99999999999999999999999", "-w", CAP, "vitcp-send"}, 2, "99999999999999999999999", NULL},
    {TRAFGEN, {"--msg-size", "-1", "-w", CAP, "vitcp-send"}, 2, "--msg-size", NULL},
    {TRAFGEN, {"--msg-size", "99999999999", "-w", CAP, "vitcp-send"}, 2, "--msg-size", NULL},
    {TRAFGEN, {"--seg-payload", "0", "-w", CAP, "vitcp-send"}, 2, "--seg-payload", NULL},
    {TRAFGEN, {"--count", "0", "-w", CAP, "vitcp-send"}, 2, "--count", NULL},
    {TRAFGEN, {"--tcp-segment", "70000", "-w", CAP, "vitcp-send"}, 2, "--tcp-segment", NULL},
    {TRAFGEN, {"--port", "70000", "-w", CAP, "vitcp-send"}, 2, "--port", NULL},
    {TRAFGEN, {"--rate", "-3", "-w", CAP, "vitcp-send"}, 2, "--rate", NULL},
    {TRAFGEN, {"--mutate-rate", "2", "--break", "VITCP-3.6-CRC-VALID", "-w", CAP, "vitcp-send"}, 2, "--mutate-rate", NULL},
    {TRAFGEN, {"--break", "NOT-AN-ID", "-w", CAP, "vitcp-send"}, 2, "NOT-AN-ID", NULL},
    {TRAFGEN, {"-w", CAP, "no-such-scenario"}, 2, "no-such-scenario", NULL},
    {TRAFGEN, {"-f", "/nonexistent/s.scn", "-w", CAP}, 2, "/nonexistent/s.scn", NULL},
    {TRAFGEN, {"--list-cases", "no-such-scenario"}, 2, "no-such-scenario", NULL},
    {TRAFGEN, {"--connect", "nohost", "vitcp-send"}, 2, "nohost", NULL},
    {TRAFGEN, {"--connect", "127.0.0.1:99999", "vitcp-send"}, 2, "127.0.0.1:99999", NULL},
    {TRAFGEN, {"--connect", "127.0.0.1:{CLOSED}", "vitcp-send"}, 1, "127.0.0.1", NULL},
    {TRAFGEN, {"-w", "/nonexistent/dir/x.pcap", "vitcp-send"}, 1, "/nonexistent/dir/x.pcap", NULL},
    {TRAFGEN, {"-w", "{TMP}", "vitcp-send"}, 1, "{TMP}", NULL},
    {TRAFGEN, {"-w", "/dev/full", "vitcp-send"}, 1, "vitcp-trafgen", NULL},
    {TRAFGEN, {"-w", CAP, "-i", "lo", "vitcp-send"}, 2, "vitcp-trafgen", NULL},
    {TRAFGEN, {"-i", "nosuchif0", "vitcp-send"}, 1, "nosuchif0", NULL},
    /* vitcp-conform: 2 usage or input error, unreachable target */
    {CONFORM, {NULL}, 2, "missing command", NULL},
    {CONFORM, {"bogus"}, 2, "bogus", NULL},
    {CONFORM, {"list", "--protocol", "NOPE"}, 2, "NOPE", NULL},
    {CONFORM, {"list", "--level", "NOPE"}, 2, "NOPE", NULL},
    {CONFORM, {"list", "--cases", "/nonexistent"}, 2, "/nonexistent", NULL},
    {CONFORM, {"list", "--bogus"}, 2, "--bogus", NULL},
    {CONFORM, {"run"}, 2, "--target", NULL},
    {CONFORM, {"run", "--target"}, 2, "--target", NULL},
    {CONFORM, {"run", "--target", "nohost"}, 2, "nohost", NULL},
    {CONFORM, {"run", "--target", "127.0.0.1:99999"}, 2, "127.0.0.1:99999", NULL},
    {CONFORM, {"run", "--target", "[::1"}, 2, "[::1", NULL},
    {CONFORM, {"run", "--target", "127.0.0.1:-1"}, 2, "127.0.0.1:-1", NULL},
    {CONFORM, {"run", "--target", "127.0.0.1:{CLOSED}", "--quiet"}, 2, "127.0.0.1", NULL},
    {CONFORM, {"run", "--target", "127.0.0.1:{CLOSED}", "--slack", "-5"}, 2, "-5", NULL},
    {CONFORM, {"run", "--target", "127.0.0.1:{CLOSED}", "--slack", "99999999999999999999"}, 2, "--slack", NULL},
    {CONFORM, {"run", "--target", "127.0.0.1:{CLOSED}", "--cases", "/nonexistent"}, 2, "/nonexistent", NULL},
    {CONFORM, {"run", "--target", "127.0.0.1:{CLOSED}", "--relay-all", "--no-relay"}, 2, "contradict", NULL},
    {CONFORM, {"run", "--target", "127.0.0.1:{CLOSED}", "--capture", "x.pcap", "--no-capture"}, 2, "contradict", NULL},
    {CONFORM, {"run", "--target", "127.0.0.1:{CLOSED}", "--discriminator",
               "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"}, 2, "64", NULL},
    {CONFORM, {"run", "--target", "127.0.0.1:{CLOSED}", "--json", "{TMP}"}, 2, "cannot write {TMP}: Is a directory", NULL},
    {CONFORM, {"run", "--target", "127.0.0.1:{CLOSED}", "--junit", "/proc/x.xml"}, 2, "cannot write /proc/x.xml", NULL},
    {CONFORM, {"lint"}, 2, "capture", NULL},
    {CONFORM, {"lint", "/nonexistent/x.pcap"}, 2, "/nonexistent/x.pcap", NULL},
    {CONFORM, {"lint", "--port", "0", "x.pcap"}, 2, "--port", NULL},
    {CONFORM, {"lint", "--port", "99999999999999999999", "x.pcap"}, 2, "--port", NULL},
    {CONFORM, {"lint", "--port"}, 2, "--port", NULL},
    {CONFORM, {"lint", "a.pcap", "b.pcap"}, 2, "b.pcap", NULL},
    {CONFORM, {"lint", "{TMP}"}, 2, "{TMP}", NULL},
    /* vipl-peer */
    {PEER, {NULL}, 2, "--port", NULL},
    {PEER, {"--bogus"}, 2, "--bogus", NULL},
    {PEER, {"--port"}, 2, "--port", NULL},
    {PEER, {"--port", "-1"}, 2, "-1", NULL},
    {PEER, {"--port", "99999"}, 2, "99999", NULL},
    {PEER, {"--port", "abc"}, 2, "abc", NULL},
    {PEER, {"--port", "1", "--connect", "127.0.0.1:1"}, 2, "exactly one", NULL},
    {PEER, {"--port", "1", "extra"}, 2, "vipl-peer", NULL},
    {PEER, {"--connect", "nohost"}, 2, "HOST:PORT", NULL},
    {PEER, {"--connect", "nosuchhost.invalid:1"}, 2, "nosuchhost.invalid", NULL},
    {PEER, {"--fault", "NOPE", "--port", "1"}, 2, "NOPE", NULL},
    {PEER, {"--level", "x", "--port", "1"}, 2, "--level", NULL},
    {PEER, {"--crc", "maybe", "--port", "1"}, 2, "--crc", NULL},
    {PEER, {"--region-size", "0", "--port", "1"}, 2, "--region-size", NULL},
    {PEER, {"--region-size", "99999999999999999999", "--port", "1"}, 2, "--region-size", NULL},
    {PEER, {"--count", "-1", "--connect", "127.0.0.1:1"}, 2, "--count", NULL},
    {PEER, {"--size", "99999999", "--connect", "127.0.0.1:1"}, 2, "--size", NULL},
    {PEER, {"--disc", "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx", "--port", "1"}, 2, "64", NULL},
    {PEER, {"--port", "{BUSY}", "--once"}, 1, "vipl-peer", NULL},
    {PEER, {"--connect", "127.0.0.1:{CLOSED}"}, 1, "cannot connect to 127.0.0.1:{CLOSED}", NULL},
    /* vipl-pingpong */
    {PINGPONG, {NULL}, 2, "--server", NULL},
    {PINGPONG, {"--bogus"}, 2, "--bogus", NULL},
    {PINGPONG, {"--server"}, 2, "--port", NULL},
    {PINGPONG, {"--server", "--port", "-1"}, 2, "-1", NULL},
    {PINGPONG, {"--server", "--port", "65536"}, 2, "65536", NULL},
    {PINGPONG, {"--client"}, 2, "--client", NULL},
    {PINGPONG, {"--server", "--client", "127.0.0.1", "--port", "1"}, 2, "exactly one", NULL},
    {PINGPONG, {"--client", "127.0.0.1", "--port", "1", "--sizes", "abc"}, 2, "abc", NULL},
    {PINGPONG, {"--client", "127.0.0.1", "--port", "1", "--sizes", "0"}, 2, "sizes", NULL},
    {PINGPONG, {"--client", "127.0.0.1", "--port", "1", "--sizes", "99999999999999999999"}, 2, "sizes", NULL},
    {PINGPONG, {"--client", "127.0.0.1", "--port", "1", "--op", "nope"}, 2, "--op", NULL},
    {PINGPONG, {"--client", "127.0.0.1", "--port", "1", "--iters", "-1"}, 2, "--iters", NULL},
    {PINGPONG, {"--client", "127.0.0.1", "--port", "1", "--iters", "5x"}, 2, "'5x'", NULL},
    {PINGPONG, {"--client", "127.0.0.1", "--port", "1", "--iters", "4294967296"}, 2, "'4294967296'", NULL},
    {PINGPONG, {"--client", "127.0.0.1", "--port", "1", "--count", "7 "}, 2, "--count", NULL},
    {PINGPONG, {"--client", "127.0.0.1", "--port"}, 2, "--port", NULL},
    {PINGPONG, {"--client", "127.0.0.1", "--port", "1", "--crc", "x"}, 2, "--crc", NULL},
    {PINGPONG, {"--client", "nosuchhost.invalid", "--port", "1"}, 2, "nosuchhost.invalid", NULL},
    {PINGPONG, {"--client", "127.0.0.1", "--port", "{CLOSED}"}, 1, "vipl-pingpong", NULL},
    {PINGPONG, {"--server", "--port", "{BUSY}", "--once"}, 1, "vipl-pingpong", NULL},
    {PINGPONG, {"--client", "127.0.0.1", "--port", "{CLOSED}", "--sizes", ","}, 2, "--sizes ','", NULL},
    {PINGPONG, {"--client", "127.0.0.1", "--port", "{CLOSED}", "--sizes", "4,,8"}, 2, "--sizes '4,,8'", NULL},
    {PINGPONG, {"--client", "127.0.0.1", "--port", "{CLOSED}", "--sizes", "4,"}, 2, "--sizes '4,'", NULL},
    {PINGPONG, {"--client", "127.0.0.1", "--port", "{CLOSED}", "--sizes", ",8"}, 2, "--sizes ',8'", NULL},
    {PINGPONG, {"--client", "127.0.0.1", "--port", "{CLOSED}", "--sizes", ""}, 2, "--sizes ''", NULL},
};

static char tmpdir[512];
static char busy_port[8], closed_port[8];
static int busy_fd = -1;

static int bind_port(char *out, bool keep)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_ANY)};
    if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) || listen(fd, 1))
        return -1;
    socklen_t l = sizeof a;
    getsockname(fd, (struct sockaddr *)&a, &l);
    snprintf(out, 8, "%u", ntohs(a.sin_port));
    if (!keep) {
        close(fd);
        return -1;
    }
    return fd;
}

/* Is a TCP socket listening on PORT? /proc/net/tcp{,6} tell without
 * connecting (a probe connection would be a client the server answers). */
static bool port_listening(const char *port)
{
    unsigned want = (unsigned)atoi(port);
    const char *files[] = {"/proc/net/tcp", "/proc/net/tcp6"};
    for (size_t i = 0; i < 2; i++) {
        FILE *f = fopen(files[i], "r");
        if (!f)
            continue;
        char line[512];
        bool found = false;
        while (!found && fgets(line, sizeof line, f)) {
            char local[128];
            unsigned st;
            if (sscanf(line, " %*u: %127s %*s %x", local, &st) != 2)
                continue;
            const char *colon = strrchr(local, ':');
            found = colon && strtoul(colon + 1, NULL, 16) == want && st == 0x0A; /* TCP_LISTEN */
        }
        fclose(f);
        if (found)
            return true;
    }
    return false;
}

/* Wait (at most 20 s: sanitizers on a loaded machine start slowly) until
 * PORT listens. */
static void wait_listening(const char *port)
{
    for (int i = 0; i < 200; i++) {
        if (port_listening(port))
            return;
        usleep(100 * 1000);
    }
    fail_msg("nothing listens on port %s after 20 s", port);
}

static int setup(void **state)
{
    (void)state;
    rb_tmpdir(tmpdir, sizeof tmpdir, "cli");
    busy_fd = bind_port(busy_port, true);
    bind_port(closed_port, false);
    return busy_fd < 0 ? -1 : 0;
}

static int teardown(void **state)
{
    (void)state;
    close(busy_fd);
    rb_rmdir(tmpdir);
    return 0;
}

/* Replace the placeholders of one argument. */
static char *expand(const char *a)
{
    char *out = malloc(strlen(a) + 600);
    size_t n = 0;
    while (*a) {
        if (!strncmp(a, "{TMP}", 5))
            n += (size_t)sprintf(out + n, "%s", tmpdir), a += 5;
        else if (!strncmp(a, "{BUSY}", 6))
            n += (size_t)sprintf(out + n, "%s", busy_port), a += 6;
        else if (!strncmp(a, "{CLOSED}", 8))
            n += (size_t)sprintf(out + n, "%s", closed_port), a += 8;
        else
            out[n++] = *a++;
    }
    out[n] = '\0';
    return out;
}

static void check_no_crash(const struct rb_run *res, const char *what)
{
    if (res->timed_out)
        fail_msg("%s: did not finish in time", what);
    if (res->signal)
        fail_msg("%s: died from signal %d; stderr: %.800s", what, res->signal, res->err);
    if (rb_has_sanitizer_report(res->err) || rb_has_sanitizer_report(res->out))
        fail_msg("%s: sanitizer report: %.3000s", what, res->err);
}

static void test_bad_arguments(void **state)
{
    (void)state;
    unsigned known = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const struct cli_case *c = &cases[i];
        char *argv[16];
        int n = 0;
        argv[n++] = (char *)tool_path[c->tool];
        for (int k = 0; c->args[k]; k++)
            argv[n++] = expand(c->args[k]);
        argv[n] = NULL;
        char what[1024];
        size_t w = (size_t)snprintf(what, sizeof what, "%s", tool_name[c->tool]);
        for (int k = 1; k < n && w < sizeof what - 1; k++)
            w += (size_t)snprintf(what + w, sizeof what - w, " %.80s", argv[k]);
        char *mention = expand(c->mention);
        struct rb_run res;
        rb_run_out(argv, 20.0, NULL, &res);
        check_no_crash(&res, what);
        if (c->known) {
            if (res.status != 1 && res.status != 2)
                fail_msg("%s: exit %d (known issue %s)", what, res.status, c->known);
            fprintf(stderr, "# known issue %s: %s: exit %d, stderr '%.200s'\n", c->known, what, res.status, res.err);
            known++;
        } else {
            if (res.status != c->exit)
                fail_msg("%s: exit %d, expected %d; stderr: %.500s", what, res.status, c->exit, res.err);
            /* first line: "<tool>: reason" naming what was wrong */
            const char *nl = strchr(res.err, '\n');
            size_t l1 = nl ? (size_t)(nl - res.err) : strlen(res.err);
            char first[1024];
            snprintf(first, sizeof first, "%.*s", (int)(l1 < 1000 ? l1 : 1000), res.err);
            /* starts with the tool's name, not its path (getopt's own
             * messages named the program as it was started) */
            char prefix[64];
            snprintf(prefix, sizeof prefix, "%s: ", tool_name[c->tool]);
            if (strncmp(first, prefix, strlen(prefix)) != 0)
                fail_msg("%s: first stderr line '%s' is not '<tool>: reason'", what, first);
            if (strstr(first, mention) == NULL)
                fail_msg("%s: first stderr line '%s' does not mention '%s'", what, first, mention);
            /* anything after it is the usage text or a hint */
            if (nl && nl[1] && strncmp(nl + 1, "usage", 5) && strncmp(nl + 1, "Usage", 5) &&
                strncmp(nl + 1, "Try ", 4))
                fail_msg("%s: stderr has more than the error and the usage: '%.300s'", what, res.err);
        }
        rb_run_free(&res);
        free(mention);
        for (int k = 1; k < n; k++)
            free(argv[k]);
    }
    fprintf(stderr, "# %zu command lines, %u known issues\n", sizeof cases / sizeof cases[0], known);
}

static void test_help(void **state)
{
    (void)state;
    for (int t = 0; t < 4; t++) {
        char *argv[] = {(char *)tool_path[t], (char *)"--help", NULL};
        struct rb_run res;
        rb_run(argv, 20.0, &res);
        check_no_crash(&res, tool_name[t]);
        if (res.status != 0 || rb_count_lines(res.out) < 2 || strstr(res.out, tool_name[t]) == NULL)
            fail_msg("%s --help: exit %d, stdout '%.200s'", tool_name[t], res.status, res.out);
        rb_run_free(&res);
    }
}

/* vitcp-conform run tries its output paths before any work, and a run
 * given up before it started leaves no file behind (a --json DIR left a
 * stray DIR.pcapng); its usage error shows run's usage, not every one. */
static void test_conform_run_outputs_checked_first(void **state)
{
    (void)state;
    char stray[600], json[600], target[64];
    snprintf(stray, sizeof stray, "%s.pcapng", tmpdir);
    snprintf(json, sizeof json, "%s/r.json", tmpdir);
    snprintf(target, sizeof target, "127.0.0.1:%s", closed_port);
    char *dir_argv[] = {(char *)CONFORM_BIN, "run", "--target", target, "--json", tmpdir, NULL};
    char *closed_argv[] = {(char *)CONFORM_BIN, "run", "--target", target, "--json", json, NULL};
    char *bogus_argv[] = {(char *)CONFORM_BIN, "run", "--bogus", NULL};
    struct rb_run res;
    rb_run(dir_argv, 20.0, &res);
    check_no_crash(&res, "run --json DIR");
    assert_int_equal(res.status, 2);
    rb_run_free(&res);
    assert_int_not_equal(access(stray, F_OK), 0);
    rb_run(closed_argv, 20.0, &res); /* the target cannot be reached: nothing written */
    check_no_crash(&res, "run against a closed port");
    assert_int_equal(res.status, 2);
    rb_run_free(&res);
    assert_int_not_equal(access(json, F_OK), 0);
    snprintf(stray, sizeof stray, "%s/r.pcapng", tmpdir);
    assert_int_not_equal(access(stray, F_OK), 0);
    rb_run(bogus_argv, 20.0, &res);
    assert_int_equal(res.status, 2);
    if (!strstr(res.err, "vitcp-conform run ") || strstr(res.err, "vitcp-conform lint ") || strstr(res.err, "vitcp-conform list "))
        fail_msg("run --bogus: the usage shown is not run's alone: '%.400s'", res.err);
    rb_run_free(&res);
}

/* vipl-pingpong --server stops on SIGTERM, cleans up and exits 0 (it died
 * with 143), both while waiting for a client and while serving one. */
static void test_pingpong_server_stops_on_sigterm(void **state)
{
    (void)state;
    char port[8];
    bind_port(port, false);
    for (int with_client = 0; with_client < 2; with_client++) {
        pid_t srv = fork();
        assert_true(srv >= 0);
        if (srv == 0) {
            int devnull = open("/dev/null", O_WRONLY);
            dup2(devnull, 1);
            dup2(devnull, 2);
            execl(PINGPONG_BIN, "vipl-pingpong", "--server", "--port", port, (char *)NULL);
            _exit(127);
        }
        pid_t cli = -1;
        wait_listening(port);
        if (with_client) { /* a client in a long bandwidth phase */
            cli = fork();
            assert_true(cli >= 0);
            if (cli == 0) {
                int devnull = open("/dev/null", O_WRONLY);
                dup2(devnull, 1);
                dup2(devnull, 2);
                execl(PINGPONG_BIN, "vipl-pingpong", "--client", "127.0.0.1", "--port", port, "--sizes", "65536",
                      "--iters", "1000000", (char *)NULL);
                _exit(127);
            }
            usleep(300 * 1000);
        }
        assert_int_equal(kill(srv, SIGTERM), 0);
        int st = 0;
        pid_t w = 0;
        for (int i = 0; i < 100 && w == 0; i++) { /* at most 10 s */
            w = waitpid(srv, &st, WNOHANG);
            if (w == 0)
                usleep(100 * 1000);
        }
        if (w == 0) {
            kill(srv, SIGKILL);
            waitpid(srv, &st, 0);
            fail_msg("vipl-pingpong --server ignored SIGTERM for 10 s (with a client: %d)", with_client);
        }
        if (cli > 0) {
            kill(cli, SIGKILL);
            waitpid(cli, NULL, 0);
        }
        if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
            fail_msg("vipl-pingpong --server on SIGTERM (with a client: %d): %s %d", with_client,
                     WIFEXITED(st) ? "exit" : "signal", WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
    }
}

/* Standard output that cannot be written (a full disk): the listing must
 * not be lost silently. */
static void test_stdout_full(void **state)
{
    (void)state;
    const char *const tools[][4] = {
        {tool_path[TRAFGEN], "--list", NULL, "vitcp-trafgen: "},
        {CONFORM_BIN, "list", NULL, "vitcp-conform: "},
        {CONFORM_BIN, "list", "--json", "vitcp-conform: "},
    };
    for (size_t i = 0; i < sizeof tools / sizeof tools[0]; i++) {
        char *argv[] = {(char *)tools[i][0], (char *)tools[i][1], (char *)tools[i][2], NULL};
        struct rb_run res;
        rb_run_out(argv, 20.0, "/dev/full", &res);
        check_no_crash(&res, tools[i][0]);
        if (res.status != 1 || strstr(res.err, tools[i][3]) == NULL)
            fail_msg("%s %s > /dev/full: exit %d, stderr '%.200s'", tools[i][0], tools[i][1], res.status, res.err);
        rb_run_free(&res);
    }
    char *av[] = {(char *)PEER_BIN, (char *)"--list-faults", NULL};
    struct rb_run res;
    rb_run_out(av, 20.0, "/dev/full", &res);
    check_no_crash(&res, PEER_BIN);
    if (res.status != 1 || strstr(res.err, "vipl-peer: writing standard output failed: No space left on device") != res.err)
        fail_msg("vipl-peer --list-faults > /dev/full: exit %d, stderr '%.200s'", res.status, res.err);
    rb_run_free(&res);
}

/* vipl-pingpong's table and CSV to a full disk, against a live server: the
 * measurements must not be lost silently. */
static void test_pingpong_stdout_full(void **state)
{
    (void)state;
    for (int csv = 0; csv < 2; csv++) {
        char port[8];
        bind_port(port, false);
        pid_t srv = fork();
        assert_true(srv >= 0);
        if (srv == 0) {
            int fd = open("/dev/null", O_WRONLY);
            dup2(fd, 1);
            execl(PINGPONG_BIN, PINGPONG_BIN, "--server", "--port", port, "--once", (char *)NULL);
            _exit(127);
        }
        /* listening once the port can no longer be bound */
        struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(port))};
        int up = 0;
        for (int k = 0; k < 500 && !up; k++) {
            int fd = socket(AF_INET, SOCK_STREAM, 0);
            up = bind(fd, (struct sockaddr *)&a, sizeof a) != 0;
            close(fd);
            if (!up)
                usleep(10000);
        }
        char *av[] = {(char *)PINGPONG_BIN, (char *)"--client", (char *)"127.0.0.1", (char *)"--port", port,
                      (char *)"--sizes", (char *)"4,64", (char *)"--iters", (char *)"3",
                      csv ? (char *)"--csv" : NULL, NULL};
        struct rb_run res;
        rb_run_out(av, 30.0, "/dev/full", &res);
        kill(srv, SIGTERM);
        waitpid(srv, NULL, 0);
        check_no_crash(&res, PINGPONG_BIN);
        if (!up || res.status != 1 || strstr(res.err, "vipl-pingpong: writing standard output failed: No space left on device") != res.err)
            fail_msg("vipl-pingpong --client%s > /dev/full: server up %d, exit %d, stderr '%.200s'",
                     csv ? " --csv" : "", up, res.status, res.err);
        rb_run_free(&res);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_help),
        cmocka_unit_test(test_bad_arguments),
        cmocka_unit_test(test_stdout_full),
        cmocka_unit_test(test_pingpong_stdout_full),
        cmocka_unit_test(test_pingpong_server_stops_on_sigterm),
        cmocka_unit_test(test_conform_run_outputs_checked_first),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
