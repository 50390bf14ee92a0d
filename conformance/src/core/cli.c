/* vitcp-conform: list | run | lint (see `vitcp-conform --help`). */
#include "conform/cli.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "conform/protocol.h"
#include "conform/cases_dir.h"
#include "conform/case.h"
#include "conform/coverage.h"
#include "conform/engine.h"
#include "conform/core.h"
#include "conform/lint.h"
#include "conform/report.h"
#include "conform/topology.h"
#include "vitcp/pcap_writer.h"

/* The usage, one text per subcommand (without the leading "usage: " or its
 * indent, which print_usage adds): `SUB --help` prints its own, `--help`
 * all of them, so nothing is said twice. */
static const char usage_list[] =
    "vitcp-conform list [--json] [--protocol PREFIX] [--level LEVEL] [--cases DIR]\n"
    "  --protocol keeps the requirements whose ID starts with PREFIX- (one of the catalog's).\n";
static const char usage_run_core[] =
    "vitcp-conform run [--target HOST:PORT] [--listen PORT [--connect-cmd CMD]]\n"
    "                         [--protocol NAME] [--cases DIR] [--only SEL]... [--skip SEL]...\n"
    "                         [--json FILE] [--junit FILE] [--capture FILE]\n"
    "                         [--slack MS] [--no-survival] [--region ADDR:HANDLE:LEN]\n"
    "                         [--no-relay | --relay-all] [--no-capture] [--quiet]\n"
    "                         [--link N=[ADDR:]PORT[,HOST:PORT]|N=eth:IF[,MAC]]...\n"
    "                         [--topology end|router|chain --node-cmd CMD...\n"
    "                         [--node-ready REGEX] [--node-wait SEC] [--node-log FILE]]\n"
    "                         [--offers HOOK,-HOOK,...|none] [--impair PROFILE]\n"
    "                         [the protocol's options, below]\n"
    "  --target runs the active cases (the tester connects); --listen the passive ones (role passive:\n"
    "  the implementation connects; CMD is started for each case, {host} and {port} replaced by where to).\n"
    "  Packet-level cases (loss, retransmission, urgent pointers) run through a packet relay from a\n"
    "  network namespace of the tester's (root, a target on this host listening on all addresses);\n"
    "  --no-relay skips them; --relay-all runs every case through the relay (passive ones need {host} in\n"
    "  CMD), so the capture holds the real packets and the lint's rules judge every segment the\n"
    "  implementation sent. A capture FILE.pcapng gets comments on the packets the relay acted on.\n"
    "  Without --capture, a run that writes --json or\n"
    "  --junit to a file records its capture beside it (r.json -> r.pcapng) unless --no-capture.\n"
    "  SEL is a case id, a requirement ID (a trailing * matches a prefix) or a draft section.\n"
    "  --protocol runs that protocol's cases only (default: the first below; a case names its protocol\n"
    "  with a 'protocol NAME' line, the default's when it has none; other protocols' cases are in\n"
    "  DIR/NAME/).\n"
    "  --offers declares the test conventions the target offers (an echo, a read-back...: no rules of\n"
    "  the draft, what the tester needs to observe one; -HOOK: not offered, none: none but those named);\n"
    "  without it a probe case finds out. A case needing a convention the target does not offer is\n"
    "  not applicable, with the reason; a probe of a declared one fails the run if it fails.\n"
    "  --impair runs every case through the packet relay, which impairs the network (root): PROFILE is\n"
    "  lossy, reordering, jittery, tiny-segments, or loss=N%,dup=N%,reorder=N%,delay=A-Bms,resegment=A-B,\n"
    "  seed=N (TCP protocols). Seeded per case: the report and the capture's comments say what was done.\n"
    "  Datagram protocols send from tester links: link 0 to --target, bound where --link 0=[ADDR:]PORT\n"
    "  says (else any port); --link 1=[ADDR:]PORT[,HOST:PORT] is the far side of a router under test\n"
    "  (cases with 'links 2' need it); --link N=eth:IF[,MAC] is raw Ethernet on IF (root), --link\n"
    "  0=eth:IF instead of --target.\n"
    "  --topology (a datagram protocol with an Ethertype) makes the network itself (root): the node(s)\n"
    "  under test each in a network namespace of its own, veth pairs to the tester's links (router:\n"
    "  links 0 and 1; chain: two routers in a row), removed at the end. CMD starts a node (a chain: two\n"
    "  --node-cmd, in order), {if0} {if1} replaced by its interfaces, {mac0} {mac1} by their MACs,\n"
    "  {peer0} {peer1} by the MACs at their other ends; it is ready when a line of its output matches\n"
    "  REGEX (within SEC seconds, default 10), or after 0.5 s without --node-ready. Its output goes to\n"
    "  FILE ({n}: the node's number). Where no namespace can be made, every case is skipped with the\n"
    "  reason.\n";
static char usage_run[8192];

/* run's usage: the core's options (usage_run_core), then "NAME (TITLE, the
 * default): OPTIONS" and the lines of each protocol module. */
static void build_usage_run(void)
{
    size_t o = 0, n = sizeof usage_run;
    o += (size_t)snprintf(usage_run, n, "%s  The protocols (--protocol NAME) and their options:\n", usage_run_core);
    for (const struct conform_protocol *const *p = cf_protocols; *p && o < n; p++) {
        o += (size_t)snprintf(usage_run + o, n - o, "  %s (%s%s)%s%s\n", (*p)->name, (*p)->title,
                              *p == cf_protocol_default() ? ", the default" : "", (*p)->run_usage ? ": " : "",
                              (*p)->run_usage ? (*p)->run_usage : "");
        /* its lines, indented under it */
        for (const char *line = (*p)->run_help; line && *line && o < n; line += strcspn(line, "\n") + 1)
            o += (size_t)snprintf(usage_run + o, n - o, "  %.*s\n", (int)strcspn(line, "\n"), line);
    }
}

/* lint's usage: its options and help come from the lint modules (build_usage_lint). */
static char usage_lint[2048];
static const char usage_show[] =
    "vitcp-conform show NAME.meta      (the steps a capture case compiles to)\n";
static const char usage_help[] =
    "vitcp-conform [SUBCOMMAND] --help | -h      (also: vitcp-conform help [SUBCOMMAND])\n";
static const char usage_exit_status[] =
    "Exit status: 0 every MUST passed (lint: no error), 1 a MUST failed, 2 usage or input error.\n";

/* The parts in the order of the whole usage; NULL ends the list. */
static const char *const usage_whole[] = {usage_list, usage_run, usage_lint, usage_show, usage_help, NULL};

/* "usage: " before the first part, its width of spaces before the others
 * (the parts' continuation lines are aligned for that), then the exit status. */
static void print_usage(FILE *f, const char *const *parts)
{
    for (size_t i = 0; parts[i]; i++) {
        fputs(i == 0 ? "usage: " : "       ", f);
        fputs(parts[i], f);
    }
    fputs(usage_exit_status, f);
}

/* lint's usage from the lint modules, in the report's order: the default
 * protocol's first. */
static void build_usage_lint(void)
{
    if (usage_lint[0])
        return;
    const struct cf_lint_module *first = cf_lint_module_default();
    size_t o = 0, n = sizeof usage_lint;
    o += (size_t)snprintf(usage_lint + o, n - o, "vitcp-conform lint [--json]");
    for (int pass = 0; pass < 2; pass++)
        for (unsigned i = 0; cf_lint_modules[i] && o < n; i++)
            if ((cf_lint_modules[i] == first) == (pass == 0)) {
                const struct cf_lint_module *m = cf_lint_modules[i];
                if (m->port_option)
                    o += (size_t)snprintf(usage_lint + o, n - o, " [%s N]", m->port_option);
                if (m->usage && o < n)
                    o += (size_t)snprintf(usage_lint + o, n - o, " %s", m->usage);
            }
    if (o < n)
        o += (size_t)snprintf(usage_lint + o, n - o,
                              "\n                   FILE.pcap[ng]\n"
                              "  lint checks the capture's traffic of each protocol by the wire library's rules. A\n"
                              "  TCP connection is the protocol's whose port it uses (the listening side's first),\n"
                              "  else whose first bytes it looks like:\n");
    for (int pass = 0; pass < 2; pass++)
        for (unsigned i = 0; cf_lint_modules[i] && o < n; i++)
            if ((cf_lint_modules[i] == first) == (pass == 0) && cf_lint_modules[i]->help)
                o += (size_t)snprintf(usage_lint + o, n - o, "%s", cf_lint_modules[i]->help);
}

/* What usage_error prints after its message: the running subcommand's own
 * usage once cf_main knows it, else the whole usage. */
static const char *subcommand_usage[2];
static const char *const *error_usage = usage_whole;

static int usage_error(FILE *err, const char *fmt, const char *arg)
{
    fputs("vitcp-conform: ", err);
    fprintf(err, fmt, arg);
    fputs("\n", err);
    print_usage(err, error_usage);
    return CF_EXIT_USAGE;
}

/* Value of an option that takes one, or NULL (with the error printed). */
static const char *need_value(int argc, char **argv, int *i, FILE *err)
{
    if (*i + 1 >= argc) {
        usage_error(err, "option %s needs a value", argv[*i]);
        return NULL;
    }
    return argv[++*i];
}

static bool parse_uint(const char *s, unsigned long max, unsigned long *out)
{
    char *end;
    if (!*s || *s == '-')
        return false;
    unsigned long v = strtoul(s, &end, 10);
    if (*end || v > max)
        return false;
    *out = v;
    return true;
}

/* run's output files (JSON, JUnit, capture), all opened before any work so
 * that a bad path (a directory, a folder that cannot be written) fails the
 * command line, not a finished run; a run given up before it started
 * removes what it created (run_outputs_abandon, also after a failed open). */
struct run_outputs {
    const char *path[2]; /* JSON, JUnit */
    FILE *file[2];
    const char *capture;
    struct vn_pcap_writer *writer;
};

static void run_outputs_abandon(struct run_outputs *o)
{
    for (int k = 0; k < 2; k++)
        if (o->file[k] && o->file[k] != stdout) {
            fclose(o->file[k]);
            unlink(o->path[k]);
        }
    if (o->writer) {
        vn_pcap_close(o->writer);
        unlink(o->capture);
    }
}

static int run_outputs_open(struct run_outputs *o, FILE *err)
{
    for (int k = 0; k < 2; k++) {
        if (!o->path[k])
            continue;
        o->file[k] = strcmp(o->path[k], "-") == 0 ? stdout : fopen(o->path[k], "w");
        if (!o->file[k]) {
            fprintf(err, "vitcp-conform: cannot write %s: %s\n", o->path[k], strerror(errno));
            return -1;
        }
    }
    if (o->capture) {
        char msg[512];
        o->writer = vn_capture_open(o->capture, vn_capture_format_for(o->capture),
                                    "vitcp-conform run: the tester's and the target's segments, case by case", msg,
                                    sizeof msg);
        if (!o->writer) {
            fprintf(err, "vitcp-conform: %s\n", msg);
            return -1;
        }
    }
    return 0;
}

/* The capture's path beside the first report written to a file: the
 * report's name without its extension, plus ".pcapng". false when both
 * go to stdout (or neither is asked for). */
static bool beside_reports(const char *json, const char *junit, char *out, size_t n)
{
    const char *report = json && strcmp(json, "-") != 0 ? json : junit && strcmp(junit, "-") != 0 ? junit : NULL;
    if (!report)
        return false;
    const char *slash = strrchr(report, '/');
    const char *dot = strrchr(report, '.');
    size_t stem = dot && dot > (slash ? slash + 1 : report) ? (size_t)(dot - report) : strlen(report);
    int w = snprintf(out, n, "%.*s.pcapng", (int)stem, report);
    return w > 0 && (size_t)w < n;
}

static int cmd_list(int argc, char **argv, FILE *out, FILE *err)
{
    bool json = false;
    const char *cases_dir = cf_default_cases_dir();
    struct cf_list_filter f = {NULL, -1};
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i], *v;
        if (strcmp(a, "--json") == 0) {
            json = true;
        } else if (strcmp(a, "--protocol") == 0) {
            if (!(v = need_value(argc, argv, &i, err)))
                return CF_EXIT_USAGE;
            char known[128], msg[300];
            if (!cf_req_protocol_known(v, known, sizeof known)) {
                snprintf(msg, sizeof msg, "unknown protocol '%s' (%s)", v, known);
                return usage_error(err, "%s", msg);
            }
            f.protocol = v;
        } else if (strcmp(a, "--level") == 0) {
            if (!(v = need_value(argc, argv, &i, err)))
                return CF_EXIT_USAGE;
            f.level = cf_level_parse(v);
            if (f.level < 0)
                return usage_error(err, "unknown level '%s' (MUST, MUST_NOT, SHOULD, SHOULD_NOT, MAY, IMPLIED, DECISION)", v);
        } else if (strcmp(a, "--cases") == 0) {
            if (!(cases_dir = need_value(argc, argv, &i, err)))
                return CF_EXIT_USAGE;
        } else {
            return usage_error(err, "unknown argument '%s' for list", a);
        }
    }
    struct cf_case_set set = {0};
    char msg[512];
    if (cf_case_set_load_dir(cases_dir, &set, msg, sizeof msg) < 0) {
        fprintf(err, "vitcp-conform: %s\n", msg);
        return CF_EXIT_USAGE;
    }
    (json ? cf_list_write_json : cf_list_write_text)(out, &set, &f);
    cf_case_set_free(&set);
    return CF_EXIT_OK;
}

#define MAX_SELECTORS 64

static int cmd_run(int argc, char **argv, FILE *out, FILE *err)
{
    struct cf_engine e;
    cf_engine_init(&e);
    const char *cases_dir = cf_default_cases_dir(), *json = NULL, *junit = NULL, *capture = NULL, *listen_port = NULL;
    const char *only[MAX_SELECTORS + 1] = {0}, *skip[MAX_SELECTORS + 1] = {0};
    size_t nonly = 0, nskip = 0;
    bool have_target = false, quiet = false, no_capture = false, have_topology = false, have_link = false;
    struct cf_topology_spec topo = {0};
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i], *v;
        if (strcmp(a, "--quiet") == 0) { quiet = true; continue; }
        if (strcmp(a, "--no-survival") == 0) { e.check_survival = false; continue; }
        if (strcmp(a, "--no-relay") == 0) { e.use_relay = false; continue; }
        if (strcmp(a, "--relay-all") == 0) { e.relay_all = true; continue; }
        if (strcmp(a, "--no-capture") == 0) { no_capture = true; continue; }
        if (strncmp(a, "--", 2) != 0)
            return usage_error(err, "unexpected argument '%s' for run", a);
        static const char *const with_value[] = {"--target", "--cases", "--only", "--skip", "--json",
                                                  "--junit", "--capture", "--slack",
                                                  "--listen", "--connect-cmd", "--region", "--protocol",
                                                  "--link", "--topology", "--node-cmd", "--node-ready",
                                                  "--node-wait", "--node-log", "--offers", "--impair"};
        bool known = false;
        for (size_t k = 0; k < sizeof with_value / sizeof *with_value; k++)
            known |= strcmp(a, with_value[k]) == 0;
        if (!known) {
            /* a protocol module's option (its run_options) */
            bool takes_value = false;
            char why[200] = "";
            int taken = cf_engine_set_option(&e, a, NULL, &takes_value, why, sizeof why);
            if (taken == 0)
                return usage_error(err, "unknown option '%s' for run", a);
            if (taken > 0 && takes_value) {
                if (!(v = need_value(argc, argv, &i, err)))
                    return CF_EXIT_USAGE;
                taken = cf_engine_set_option(&e, a, v, NULL, why, sizeof why);
            }
            if (taken < 0)
                return usage_error(err, "%s", why);
            continue;
        }
        if (!(v = need_value(argc, argv, &i, err)))
            return CF_EXIT_USAGE;
        if (strcmp(a, "--target") == 0) {
            if (cf_engine_set_target(&e, v) < 0)
                return usage_error(err, "bad --target '%s' (HOST:PORT, [IPv6]:PORT)", v);
            have_target = true;
        } else if (strcmp(a, "--protocol") == 0) {
            const struct conform_protocol *pr = cf_protocol_find(v);
            if (!pr) {
                char msg[300];
                snprintf(msg, sizeof msg, "unknown --protocol '%s' (%s)", v, cf_protocol_names());
                return usage_error(err, "%s", msg);
            }
            e.protocol = pr;
        } else if (strcmp(a, "--link") == 0) {
            char why[200];
            if (cf_engine_set_link(&e, v, why, sizeof why) < 0)
                return usage_error(err, "%s", why);
            have_target |= e.have_target; /* --link 0=eth:IF: the target is on that interface */
            have_link = true;
        } else if (strcmp(a, "--topology") == 0) {
            if (cf_topology_kind_parse(v, &topo.kind) < 0)
                return usage_error(err, "unknown --topology '%s' (end, router, chain)", v);
            have_topology = true;
        } else if (strcmp(a, "--node-cmd") == 0) {
            if (topo.ncmd == CF_TOPO_NODES_MAX)
                return usage_error(err, "too many --node-cmd (a chain has two nodes)%s", "");
            topo.node_cmd[topo.ncmd++] = v;
        } else if (strcmp(a, "--node-ready") == 0) topo.ready_regex = v;
        else if (strcmp(a, "--node-log") == 0) topo.log_path = v;
        else if (strcmp(a, "--node-wait") == 0) {
            unsigned long sec;
            if (!parse_uint(v, 600, &sec) || sec == 0)
                return usage_error(err, "bad --node-wait '%s' (seconds, 1..600)", v);
            topo.wait_ms = (unsigned)sec * 1000u;
        } else if (strcmp(a, "--impair") == 0) {
            char why[300];
            if (cf_impair_parse(v, &e.impair, why, sizeof why) < 0)
                return usage_error(err, "%s", why);
        } else if (strcmp(a, "--offers") == 0) {
            char why[200];
            if (cf_engine_set_offers(&e, v, why, sizeof why) < 0)
                return usage_error(err, "%s", why);
        } else if (strcmp(a, "--cases") == 0) cases_dir = v;
        else if (strcmp(a, "--json") == 0) json = v;
        else if (strcmp(a, "--junit") == 0) junit = v;
        else if (strcmp(a, "--capture") == 0) capture = v;
        else if (strcmp(a, "--listen") == 0) {
            unsigned long p;
            if (!parse_uint(v, 65535, &p))
                return usage_error(err, "bad --listen '%s' (a port, 0 for any)", v);
            listen_port = v;
        } else if (strcmp(a, "--connect-cmd") == 0) {
            if (strlen(v) >= sizeof e.connect_cmd)
                return usage_error(err, "--connect-cmd '%s' is too long", v);
            snprintf(e.connect_cmd, sizeof e.connect_cmd, "%s", v);
        } else if (strcmp(a, "--region") == 0) {
            unsigned long long addr;
            unsigned long handle, len;
            char tail;
            if (sscanf(v, "%llx:%lx:%lu%c", &addr, &handle, &len, &tail) != 3 || handle > 0xFFFFFFFFul ||
                len == 0 || len > 0xFFFFFFFFul)
                return usage_error(err, "bad --region '%s' (ADDR:HANDLE:LEN, address and handle in hex)", v);
            e.region_set = true;
            e.region_addr = addr;
            e.region_handle = (uint32_t)handle;
            e.region_len = (uint32_t)len;
        }
        else if (strcmp(a, "--slack") == 0) {
            unsigned long ms;
            if (!parse_uint(v, 600000, &ms) || ms == 0)
                return usage_error(err, "bad --slack '%s' (milliseconds, 1..600000)", v);
            e.slack_ms = (unsigned)ms;
        } else if (strcmp(a, "--only") == 0 || strcmp(a, "--skip") == 0) {
            bool is_only = a[2] == 'o';
            if ((is_only ? nonly : nskip) == MAX_SELECTORS)
                return usage_error(err, "too many %s selectors", a);
            if (is_only) only[nonly++] = v;
            else skip[nskip++] = v;
        }
    }
    if (have_topology) {
        /* the tester makes the links itself (C54) */
        if (have_target || have_link || listen_port)
            return usage_error(err, "--topology makes the tester's links itself: no --target, --link or --listen%s",
                               "");
        if (e.protocol->transport != CF_TRANSPORT_DATAGRAM || !e.protocol->ethertype)
            return usage_error(err, "--topology: protocol %s has no Ethernet links", e.protocol->name);
        const char *flag = e.protocol->topology_options[topo.kind];
        char why[200] = "";
        if (flag && cf_engine_set_option(&e, flag, NULL, NULL, why, sizeof why) < 0)
            return usage_error(err, "%s", why);
        have_target = e.have_target = true; /* on the links the topology makes */
    } else if (topo.ncmd || topo.ready_regex || topo.log_path || topo.wait_ms) {
        return usage_error(err, "--node-cmd, --node-ready, --node-wait and --node-log need --topology%s", "");
    }
    if (!have_target && !listen_port)
        return usage_error(err, "run needs --target HOST:PORT or --listen PORT%s", "");
    {
        char why[400];
        if (cf_engine_check_offers(&e, why, sizeof why) < 0)
            return usage_error(err, "%s", why);
    }
    if (capture && no_capture)
        return usage_error(err, "--capture and --no-capture contradict each other%s", "");
    /* The evidence goes beside the reports: r.json -> r.pcapng. */
    char beside[sizeof ((struct cf_report *)0)->capture];
    if (!capture && !no_capture && beside_reports(json, junit, beside, sizeof beside))
        capture = beside;
    if (e.relay_all && !e.use_relay)
        return usage_error(err, "--relay-all and --no-relay contradict each other%s", "");
    if (e.impair.on) {
        /* C61: every case on real packets through the relay, which impairs them */
        if (!e.use_relay)
            return usage_error(err, "--impair and --no-relay contradict each other%s", "");
        /* datagram links: the tester impairs its own links (core/runner.c) */
        if (e.protocol->transport != CF_TRANSPORT_DATAGRAM)
            e.relay_all = true;
    }
    if (e.connect_cmd[0] && !listen_port)
        return usage_error(err, "--connect-cmd needs --listen%s", "");

    struct cf_case_set set = {0};
    char msg[512];
    if (cf_case_set_load_dir(cases_dir, &set, msg, sizeof msg) < 0) {
        fprintf(err, "vitcp-conform: %s\n", msg);
        return CF_EXIT_USAGE;
    }
    /* From here a run given up frees what it has (abandon below). */
    int rc = CF_EXIT_USAGE;
    struct run_outputs outs = {.path = {json, junit}, .capture = capture};
    struct cf_topology *net = NULL;
    /* A protocol without cases here is a wrong folder, not a clean run. */
    size_t of_protocol = 0;
    for (size_t c = 0; c < set.count; c++)
        of_protocol += set.cases[c].proto == e.protocol;
    if (!of_protocol) {
        if (e.protocol->cases_subdir[0])
            fprintf(err, "vitcp-conform: no %s cases in %s (they belong in its subfolder %s/%s/)\n",
                    e.protocol->name, cases_dir, cases_dir, e.protocol->cases_subdir);
        else
            fprintf(err, "vitcp-conform: no %s cases in %s\n", e.protocol->name, cases_dir);
        goto abandon;
    }
    /* Selectors that match nothing (of the protocol's cases) are most
     * likely typos. */
    for (size_t k = 0; k < nonly + nskip; k++) {
        const char *sel = k < nonly ? only[k] : skip[k - nonly];
        bool hit = false;
        for (size_t c = 0; c < set.count && !hit; c++)
            hit = set.cases[c].proto == e.protocol && cf_case_matches(&set.cases[c], sel);
        if (!hit) {
            usage_error(err, "selector '%s' matches no case", sel);
            goto abandon;
        }
    }
    if (run_outputs_open(&outs, err) < 0)
        goto abandon;
    if (have_topology) {
        bool env_failed = false;
        char why[sizeof e.skip_all - 40];
        net = cf_topology_open(&topo, &e, &env_failed, why, sizeof why);
        if (!net && env_failed) {
            /* no namespaces here: every case is skipped, with the reason */
            snprintf(e.skip_all, sizeof e.skip_all, "--topology %s: %s", cf_topology_kind_name(topo.kind), why);
            fprintf(err, "vitcp-conform: %s\n", e.skip_all);
        } else if (!net) {
            fprintf(err, "vitcp-conform: --topology %s: %s\n", cf_topology_kind_name(topo.kind), why);
            goto abandon;
        }
    }
    if ((have_target && !e.skip_all[0] && cf_engine_probe(&e, msg, sizeof msg) < 0) ||
        (listen_port && cf_engine_listen(&e, listen_port, msg, sizeof msg) < 0)) {
        fprintf(err, "vitcp-conform: %s\n", msg);
        goto abandon;
    }
    e.capture = outs.writer;
    struct cf_report rep;
    cf_report_init(&rep);
    if (capture)
        snprintf(rep.capture, sizeof rep.capture, "%s", capture);
    snprintf(rep.protocol, sizeof rep.protocol, "%s", e.protocol->name);
    if (e.impair.on)
        snprintf(rep.impair, sizeof rep.impair, "%s", e.impair.text);
    cf_engine_run_suite(&e, &set, only, skip, &rep, quiet ? NULL : err);
    cf_topology_close(net); /* the nodes end before the reports are written */
    if (have_topology)
        snprintf(rep.target, sizeof rep.target, "topology %s", cf_topology_kind_name(topo.kind));
    if (outs.writer && vn_pcap_close(outs.writer) < 0)
        fprintf(err, "vitcp-conform: writing %s failed\n", capture);
    (quiet ? cf_report_write_closing : cf_report_write_text)(out, &rep);
    rc = cf_report_exit_code(&rep);
    for (int k = 0; k < 2; k++) {
        FILE *f = outs.file[k];
        if (!f)
            continue;
        (k == 0 ? cf_report_write_json : cf_report_write_junit)(f, &rep);
        if (f != stdout && fclose(f) != 0) {
            fprintf(err, "vitcp-conform: writing %s failed\n", outs.path[k]);
            rc = CF_EXIT_USAGE;
        }
    }
    cf_report_free(&rep);
    cf_case_set_free(&set);
    cf_engine_close(&e);
    return rc;
abandon:
    run_outputs_abandon(&outs);
    cf_case_set_free(&set);
    cf_engine_close(&e);
    cf_topology_close(net);
    return rc;
}

static int cmd_lint(int argc, char **argv, FILE *out, FILE *err)
{
    bool json = false;
    const char *file = NULL;
    struct cf_lint_options o;
    cf_lint_options_init(&o);
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i], *v = NULL;
        bool takes_value = false;
        if (strcmp(a, "--json") == 0) {
            json = true;
        } else if (cf_lint_set_option(&o, a, NULL, &takes_value, NULL, 0) > 0) {
            /* a lint module's option (its ports, its settings) */
            if (takes_value && !(v = need_value(argc, argv, &i, err)))
                return CF_EXIT_USAGE;
            char why[200];
            if (cf_lint_set_option(&o, a, v, NULL, why, sizeof why) < 0)
                return usage_error(err, "%s", why);
        } else if (a[0] == '-' && a[1]) {
            return usage_error(err, "unknown option '%s' for lint", a);
        } else if (file) {
            return usage_error(err, "lint takes one capture file (got a second: '%s')", a);
        } else {
            file = a;
        }
    }
    if (!file)
        return usage_error(err, "lint needs a capture file%s", "");
    struct cf_lint_result res;
    char msg[512];
    int rc = cf_lint_file(file, &o, &res, msg, sizeof msg);
    if (rc < 0 && res.frames == 0) {
        fprintf(err, "vitcp-conform: %s\n", msg);
        cf_lint_result_free(&res);
        return CF_EXIT_USAGE;
    }
    (json ? cf_lint_write_json : cf_lint_write_text)(out, file, &res);
    if (rc < 0)
        fprintf(err, "vitcp-conform: %s (frames before the damage were checked)\n", msg);
    int code = rc < 0 ? CF_EXIT_USAGE : res.errors ? CF_EXIT_FAIL : CF_EXIT_OK;
    cf_lint_result_free(&res);
    return code;
}

static int cmd_show(int argc, char **argv, FILE *out, FILE *err)
{
    if (argc != 3 || argv[2][0] == '-')
        return usage_error(err, "show takes one capture case (NAME.meta)%s", "");
    /* the module whose cases folder holds the meta (cases/NAME/X.meta:
     * NAME's), else the first with capture cases it describes */
    const struct conform_protocol *pr = NULL;
    const char *slash = strrchr(argv[2], '/');
    if (slash) {
        const char *dir = slash;
        while (dir > argv[2] && dir[-1] != '/')
            dir--;
        for (const struct conform_protocol *const *p = cf_protocols; *p && !pr; p++)
            if ((*p)->load_capture_case && (*p)->cases_subdir &&
                (*p)->cases_subdir[0] && strlen((*p)->cases_subdir) == (size_t)(slash - dir) &&
                strncmp(dir, (*p)->cases_subdir, (size_t)(slash - dir)) == 0)
                pr = *p;
    }
    for (const struct conform_protocol *const *p = cf_protocols; *p && !pr; p++)
        if ((*p)->load_capture_case)
            pr = *p;
    if (!pr) {
        fputs("vitcp-conform: no protocol has capture cases\n", err);
        return CF_EXIT_USAGE;
    }
    struct cf_case *c = malloc(sizeof *c);
    if (!c) {
        fputs("vitcp-conform: out of memory\n", err);
        return CF_EXIT_USAGE;
    }
    char msg[512];
    if (pr->load_capture_case(argv[2], c, msg, sizeof msg) < 0) {
        fprintf(err, "vitcp-conform: %s\n", msg);
        free(c);
        return CF_EXIT_USAGE;
    }
    cf_case_describe(out, c, pr->capture_send_note);
    cf_case_free(c);
    free(c);
    return CF_EXIT_OK;
}

static const struct subcommand {
    const char *name;
    const char *usage;
    int (*run)(int argc, char **argv, FILE *out, FILE *err);
} subcommands[] = {
    {"list", usage_list, cmd_list},
    {"run", usage_run, cmd_run},
    {"lint", usage_lint, cmd_lint},
    {"show", usage_show, cmd_show},
};

static const struct subcommand *find_subcommand(const char *name)
{
    for (size_t i = 0; i < sizeof subcommands / sizeof *subcommands; i++)
        if (strcmp(subcommands[i].name, name) == 0)
            return &subcommands[i];
    return NULL;
}

static bool is_help(const char *arg)
{
    return strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0;
}

/* One subcommand's usage (and the exit status) on out. */
static int print_subcommand_usage(const struct subcommand *sub, FILE *out)
{
    const char *const parts[] = {sub->usage, NULL};
    print_usage(out, parts);
    return CF_EXIT_OK;
}

int cf_main(int argc, char **argv, FILE *out, FILE *err)
{
    if (!usage_run[0])
        build_usage_run();
    build_usage_lint();
    if (argc < 2)
        return usage_error(err, "missing command (list, run, lint or show)%s", "");
    const char *cmd = argv[1];
    if (is_help(cmd) || strcmp(cmd, "help") == 0) {
        /* `help run` and `--help run` are `run --help`. */
        if (argc >= 3) {
            const struct subcommand *sub = find_subcommand(argv[2]);
            if (!sub)
                return usage_error(err, "no help for unknown command '%s' (list, run, lint or show)", argv[2]);
            return print_subcommand_usage(sub, out);
        }
        print_usage(out, usage_whole);
        return CF_EXIT_OK;
    }
    const struct subcommand *sub = find_subcommand(cmd);
    if (!sub)
        return usage_error(err, "unknown command '%s' (list, run, lint or show)", cmd);
    /* --help anywhere among a subcommand's arguments wins over the others,
     * so that `run --target X --help` explains rather than runs. */
    for (int i = 2; i < argc; i++)
        if (is_help(argv[i]))
            return print_subcommand_usage(sub, out);
    subcommand_usage[0] = sub->usage;
    error_usage = subcommand_usage;
    int rc = sub->run(argc, argv, out, err);
    error_usage = usage_whole;
    return rc;
}
