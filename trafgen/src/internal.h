/* Internal state shared by the generator, scenarios, mutations, outputs. */
#ifndef VITCP_TRAFGEN_INTERNAL_H
#define VITCP_TRAFGEN_INTERNAL_H

#include "vitcp/ift.h"
#include "vitcp/pktway.h"
#include "vitcp/tcp_flow.h"
#include "vitcp/trafgen.h"
#include "vitcp/vitcp.h"
#include "vitcp/warp.h"

/* splitmix64: small, fast, identical everywhere. */
struct tg_rng {
    uint64_t s;
};
static inline uint64_t tg_rng_next(struct tg_rng *r)
{
    uint64_t z = (r->s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
static inline uint32_t tg_rng_below(struct tg_rng *r, uint32_t n)
{
    return n ? (uint32_t)(tg_rng_next(r) % n) : 0;
}
void tg_rng_fill(struct tg_rng *r, uint8_t *buf, size_t len);

/* One PDU on its way out: what it is, and its encoder for the mutation to
 * change. Byte-level mutations set the post_* fields. */
struct tg_pdu {
    enum tg_proto proto;
    int dir;             /* 0 client/initiator, 1 server */
    unsigned type;       /* protocol type (VI/TCP type, RDMAP opcode, WARP type; EEP: 0) */
    bool first_seg;      /* first segment of its message */
    bool last_seg;       /* last segment of its message */
    bool crc;            /* VI/TCP: CRC negotiated; IFT: CRCs on */
    bool dfc;            /* VI/TCP: descriptor flow control in use */
    bool ift_ind;        /* IFT: the adaption indication */
    bool ift_tagged;     /* IFT: a tagged DDP frame */
    bool ift_no_ddp;     /* IFT: frame without its DDP header (header_size 0) */
    bool eep_has_oh;
    struct vw_vitcp_enc vitcp;
    struct vw_ift_ind_enc ift_ind_enc;
    struct vw_ift_frame_enc ift;
    struct vw_ddp_hdr ddp;      /* encoded into ddp_buf before the frame */
    struct vw_eep_enc eep;
    struct vw_eep_oh_enc eep_oh[2];
    /* EEP byte edits after encoding: cut eep_cut_len bytes at eep_cut_at,
     * or insert eep_grow_len zero bytes at eep_grow_at (a record or data
     * block sized otherwise than the draft says). */
    size_t eep_cut_at, eep_cut_len, eep_grow_at, eep_grow_len;
    /* EEP router hops (eep-router): 0 A -> B, 1 A -> router, 2 router -> B;
     * a second hop keeps what the first carried, for its mutations. */
    unsigned eep_hop;
    uint64_t eep_in_ei;
    const struct vw_eep_route_enc *eep_in_routes;
    size_t eep_in_n_routes;
    uint8_t eep_data[64];
    struct vw_eep_route_enc eep_routes[2]; /* a mutation's copy of the records */
    uint8_t eep_ot[16];                     /* a mutation's trailer bytes */
    struct vw_warp_enc warp;
    uint8_t opts[32];           /* room for mutated VI/TCP options */
    /* byte-level */
    long post_truncate;         /* >= 0: cut the encoded PDU to this many bytes */
    bool post_retx_differs;     /* resend the PDU's TCP bytes with one byte changed */
};

enum tg_out_kind { TG_OUT_NULL, TG_OUT_PCAP, TG_OUT_CONNECT, TG_OUT_LIBNET };

struct tg_output {
    enum tg_out_kind kind;
    struct vn_pcap_writer *pw;
    void *libnet;               /* libnet_t */
    struct vn_sink sink;
    struct vn_tcp_flow flow;
    bool flow_open;
    int fd;
    uint32_t pause_us;
    uint32_t send_timeout_ms; /* connect mode: SO_SNDTIMEO, for the error message */
    int failed;
    char err[256];
};

/* pcapng: a comment on the next frame written (no-op elsewhere). */
void tg_out_comment(struct tg_output *o, const char *text);
int tg_out_tcp_open(struct tg_output *o, bool ipv6, uint16_t client_port, uint16_t port, bool timestamps);
int tg_out_tcp_write(struct tg_output *o, int dir, const uint8_t *data, size_t len, size_t seg);
int tg_out_tcp_write_at(struct tg_output *o, int dir, uint64_t off, const uint8_t *data, size_t len);
int tg_out_tcp_close(struct tg_output *o);
int tg_out_datagram(struct tg_output *o, bool udp, uint16_t port, bool ipv6, unsigned hop, const uint8_t *data,
                    size_t len);

/* Per-scenario protocol state lives with the scenarios. */
struct tg_gen {
    const struct tg_params *p;
    struct tg_output *out;
    const struct tg_mutation *mut;
    long target;
    struct tg_rng rng;      /* scenario content */
    struct tg_rng mut_rng;  /* mutation choices: a mutation never shifts content */
    struct tg_rng flip_rng; /* --flip-rate choices: their own stream too */
    struct tg_result *res;
    uint8_t *buf;           /* one encoded PDU */
    size_t buf_cap;
    uint8_t *pend[2];       /* coalescing */
    size_t pend_len[2], pend_cap[2];
    uint64_t stream_off[2];
    int failed;
#define TG_PAYLOAD_SLOTS 4
    uint8_t *payload_slot[TG_PAYLOAD_SLOTS];
    size_t payload_cap[TG_PAYLOAD_SLOTS];
    unsigned payload_next;
    uint64_t start_ns, last_progress_ns;
};

/* Hand a PDU over: mutate if it is the target, encode, send. */
void tg_emit(struct tg_gen *g, struct tg_pdu *pdu);
/* Send what is held for coalescing. */
void tg_flush(struct tg_gen *g);
/* TCP connection around a stream scenario. */
void tg_tcp_open(struct tg_gen *g, uint16_t default_port);
void tg_tcp_close(struct tg_gen *g);
void tg_fail(struct tg_gen *g, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Payload bytes from the content PRNG (buffer owned by g, valid until the next call). */
const uint8_t *tg_payload(struct tg_gen *g, size_t len);

extern const struct tg_scenario tg_vitcp_scenarios[];
extern const size_t tg_vitcp_scenario_count;
extern const struct tg_scenario tg_other_scenarios[];
extern const size_t tg_other_scenario_count;

#endif
