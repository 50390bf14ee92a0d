/* Test harness: two NICs on 127.0.0.1, registered memory, a connected VI
 * pair (the passive side accepts in a helper thread). */
#ifndef VIPL_HARNESS_H
#define VIPL_HARNESS_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include "vipl.h"

struct h_nic {
    VIP_NIC_HANDLE nic;
    VIP_PROTECTION_HANDLE ptag;
    uint16_t port;
    /* 64 descriptors + 1 MiB data, both registered (data: RDMA r/w enabled) */
    uint8_t *descs, *data;
    VIP_MEM_HANDLE dmh, bmh;
    unsigned async_errors[16];
};

struct h_pair {
    struct h_nic a, b;   /* a: active, b: passive */
    VIP_VI_HANDLE va, vb;
};

#define H_DATA_LEN (1u << 20)

void h_nic_open(struct h_nic *n, const char *opts);
void h_nic_close(struct h_nic *n);
VIP_DESCRIPTOR *h_desc(struct h_nic *n, unsigned i);
VIP_VI_ATTRIBUTES h_attrs(struct h_nic *n, VIP_RELIABILITY_LEVEL level);
VIP_NET_ADDRESS *h_addr(uint16_t port_unused, const char *disc);
/* A VI on n with h_attrs(n, level), no CQs (VipCreateVi must succeed). */
VIP_VI_HANDLE h_vi_create(struct h_nic *n, VIP_RELIABILITY_LEVEL level);
/* Open both NICs (with option strings), create VIs at level and connect them;
 * b posts b_recvs receives (each 64 KiB of b's data) before accepting. */
void h_pair_open(struct h_pair *p, const char *opts_a, const char *opts_b, VIP_RELIABILITY_LEVEL level,
                 unsigned b_recvs);
/* The same, with b's VI attributes EnableRdmaWrite/EnableRdmaRead as given. */
void h_pair_open_enables(struct h_pair *p, const char *opts_a, const char *opts_b, VIP_RELIABILITY_LEVEL level,
                         unsigned b_recvs, bool b_rdma_write, bool b_rdma_read);
void h_pair_close(struct h_pair *p);
/* Connect vi on nic a to b's port with discriminator; returns the result. */
VIP_RETURN h_connect(struct h_nic *a, VIP_VI_HANDLE vi, uint16_t port, const char *disc, unsigned timeout_ms);
/* h_connect in a thread of its own, for tests that meanwhile play the other
 * side or kill it: fill n, vi, port, disc and timeout_ms, start, then join
 * for the result. */
struct h_connector {
    struct h_nic *n;
    VIP_VI_HANDLE vi;
    uint16_t port;
    const char *disc;
    unsigned timeout_ms;
    VIP_RETURN rc;
    pthread_t thread;
};
void h_connect_start(struct h_connector *c);
VIP_RETURN h_connect_join(struct h_connector *c);
/* Post a receive of len bytes at data offset off using descriptor slot i. */
void h_post_recv(struct h_nic *n, VIP_VI_HANDLE vi, unsigned slot, uint32_t off, uint32_t len);
void h_post_send(struct h_nic *n, VIP_VI_HANDLE vi, unsigned slot, unsigned op, uint32_t off, uint32_t len,
                 int imm, uint32_t immv, uint64_t raddr, VIP_MEM_HANDLE rh);
/* The next completed send / receive descriptor; the test fails unless one
 * completes within 5 s. */
VIP_DESCRIPTOR *h_wait_send(VIP_VI_HANDLE vi);
VIP_DESCRIPTOR *h_wait_recv(VIP_VI_HANDLE vi);
/* The VI's state (VipQueryVi must succeed). */
VIP_VI_STATE h_vi_state(VIP_VI_HANDLE vi);
/* Drain queues and destroy. */
void h_vi_destroy(VIP_VI_HANDLE vi);

#endif
