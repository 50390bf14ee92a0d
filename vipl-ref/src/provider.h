/*
 * Internal state of the reference VI Provider. One NIC = one provider
 * instance with one progress thread (poll) and one mutex that guards every
 * object of that NIC; waits block on the NIC's condition variable.
 */
#ifndef VIPL_PROVIDER_H
#define VIPL_PROVIDER_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include "vipl.h"
#include "vipl_fault.h"
#include "vitcp/vitcp.h"
#include "vitcp/vitcp_stream.h"

#define VIPL_QUEUE_CAP 1024u       /* descriptors per work queue */
#define VIPL_MAX_SEGS 64u          /* data segments per descriptor */
#define VIPL_MAX_TRANSFER (1u << 20) /* NIC MaxTransferSize: 1 MiB */
#define VIPL_SEG_PAYLOAD 65280u    /* payload per VI segment (fits 65535 with headers) */
#define VIPL_DEFAULT_WINDOW 8u     /* A13 */
#define VIPL_DEFAULT_GRACE_MS 2000u /* A4 */
#define VIPL_INCOMING_TIMEOUT_MS 30000u /* V21 */
#define VIPL_P2P_RETRY_MS 50u
/* An active request that finds no provider listening (or loses TCP before
 * the answer) tries again after 10, 20, 40 ... ms, at most 500 ms apart,
 * until its Timeout (VIA-9.4.4-RETRY-UNTIL-TIMEOUT). */
#define VIPL_RETRY_FIRST_MS 10u
#define VIPL_RETRY_MAX_MS 500u
#define VIPL_OUT_HIGH_WATER (256u * 1024u)
#define VIPL_IO_WAIT_MS 200     /* consumer-driven part of a wait, then the condition variable */
#define VIPL_IO_RXBUF (256u * 1024u)
#define VIPL_DIRECT_MIN 2048u   /* payload from which a segment is sent without copying */
#define VIPL_IO_LINGER_MS 10    /* after a consumer-driven wait, the thread takes the socket back after this */

enum vipl_obj_type { OBJ_NIC = 1, OBJ_VI, OBJ_CQ, OBJ_PTAG, OBJ_CONN };

struct vipl_nic;

struct vipl_ptag {
    struct vipl_nic *nic;
    unsigned refs;
    struct vipl_ptag *next;
};

struct vipl_region {
    VIP_MEM_HANDLE handle;
    uintptr_t addr;
    size_t len;
    struct vipl_ptag *ptag;
    bool rdma_write, rdma_read;
    struct vipl_region *next;
};

struct vipl_cq_entry {
    struct vipl_vi *vi;
    bool recv;
};

struct vipl_cq {
    struct vipl_nic *nic;
    size_t cap, head, count;
    struct vipl_cq_entry *ring;
    unsigned refs; /* work queues associated */
    VIP_CQ_NOTIFY_HANDLER notify;
    VIP_PVOID notify_ctx;
    struct vipl_cq *next;
};

/* One posted descriptor. */
struct wq_entry {
    VIP_DESCRIPTOR *desc;
    uint32_t msg_num;
    uint64_t tx_end;     /* stream position after its last byte (send queue) */
    uint32_t sent;       /* payload bytes encoded so far */
    uint32_t total;      /* message length */
    uint32_t status;     /* error bits gathered before completion */
    bool started, transmitted, read_done, completed;
};

struct wq {
    struct wq_entry *e;
    uint32_t head;      /* oldest not yet dequeued by the consumer */
    uint32_t done;      /* next to complete (FIFO) */
    uint32_t next;      /* next to transmit (send) / fill (receive) */
    uint32_t tail;      /* next free */
    struct vipl_cq *cq;
    VIP_VI_NOTIFY_HANDLER notify;
    VIP_PVOID notify_ctx;
};

static inline struct wq_entry *wq_at(struct wq *q, uint32_t i) { return &q->e[i % VIPL_QUEUE_CAP]; }

/* An inbound RDMA Read this VI answers as responder. */
struct inbound_read {
    uint32_t msg_num;
    uint64_t addr;
    uint32_t length;
    uint32_t sent;
    VIP_MEM_HANDLE handle;
    bool refused;
};

enum conn_phase {
    PH_NONE,          /* no TCP */
    PH_TCP_CONNECTING,/* active: non-blocking connect in progress */
    PH_AWAIT_ACCEPT,  /* active: ConnectRequest sent */
    PH_P2P_LISTEN,    /* peer-to-peer, passive (lower) side: waiting for the request */
    PH_RETRY_WAIT,    /* peer-to-peer, active: waiting to retry after NoMatch/refused */
    PH_OPEN,          /* connected */
};

struct vipl_vi {
    struct vipl_nic *nic;
    VIP_VI_ATTRIBUTES attrs;
    VIP_VI_ATTRIBUTES remote_attrs;
    VIP_VI_STATE state;
    struct wq sq, rq;
    struct vipl_vi *next;

    /* connection */
    enum conn_phase phase;
    int fd;
    bool framer_ready;
    struct vw_vitcp_framer framer;
    bool crc;             /* CRC trailer negotiated */
    bool peer_urgent;     /* the peer sent the Urgent Marker option (3.7) */
    bool p2p;             /* peer-to-peer connection */
    bool peer_req;        /* the last request was VipConnectPeerRequest */
    bool dfc_sender;      /* we set the DFC bit: we are flow-controlled */
    bool peer_dfc;        /* the peer is flow-controlled by our advertisements */
    uint32_t mtu;         /* agreed */
    uint16_t peer_window; /* inbound reads the peer will hold */
    uint16_t my_window;
    struct sockaddr_storage peer_sa;
    socklen_t peer_sa_len;
    uint8_t local_disc[VW_VITCP_DISC_MAX], remote_disc[VW_VITCP_DISC_MAX];
    uint16_t local_disc_len, remote_disc_len;
    uint8_t local_host[16], remote_host[16];
    uint16_t local_host_len, remote_host_len;
    int64_t deadline_ms;  /* connect deadline (0: none) */
    int64_t retry_at_ms;
    uint32_t retry_backoff_ms; /* next pause before a retry (0: the first) */
    VIP_RETURN connect_result; /* VIP_NOT_DONE while pending */
    uint32_t request_msg_num;

    /* message numbering and acknowledgement */
    uint32_t tx_msg_num;  /* last non-response message number sent */
    uint32_t rx_expected; /* next message number from the peer */
    uint32_t rx_last_ok;  /* last message received without error (ACK) */
    uint32_t peer_ack;    /* latest Message ACK from the peer (RR) */
    bool ack_pending;
    uint16_t err_to_send; /* Remote Error Code for the next ACK (RR) */
    uint32_t err_msg_num; /* the message in error, named by that ACK (VITCP-3.2-ACK-NAMES-ERROR-MSG) */
    bool close_after_flush;

    /* descriptor flow control (V17, A12) */
    uint16_t rx_posted;      /* what we advertise */
    uint16_t peer_rx_posted; /* what the peer advertised */
    uint16_t consumed;       /* descriptor-consuming messages we sent */
    bool advert_pending;

    /* reads */
    unsigned reads_outstanding;  /* ours, awaiting responses */
    struct inbound_read inbound[VW_VITCP_MAX_TRACKED_READS];
    unsigned inbound_count;

    /* message being received */
    bool rx_in_msg;
    uint8_t rx_type;
    uint32_t rx_msg_num;
    uint32_t rx_bytes;
    uint32_t rx_status;
    bool rx_drop;
    bool rx_has_desc;
    uint32_t rx_entry;    /* receive queue index of the claimed descriptor */
    uint64_t rx_cap;      /* its buffer bytes */
    uint32_t rx_imm;
    bool rx_idv;
    bool rx_prot;         /* RDMA protection violation in this message */
    struct vw_vitcp_rdma rx_rdma;
    struct vipl_region *rx_region;

    /* output */
    uint8_t *out;
    size_t out_len, out_off, out_cap;
    uint64_t tx_written, tx_queued;
    uint8_t *gather;  /* scratch for multi-segment gathers */

    /* descriptor flow control: what the peer knows of our receives */
    uint16_t adv_sent;      /* rx_posted as last written on the wire */
    uint16_t peer_consumed; /* descriptor-consuming messages received from the peer */

    /* progress-thread epoll registration and consumer-driven waits */
    int ep_fd;             /* the fd registered in nic->epfd, -1 if none */
    uint32_t ep_events;    /* its events */
    bool io_owner;         /* a waiting consumer drives this VI's socket */
    bool io_polling;       /* ... and is blocked in poll() without the lock */
    int64_t io_lazy_until; /* after such a wait: out of the thread's set until then (0: in it) */
    int kick_fd;           /* eventfd that ends that poll(), -1 until first used */
    int io_zombie_fd;      /* closed under the waiter: it closes it once back (-1: none) */
    bool io_blocking;      /* O_NONBLOCK cleared (all other I/O uses MSG_DONTWAIT) */
    int io_rcvtimeo_ms;    /* SO_RCVTIMEO as last set */
    unsigned waiters;      /* consumer threads inside a wait on this VI */
    uint8_t *io_rxbuf;     /* the waiter's receive buffer (it reads without the lock) */
};

enum conn_state { IN_WAIT_REQ, IN_HELD, IN_CLAIMED };

/* An incoming TCP connection before the VI is accepted. */
struct vipl_conn {
    struct vipl_nic *nic;
    int fd;
    enum conn_state state;
    struct vw_vitcp_framer framer;
    int64_t deadline_ms;
    bool bad_attrs;
    bool peer_gone;
    bool dead;     /* free after the current framer feed */
    bool linger;   /* fault data-after-reject: kept open until the deadline */
    struct vw_vitcp_hdr req_hdr;
    struct vw_vitcp_ce req_ce;
    bool req_crc;
    struct sockaddr_storage peer_sa;
    socklen_t peer_sa_len;
    struct vipl_conn *next;
    unsigned poll_gen;
    size_t poll_idx;
    uint8_t *req_raw;    /* the ConnectRequest's bytes, for a handoff (host.c) */
    size_t req_raw_len;
    bool routed;         /* handed over by the host's front: never route again */
};

struct ns_entry {
    uint8_t addr[16];
    uint16_t addr_len;
    uint16_t port;
    struct ns_entry *next;
};

struct pending_call;
struct vipl_host;

struct vipl_nic {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    pthread_t thread;
    bool running;
    int wake_fd;       /* eventfd: wakes the progress thread */
    int epfd;          /* the progress thread's epoll set of VI sockets */
    int listen_fd;
    int reserve_fd;              /* listen_guard.c: spent to refuse a connection without descriptors */
    int64_t listen_paused_until; /* listen_guard.c: the listener is not polled before this (ms) */
    uint16_t listen_port;
    uint16_t remote_port;
    uint8_t local_addr[16];
    uint16_t local_addr_len;
    char name[64];
    bool crc_on;       /* A11 */
    bool dfc_on;       /* A12 */
    uint16_t read_window;
    uint32_t seg_payload; /* payload per VI segment (3.2: a message may be divided) */
    bool urgent_opt;   /* offer the Urgent Marker option in CE segments (3.7) */
    bool refuse_crc;   /* trailer on every ConnectReject/NoMatch (V6: the sender's option) */
    unsigned grace_ms;
    enum vipl_fault fault;
    VIP_ERROR_HANDLER err_handler;
    VIP_PVOID err_ctx;
    struct vipl_vi *vis;
    struct vipl_cq *cqs;
    struct vipl_ptag *ptags;
    struct vipl_region *regions;
    VIP_MEM_HANDLE next_mem_handle;
    struct vipl_conn *conns;
    struct ns_entry *ns;
    struct pending_call *calls, *calls_tail;
    uint8_t *rxbuf;
    size_t rxbuf_cap;
    unsigned poll_gen;
    VIPL_STATISTICS stats;
    struct vipl_host *host; /* the per-host shared listener (host.c); NULL for explicit addresses */
};

/* ---- handles (handles.c) */
void handle_add(void *p, enum vipl_obj_type t);
void handle_remove(void *p);
bool handle_valid(const void *p, enum vipl_obj_type t);

/* ---- time */
int64_t now_ms(void);

/* listen_guard.c: the listener when descriptors run out. */
void listen_guard_init(struct vipl_nic *nic);
void listen_guard_free(struct vipl_nic *nic);
void listen_guard_out_of_fds(struct vipl_nic *nic);
bool listen_guard_paused(const struct vipl_nic *nic, int64_t now);
/* Absolute deadline for a VIPL timeout; -1 for infinite. */
int64_t deadline_after(VIP_ULONG timeout_ms);
/* Wait on the NIC condition until deadline (-1: forever). false on timeout. */
bool nic_wait(struct vipl_nic *nic, int64_t deadline);

/* ---- deferred callbacks (run without the lock) */
void defer_error(struct vipl_nic *nic, struct vipl_vi *vi, VIP_DESCRIPTOR *d, VIP_ERROR_CODE code,
                 VIP_RESOURCE_CODE res);
void defer_vi_notify(struct vipl_nic *nic, struct vipl_vi *vi, VIP_VI_NOTIFY_HANDLER h, VIP_PVOID ctx,
                     VIP_DESCRIPTOR *d);
void defer_cq_notify(struct vipl_nic *nic, struct vipl_vi *vi, VIP_CQ_NOTIFY_HANDLER h, VIP_PVOID ctx,
                     bool recv);
/* Unlock the NIC and run the callbacks gathered meanwhile. */
void nic_unlock(struct vipl_nic *nic);
void nic_wake(struct vipl_nic *nic);

/* ---- memory (memory.c) */
struct vipl_region *region_find(struct vipl_nic *nic, VIP_MEM_HANDLE h);
/* Region h covers [addr, addr+len) with ptag? */
struct vipl_region *region_check(struct vipl_nic *nic, VIP_MEM_HANDLE h, uint64_t addr, uint64_t len,
                                 struct vipl_ptag *ptag);

/* ---- descriptors and queues (queues.c) */
VIP_DESCRIPTOR_SEGMENT *desc_seg(VIP_DESCRIPTOR *d, unsigned i);
void vi_complete_entry(struct vipl_vi *vi, struct wq *q, struct wq_entry *e, uint32_t status);
void vi_progress_sends(struct vipl_vi *vi);
void vi_flush_queues(struct vipl_vi *vi);
void wq_push_completion(struct vipl_vi *vi, struct wq *q);
/* Check a local descriptor's data segments; returns VIP_STATUS_* error bits
 * and the total byte count. */
uint32_t desc_check_local(struct vipl_vi *vi, VIP_DESCRIPTOR *d, unsigned first_seg, uint64_t *total);
/* Scatter len bytes into a descriptor's data segments at offset. */
void desc_scatter(VIP_DESCRIPTOR *d, unsigned first_seg, uint64_t offset, const uint8_t *src, size_t len);
void desc_gather(VIP_DESCRIPTOR *d, unsigned first_seg, uint64_t offset, uint8_t *dst, size_t len);

/* ---- protocol engine (engine.c) */
void *provider_main(void *arg);
void vi_pump(struct vipl_vi *vi);
void vi_fail(struct vipl_vi *vi, bool rst, VIP_ERROR_CODE code);
void vi_close_fd(struct vipl_vi *vi, bool rst);
bool vi_conn_init(struct vipl_vi *vi, int fd);
void vi_encode_ce(struct vipl_vi *vi, unsigned type, const struct vw_vitcp_ce *req_ce, uint32_t ack);
void vi_start_connect(struct vipl_vi *vi);
uint32_t random_u32(void);
/* Bring the VI's registration in the progress thread's epoll set in line
 * with its state (socket, output pending, consumer-driven). */
void vi_ep_update(struct vipl_vi *vi);
/* Does a flow-controlled peer need a NOP about our receives? (sets advert_pending) */
bool vi_advert_due(struct vipl_vi *vi);
/* Consumer-driven waits (VipSendWait, VipRecvWait): the waiting thread polls
 * the VI's socket itself, for at most VIPL_IO_WAIT_MS, instead of waiting for
 * the progress thread to hand it the completion. vi_io_step returns 1 after
 * one poll (the caller re-checks its condition), 0 when the VI cannot be
 * driven (the caller blocks on the condition variable), -1 when the VI was
 * destroyed meanwhile (by a handler). */
int vi_io_step(struct vipl_vi *vi, bool recv_wait, int64_t deadline, int64_t *until);
/* End the consumer's drive. keep: leave the socket out of the thread's set
 * for VIPL_IO_LINGER_MS (the consumer will likely wait again); else give it
 * back at once (the caller blocks on the condition variable). */
void vi_io_end(struct vipl_vi *vi, bool keep);
/* Give the socket back to the progress thread now. */
void vi_io_attach(struct vipl_vi *vi);
/* End a consumer's poll() on this VI's socket (state changed under it). */
void vi_kick(struct vipl_vi *vi);

/* ---- connection management (connect.c) */
void conn_free(struct vipl_conn *c);
void conn_on_readable(struct vipl_conn *c);
void conn_refuse(struct vipl_conn *c, unsigned type);
struct vipl_vi *p2p_listener_for(struct vipl_nic *nic, const struct vw_vitcp_ce *ce);
VIP_RETURN conn_accept_locked(struct vipl_conn *c, struct vipl_vi *vi);
uint16_t ns_port_for(struct vipl_nic *nic, const uint8_t *addr, uint16_t len);
/* Unlink and free a connection another NIC took over. */
void conn_release(struct vipl_conn *c);
/* A connection handed over with its ConnectRequest's bytes: parse them as
 * if they had arrived here. */
void conn_adopt(struct vipl_nic *nic, int fd, const uint8_t *req, size_t len);

/* ---- NIC (nic.c) */
int vipl_open_listener(const struct sockaddr_storage *ss, socklen_t len);

/* ---- the per-host shared listener (host.c) */
/* Share the host's VI/TCP port ss among its default NICs: true when this
 * NIC is the front (nic->listen_fd set) or a member; false when the port
 * belongs to something else. */
bool host_join(struct vipl_nic *nic, const struct sockaddr_storage *ss, socklen_t sl);
void host_leave(struct vipl_nic *nic);
/* Can requests reach this NIC's waits through the host listener? */
bool host_can_wait(const struct vipl_nic *nic);
/* The fd the progress thread polls for host events (-1: none), the time
 * host_tick wants to run (-1: none), and the handlers. */
int host_poll_fd(const struct vipl_nic *nic);
int64_t host_deadline(const struct vipl_nic *nic);
void host_on_ready(struct vipl_nic *nic);
void host_tick(struct vipl_nic *nic);
/* VipConnectWait on a discriminator begins / ends. */
void host_wait_begin(struct vipl_nic *nic, const uint8_t *disc, uint16_t len);
void host_wait_end(struct vipl_nic *nic, const uint8_t *disc, uint16_t len);
/* The front hands a held request to the NIC waiting on its discriminator;
 * true when done (c is freed). */
bool host_route_held(struct vipl_conn *c);

#endif
