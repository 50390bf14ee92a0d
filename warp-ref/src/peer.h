/* warp-peer's options and its two modes (main.c: the target, client.c: the
 * traffic source). */
#ifndef WARP_PEER_PEER_H
#define WARP_PEER_PEER_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "choices.h"
#include "faults.h"
#include "iscsi_mode.h"

#define PEER_OPS_MAX 256
#define PEER_DEFAULT_REGION (1u << 20)
#define PEER_DEFAULT_FRAG 8192u
#define PEER_DEFAULT_MAX_PDU (4u << 20)

/* One client operation: a Send or an RDMA Write of len bytes. */
struct peer_op {
    unsigned type; /* VW_WARP_SEND / VW_WARP_RDMA */
    size_t len;
};

struct peer_opts {
    /* both */
    enum warp_fault fault;
    struct peer_choices choices; /* --choice: what the draft leaves open (choices.h) */
    size_t frag;
    bool iscsi;
    size_t max_pdu;
    /* target */
    long port;
    const char *bind;
    unsigned long region_size;
    uint32_t handle;
    bool zero_based;
    unsigned long idle_ms;
    bool once;
    /* client */
    const char *connect;
    struct peer_op ops[PEER_OPS_MAX];
    size_t nops;
    struct iscsi_task tasks[PEER_OPS_MAX];
    size_t ntasks;
    unsigned long count;
    bool mix;
    size_t split;
    unsigned long completion_every;
    bool have_region;
    uint64_t region_addr;          /* --region ADDR:HANDLE:LEN: the target's region */
    uint32_t region_handle;
    unsigned long region_len;
    unsigned long timeout_ms;
};

extern volatile sig_atomic_t peer_stop;

/* --connect: run the operations, check every echo; exit status. */
int peer_client_run(const struct peer_opts *o);
/* Byte i of client operation k's data. */
static inline uint8_t peer_pattern(unsigned long k, uint64_t i)
{
    return (uint8_t)(k * 31u + i * 7u + (i >> 8));
}

#endif
