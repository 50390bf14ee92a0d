/* The vitcp-trafgen command line. */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "internal.h"
#include "vitcp/pcap_writer.h"

static const char usage_text[] =
    "Usage: vitcp-trafgen [OPTIONS] SCENARIO (-w FILE | --connect HOST:PORT | -i IFACE)\n"
    "       vitcp-trafgen [OPTIONS] -f SCENARIO-FILE (-w FILE | --connect HOST:PORT | -i IFACE)\n"
    "       vitcp-trafgen --list | --list-mutations | --list-cases SCENARIO\n"
    "\n"
    "Generate VI/TCP, IFT, PacketWay EEP and WARP traffic, valid or broken on\n"
    "purpose, reproducibly. Every PDU is built by the vitcp wire library.\n"
    "\n"
    "Output (exactly one):\n"
    "  -w, --write FILE        write a capture (and FILE.meta: seed, mutation, replay command);\n"
    "                          pcapng if FILE ends in .pcapng or with --pcapng, else pcap\n"
    "      --connect HOST:PORT send the client's bytes over a real TCP connection\n"
    "  -i, --interface IFACE   inject whole Ethernet frames with libnet (needs CAP_NET_RAW)\n"
    "\n"
    "Scenario file (VI/TCP, one step per line, # comments):\n"
    "  -f, --scenario-file F   connect [crc] [rdma-write] [rdma-read] [dfc]\n"
    "                          send|write c2s|s2c BYTES [imm]; read c2s|s2c BYTES;\n"
    "                          nop c2s|s2c; close\n"
    "\n"
    "Mutations (each named by the catalog requirement it breaks):\n"
    "  -b, --break ID          break rule ID in one PDU (e.g. VITCP-3.6-CRC-VALID)\n"
    "  -t, --target N|all      which eligible PDU to break (0-based; default: chosen from the seed)\n"
    "  -c, --case N            regenerate numbered case N of the scenario (see --list-cases)\n"
    "\n"
    "Parameters:\n"
    "  -s, --seed N            PRNG seed (default 1): same seed, same bytes\n"
    "      --msg-size N        payload bytes of data messages (default 3000)\n"
    "      --seg-payload N     payload bytes per VI segment / IFT frame / WARP chunk (default 1024)\n"
    "      --count N           repeat the data phase N times (default 1)\n"
    "      --tcp-segment N     cut the byte stream into N-byte TCP segments (split or coalesce PDUs)\n"
    "      --coalesce          put consecutive PDUs of one side into one write\n"
    "      --ipv6              use IPv6 addresses (fd00::1, fd00::2)\n"
    "      --port N            TCP/UDP port (defaults: VI/TCP 5995, IFT 5996, WARP 5997, EEP 5998)\n"
    "      --client-port N     -w/-i: the client's TCP port (default 40000)\n"
    "      --eep-udp           carry PacketWay EEP over UDP instead of Ethertype 0x88B5\n"
    "      --pause-us N        live TCP: pause between writes\n"
    "      --send-timeout MS   --connect: give up connecting, or writing to a target that\n"
    "                          reads nothing, after MS milliseconds (default 10000)\n"
    "      --rate N            live outputs: at most N PDUs per second\n"
    "      --mutate-rate P     with --break: mutate each eligible PDU with probability P (0..1)\n"
    "      --flip-rate P       flip one random bit in each PDU with probability P (0..1), from the seed\n"
    "      --progress          counts on stderr once a second\n"
    "      --tcp-timestamps    -w/-i: TCP timestamp option on every segment\n"
    "      --ift-flags LIST    IFT indication flags (both sides; PH is set per phase):\n"
    "                          comma list of R,HC,PC,IH,IP,SP,SM,RM, \"none\" or a number;\n"
    "                          HC/PC also decide the frames' CRCs (default: R,HC,PC; ift-nocrc: R)\n"
    "      --pcapng            write pcapng: the run record in the section comment, a\n"
    "                          comment naming the rule on each mutated PDU's first frame\n"
    "      --no-meta           do not write FILE.meta\n"
    "  -q, --quiet             no summary line\n"
    "  -h, --help              this text\n"
    "\n"
    "Exit status: 0 done, 1 failed while generating or sending, 2 bad command line.\n";

static int usage_error(const char *fmt, const char *arg)
{
    fprintf(stderr, "vitcp-trafgen: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\nTry 'vitcp-trafgen --help'.\n");
    return 2;
}

static int parse_u64(const char *s, uint64_t max, uint64_t *out)
{
    if (s == NULL || *s == '\0' || *s == '-')
        return -1;
    errno = 0;
    char *end;
    unsigned long long v = strtoull(s, &end, 0);
    if (errno || *end != '\0' || v > max)
        return -1;
    *out = v;
    return 0;
}

/* "HC,PC,IH", "none" or a number: the indication flags other than PH. */
static int parse_ift_flags(const char *s, uint32_t *out)
{
    static const struct {
        const char *name;
        uint32_t bit;
    } names[] = {{"R", VW_IFT_FLAG_R},   {"HC", VW_IFT_FLAG_HC}, {"PC", VW_IFT_FLAG_PC},
                 {"IH", VW_IFT_FLAG_IH}, {"IP", VW_IFT_FLAG_IP}, {"SP", VW_IFT_FLAG_SP},
                 {"SM", VW_IFT_FLAG_SM}, {"RM", VW_IFT_FLAG_RM}};
    uint64_t v;
    if (s[0] >= '0' && s[0] <= '9') {
        /* the defined flags only: PH is set per phase, and reserved bits
         * are a mutation (--break), not a parameter */
        if (parse_u64(s, 0xFFFFFFFFu, &v) != 0 || (v & (VW_IFT_FLAG_PH | VW_IFT_FLAG_RESERVED)))
            return -1;
        *out = (uint32_t)v;
        return 0;
    }
    *out = 0;
    if (strcasecmp(s, "none") == 0)
        return 0;
    const char *p = s;
    while (*p) {
        size_t n = strcspn(p, ",");
        bool found = false;
        for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
            if (strlen(names[i].name) == n && strncasecmp(p, names[i].name, n) == 0) {
                *out |= names[i].bit;
                found = true;
            }
        if (!found)
            return -1;
        p += n;
        if (*p == ',' && *++p == '\0')
            return -1;
    }
    return 0;
}

static void list_scenarios(void)
{
    size_t n;
    const struct tg_scenario *s = tg_scenarios(&n);
    printf("Scenarios:\n");
    for (size_t i = 0; i < n; i++)
        printf("  %-22s %-14s %s\n", s[i].name, tg_proto_name(s[i].proto), s[i].what);
}

static void list_mutations(void)
{
    size_t n;
    const struct tg_mutation *m = tg_mutations(&n);
    printf("Mutations (--break ID):\n");
    for (size_t i = 0; i < n; i++)
        printf("  %-40s %-14s %s\n", tg_mutation_name(&m[i]), tg_proto_name(m[i].proto), m[i].what);
}

static void list_cases(const struct tg_scenario *sc, const struct tg_params *p)
{
    size_t nm, num = 0;
    const struct tg_mutation *ms = tg_mutations(&nm);
    printf("Cases of %s (--case N):\n", sc->name);
    for (size_t i = 0; i < nm; i++) {
        if (ms[i].proto != sc->proto)
            continue;
        struct tg_output *o = tg_output_null();
        struct tg_result r;
        tg_run(sc, &ms[i], TG_TARGET_ALL, p, o, &r);
        tg_output_close(o, NULL, 0);
        for (unsigned k = 0; k < r.eligible; k++)
            printf("  %5zu  %s --target %u\n", ++num, tg_mutation_name(&ms[i]), k);
    }
}

/* The run's record: seed, parameters, mutation and where it landed, and a
 * replay command. Goes to FILE.meta and, for pcapng, into the Section
 * Header Block's comment. */
struct text {
    char *b;
    size_t len, cap;
};

static void tprintf(struct text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void tprintf(struct text *t, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    size_t room = t->cap - t->len;
    int n = vsnprintf(t->b + t->len, room, fmt, ap);
    va_end(ap);
    if (n > 0)
        t->len += (size_t)n < room ? (size_t)n : room - 1;
}

static void format_meta(char *buf, size_t cap, const struct tg_scenario *sc, const char *script_path,
                        const struct tg_mutation *m, long target, size_t case_no,
                        const struct tg_params *p, const struct tg_result *r)
{
    struct text t = {buf, 0, cap};
    buf[0] = '\0';
    tprintf(&t, "generator: vitcp-trafgen\nscenario: %s\nseed: %llu\n", sc->name,
            (unsigned long long)p->seed);
    tprintf(&t, "msg-size: %zu\nseg-payload: %zu\ncount: %u\ntcp-segment: %zu\ncoalesce: %d\nipv6: %d\n",
            p->msg_size, p->seg_payload, p->count, p->tcp_segment, p->coalesce, p->ipv6);
    if (m) {
        tprintf(&t, "mutation: %s\n", tg_mutation_name(m));
        if (target == TG_TARGET_RATE)
            tprintf(&t, "mutate-rate: %.6f\n", p->mutate_ppm / 1e6);
        else
            tprintf(&t, "target: %ld\n", target);
        if (case_no)
            tprintf(&t, "case: %zu\n", case_no);
        tprintf(&t, "mutated-pdus: %u (first is PDU %ld of %u)\n", r->mutated, r->first_mutated_pdu,
                r->pdus);
    } else {
        tprintf(&t, "mutation: none\n");
    }
    if (p->flip_ppm)
        tprintf(&t, "flip-rate: %.6f\nflipped-pdus: %u (first is PDU %ld)\n", p->flip_ppm / 1e6, r->flipped,
                r->first_flipped_pdu);
    tprintf(&t, "pdus: %u\nbytes: %llu\n", r->pdus, (unsigned long long)r->bytes);
    if (script_path)
        tprintf(&t, "replay: vitcp-trafgen -f %s", script_path);
    else
        tprintf(&t, "replay: vitcp-trafgen %s", sc->name);
    tprintf(&t, " --seed %llu --msg-size %zu --seg-payload %zu --count %u", (unsigned long long)p->seed,
            p->msg_size, p->seg_payload, p->count);
    if (p->tcp_segment)
        tprintf(&t, " --tcp-segment %zu", p->tcp_segment);
    if (p->coalesce)
        tprintf(&t, " --coalesce");
    if (p->ipv6)
        tprintf(&t, " --ipv6");
    if (p->port)
        tprintf(&t, " --port %u", p->port);
    if (p->client_port)
        tprintf(&t, " --client-port %u", p->client_port);
    if (p->eep_udp)
        tprintf(&t, " --eep-udp");
    if (p->tcp_timestamps)
        tprintf(&t, " --tcp-timestamps");
    if (p->ift_flags_set)
        tprintf(&t, " --ift-flags 0x%08x", p->ift_flags);
    if (m && target == TG_TARGET_RATE)
        tprintf(&t, " --break %s --mutate-rate %.6f", tg_mutation_name(m), p->mutate_ppm / 1e6);
    else if (m && target == TG_TARGET_ALL)
        tprintf(&t, " --break %s --target all", tg_mutation_name(m));
    else if (m)
        tprintf(&t, " --break %s --target %ld", tg_mutation_name(m), target);
    if (p->flip_ppm)
        tprintf(&t, " --flip-rate %.6f", p->flip_ppm / 1e6);
    tprintf(&t, " -w FILE\n");
}

static int write_meta(const char *path, const char *text)
{
    char meta[4096];
    snprintf(meta, sizeof meta, "%s.meta", path);
    FILE *f = fopen(meta, "w");
    if (f == NULL)
        return -1;
    fputs(text, f);
    return fclose(f) == 0 ? 0 : -1;
}

static int run_cli(const struct tg_scenario *sc, struct tg_params *pp, const char *file,
                   const char *connect_to, const char *iface, const char *break_id,
                   const char *target_arg, uint64_t case_no, bool mutate_rate, bool quiet, bool meta,
                   const char *script_path, bool pcapng);

enum {
    OPT_CONNECT = 256, OPT_LIST_MUT, OPT_LIST_CASES, OPT_MSG_SIZE, OPT_SEG_PAYLOAD, OPT_COUNT,
    OPT_TCP_SEG, OPT_COALESCE, OPT_IPV6, OPT_PORT, OPT_EEP_UDP, OPT_PAUSE, OPT_SEND_TIMEOUT, OPT_NO_META,
    OPT_RATE, OPT_MUTATE_RATE, OPT_FLIP_RATE, OPT_PROGRESS, OPT_TCP_TS, OPT_PCAPNG, OPT_IFT_FLAGS, OPT_CLIENT_PORT,
};

int tg_main(int argc, char **argv)
{
    static const struct option opts[] = {
        {"write", required_argument, NULL, 'w'},
        {"scenario-file", required_argument, NULL, 'f'},
        {"connect", required_argument, NULL, OPT_CONNECT},
        {"interface", required_argument, NULL, 'i'},
        {"break", required_argument, NULL, 'b'},
        {"target", required_argument, NULL, 't'},
        {"case", required_argument, NULL, 'c'},
        {"seed", required_argument, NULL, 's'},
        {"list", no_argument, NULL, 'l'},
        {"list-mutations", no_argument, NULL, OPT_LIST_MUT},
        {"list-cases", required_argument, NULL, OPT_LIST_CASES},
        {"msg-size", required_argument, NULL, OPT_MSG_SIZE},
        {"seg-payload", required_argument, NULL, OPT_SEG_PAYLOAD},
        {"count", required_argument, NULL, OPT_COUNT},
        {"tcp-segment", required_argument, NULL, OPT_TCP_SEG},
        {"coalesce", no_argument, NULL, OPT_COALESCE},
        {"ipv6", no_argument, NULL, OPT_IPV6},
        {"port", required_argument, NULL, OPT_PORT},
        {"eep-udp", no_argument, NULL, OPT_EEP_UDP},
        {"pause-us", required_argument, NULL, OPT_PAUSE},
        {"send-timeout", required_argument, NULL, OPT_SEND_TIMEOUT},
        {"no-meta", no_argument, NULL, OPT_NO_META},
        {"rate", required_argument, NULL, OPT_RATE},
        {"mutate-rate", required_argument, NULL, OPT_MUTATE_RATE},
        {"flip-rate", required_argument, NULL, OPT_FLIP_RATE},
        {"progress", no_argument, NULL, OPT_PROGRESS},
        {"tcp-timestamps", no_argument, NULL, OPT_TCP_TS},
        {"pcapng", no_argument, NULL, OPT_PCAPNG},
        {"client-port", required_argument, NULL, OPT_CLIENT_PORT},
        {"ift-flags", required_argument, NULL, OPT_IFT_FLAGS},
        {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    struct tg_params p;
    tg_params_default(&p);
    const char *file = NULL, *connect_to = NULL, *iface = NULL, *break_id = NULL;
    const char *target_arg = NULL, *list_cases_of = NULL, *script_path = NULL;
    uint64_t case_no = 0, v;
    bool do_list = false, do_list_mut = false, quiet = false, meta = true, mutate_rate = false;
    bool pcapng = false;
    optind = 0; /* callable more than once (tests) */
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":w:f:i:b:t:c:s:lqh", opts, NULL)) != -1) {
        switch (c) {
        case 'w': file = optarg; break;
        case 'f': script_path = optarg; break;
        case OPT_CONNECT: connect_to = optarg; break;
        case 'i': iface = optarg; break;
        case 'b': break_id = optarg; break;
        case 't': target_arg = optarg; break;
        case 'c':
            if (parse_u64(optarg, 1u << 30, &case_no) != 0 || case_no == 0)
                return usage_error("--case wants a case number from 1, got \"%s\"", optarg);
            break;
        case 's':
            if (parse_u64(optarg, UINT64_MAX, &p.seed) != 0)
                return usage_error("--seed wants a non-negative integer, got \"%s\"", optarg);
            break;
        case 'l': do_list = true; break;
        case OPT_LIST_MUT: do_list_mut = true; break;
        case OPT_LIST_CASES: list_cases_of = optarg; break;
        case OPT_MSG_SIZE:
            if (parse_u64(optarg, 1u << 30, &v) != 0 || v == 0)
                return usage_error("--msg-size wants 1 byte to 1 GiB, got \"%s\"", optarg);
            p.msg_size = (size_t)v;
            break;
        case OPT_SEG_PAYLOAD:
            if (parse_u64(optarg, 65000, &v) != 0 || v == 0)
                return usage_error("--seg-payload wants 1..65000 bytes, got \"%s\"", optarg);
            p.seg_payload = (size_t)v;
            break;
        case OPT_COUNT:
            if (parse_u64(optarg, 1u << 24, &v) != 0 || v == 0)
                return usage_error("--count wants 1..16777216, got \"%s\"", optarg);
            p.count = (unsigned)v;
            break;
        case OPT_TCP_SEG:
            if (parse_u64(optarg, 65495, &v) != 0 || v == 0)
                return usage_error("--tcp-segment wants 1..65495 bytes, got \"%s\"", optarg);
            p.tcp_segment = (size_t)v;
            break;
        case OPT_COALESCE: p.coalesce = true; break;
        case OPT_IPV6: p.ipv6 = true; break;
        case OPT_PORT:
            if (parse_u64(optarg, 65535, &v) != 0 || v == 0)
                return usage_error("--port wants 1..65535, got \"%s\"", optarg);
            p.port = (uint16_t)v;
            break;
        case OPT_EEP_UDP: p.eep_udp = true; break;
        case OPT_CLIENT_PORT:
            if (parse_u64(optarg, 65535, &v) != 0 || v == 0)
                return usage_error("--client-port wants 1..65535, got \"%s\"", optarg);
            p.client_port = (uint16_t)v;
            break;
        case OPT_PAUSE:
            if (parse_u64(optarg, 10000000, &v) != 0)
                return usage_error("--pause-us wants microseconds (up to 10 s), got \"%s\"", optarg);
            p.pause_us = (uint32_t)v;
            break;
        case OPT_SEND_TIMEOUT:
            if (parse_u64(optarg, 3600000, &v) != 0 || v == 0)
                return usage_error("--send-timeout wants 1..3600000 ms, got \"%s\"", optarg);
            p.send_timeout_ms = (uint32_t)v;
            break;
        case OPT_NO_META: meta = false; break;
        case OPT_RATE:
            if (parse_u64(optarg, 100000000, &v) != 0 || v == 0)
                return usage_error("--rate wants PDUs per second (1..10^8), got \"%s\"", optarg);
            p.rate_pdus = (uint32_t)v;
            break;
        case OPT_MUTATE_RATE: {
            char *end;
            errno = 0;
            double rate = strtod(optarg, &end);
            if (errno || *end != '\0' || !(rate > 0.0 && rate <= 1.0))
                return usage_error("--mutate-rate wants a probability in (0, 1], got \"%s\"", optarg);
            p.mutate_ppm = (uint32_t)(rate * 1000000.0 + 0.5);
            mutate_rate = true;
            break;
        }
        case OPT_FLIP_RATE: {
            char *end;
            errno = 0;
            double rate = strtod(optarg, &end);
            if (errno || end == optarg || *end != '\0' || !(rate > 0.0 && rate <= 1.0))
                return usage_error("--flip-rate wants a probability in (0, 1], got \"%s\"", optarg);
            p.flip_ppm = (uint32_t)(rate * 1000000.0 + 0.5);
            if (p.flip_ppm == 0)
                p.flip_ppm = 1;
            break;
        }
        case OPT_PROGRESS: p.progress = true; break;
        case OPT_TCP_TS: p.tcp_timestamps = true; break;
        case OPT_PCAPNG: pcapng = true; break;
        case OPT_IFT_FLAGS:
            if (parse_ift_flags(optarg, &p.ift_flags) != 0)
                return usage_error("--ift-flags wants a list of R,HC,PC,IH,IP,SP,SM,RM (or none, or a number of those bits), got \"%s\"",
                                   optarg);
            p.ift_flags_set = true;
            break;
        case 'q': quiet = true; break;
        case 'h': fputs(usage_text, stdout); return 0;
        case ':': return usage_error("option %s needs a value", argv[optind - 1]);
        default: return usage_error("unknown option %s", argv[optind - 1]);
        }
    }
    if (do_list || do_list_mut) {
        if (do_list)
            list_scenarios();
        if (do_list)
            printf("\n");
        list_mutations();
        return 0;
    }
    if (list_cases_of) {
        const struct tg_scenario *sc = tg_find_scenario(list_cases_of);
        if (sc == NULL)
            return usage_error("no scenario \"%s\" (see --list)", list_cases_of);
        list_cases(sc, &p);
        return 0;
    }
    if (optind >= argc && !script_path)
        return usage_error("%s", "no scenario given (see --list)");
    if (optind + (script_path ? 0 : 1) < argc)
        return usage_error("unexpected argument \"%s\"", argv[optind + (script_path ? 0 : 1)]);
    const char *sc_name = script_path ? "vitcp-script" : argv[optind];
    const struct tg_scenario *sc = tg_find_scenario(sc_name);
    if (sc == NULL)
        return usage_error("no scenario \"%s\" (see --list)", sc_name);
    struct tg_script *script = NULL;
    if (script_path) {
        char serr[512];
        script = tg_script_load(script_path, serr, sizeof serr);
        if (script == NULL)
            return usage_error("%s", serr);
        p.script = script;
    }
    if (file && vn_capture_format_for(file) == VN_CAPTURE_PCAPNG)
        pcapng = true;
    if (pcapng && !file)
        return usage_error("%s", "--pcapng needs -w FILE");
    int status = run_cli(sc, &p, file, connect_to, iface, break_id, target_arg, case_no,
                         mutate_rate, quiet, meta, script_path, pcapng);
    tg_script_free(script);
    return status;
}

static int run_cli(const struct tg_scenario *sc, struct tg_params *pp, const char *file,
                   const char *connect_to, const char *iface, const char *break_id,
                   const char *target_arg, uint64_t case_no, bool mutate_rate, bool quiet, bool meta,
                   const char *script_path, bool pcapng)
{
    struct tg_params p = *pp;
    uint64_t v;
    if ((file != NULL) + (connect_to != NULL) + (iface != NULL) != 1)
        return usage_error("%s", "give exactly one output: -w FILE, --connect HOST:PORT or -i IFACE");
    if (connect_to) {
        const char *colon = strrchr(connect_to, ':');
        if (colon == NULL || colon == connect_to || parse_u64(colon + 1, 65535, &v) != 0 || v == 0)
            return usage_error("--connect wants HOST:PORT, got \"%s\"", connect_to);
    }
    const struct tg_mutation *mut = NULL;
    long target = TG_TARGET_SEEDED;
    if (case_no && (break_id || target_arg))
        return usage_error("%s", "--case already names the mutation and target; drop --break/--target");
    if (break_id) {
        mut = tg_find_mutation(break_id);
        if (mut == NULL)
            return usage_error("no mutation \"%s\" (see --list-mutations)", break_id);
        if (mut->proto != sc->proto)
            return usage_error("mutation %s does not apply to this scenario's protocol", break_id);
    } else if (target_arg) {
        return usage_error("%s", "--target needs --break");
    }
    if (mutate_rate) {
        if (!mut || target_arg || case_no)
            return usage_error("%s", "--mutate-rate needs --break and replaces --target/--case");
        target = TG_TARGET_RATE;
    }
    if (target_arg) {
        if (strcmp(target_arg, "all") == 0)
            target = TG_TARGET_ALL;
        else if (parse_u64(target_arg, 1u << 30, &v) == 0)
            target = (long)v;
        else
            return usage_error("--target wants a PDU number or \"all\", got \"%s\"", target_arg);
    }
    if (case_no && !tg_case_get(sc, &p, (size_t)case_no, &mut, &target)) {
        char n[32];
        snprintf(n, sizeof n, "%zu", tg_case_count(sc, &p));
        return usage_error("no such case; this scenario has %s (see --list-cases)", n);
    }
    if (mut && target >= 0) {
        struct tg_output *o = tg_output_null();
        struct tg_result r;
        tg_run(sc, mut, TG_TARGET_ALL, &p, o, &r);
        tg_output_close(o, NULL, 0);
        if (r.eligible == 0)
            return usage_error("mutation %s has no target in this scenario (see --list-cases)",
                               tg_mutation_name(mut));
        if ((unsigned long)target >= r.eligible) {
            char n[32];
            snprintf(n, sizeof n, "%u", r.eligible);
            return usage_error("--target out of range: %s eligible PDUs", n);
        }
    }

    static char meta_text[8192];
    struct tg_result r;
    if (pcapng) {
        /* The section comment comes first in the file: learn where the
         * mutation lands from a run without output (same seed, same PDUs). */
        struct tg_output *o = tg_output_null();
        int drc = tg_run(sc, mut, target, &p, o, &r);
        tg_output_close(o, NULL, 0);
        if (drc != 0) {
            fprintf(stderr, "vitcp-trafgen: %s\n", r.error);
            return strstr(r.error, "no target") ? 2 : 1;
        }
        long shown = mut && target == TG_TARGET_SEEDED && r.first_mutated_pdu >= 0 ? r.chosen_target : target;
        format_meta(meta_text, sizeof meta_text, sc, script_path, mut, shown, (size_t)case_no, &p, &r);
    }
    char err[512] = "";
    struct tg_output *out = file ? tg_output_capture(file, pcapng, pcapng ? meta_text : NULL, err, sizeof err)
                          : connect_to ? tg_output_connect(connect_to, p.send_timeout_ms, err, sizeof err)
                                       : tg_output_libnet(iface, err, sizeof err);
    if (out == NULL) {
        fprintf(stderr, "vitcp-trafgen: %s\n", err);
        return 1;
    }
    out->pause_us = p.pause_us;
    int rc = tg_run(sc, mut, target, &p, out, &r);
    char cerr[256] = "";
    int crc = tg_output_close(out, cerr, sizeof cerr);
    if (rc != 0) {
        fprintf(stderr, "vitcp-trafgen: %s\n", r.error);
        return strstr(r.error, "no target") ? 2 : 1;
    }
    if (crc != 0) {
        fprintf(stderr, "vitcp-trafgen: %s\n", cerr);
        return 1;
    }
    if (mut && target == TG_TARGET_SEEDED)
        target = r.first_mutated_pdu >= 0 ? r.chosen_target : target;
    if (file && meta) {
        format_meta(meta_text, sizeof meta_text, sc, script_path, mut, target, (size_t)case_no, &p, &r);
        if (write_meta(file, meta_text) != 0) {
            fprintf(stderr, "vitcp-trafgen: cannot write %s.meta\n", file);
            return 1;
        }
    }
    if (!quiet) {
        printf("%s: %u PDUs, %llu bytes", sc->name, r.pdus, (unsigned long long)r.bytes);
        if (mut)
            printf(", %s applied to PDU %ld", tg_mutation_name(mut), r.first_mutated_pdu);
        printf("\n");
    }
    return 0;
}
