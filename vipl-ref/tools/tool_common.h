/* Small helpers shared by vipl-pingpong and vipl-peer: a NIC with one
 * protection tag, registered descriptors and buffers, VI addresses. */
#ifndef VIPL_TOOL_COMMON_H
#define VIPL_TOOL_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include "vipl.h"

struct tool_env {
    VIP_NIC_HANDLE nic;
    VIP_PROTECTION_HANDLE ptag;
};

/* A registered block: descriptors or data. */
struct tool_mem {
    void *base;
    size_t len;
    VIP_MEM_HANDLE mh;
};

VIP_RETURN tool_open(struct tool_env *env, const char *device);
void tool_close(struct tool_env *env);
VIP_RETURN tool_mem_alloc(struct tool_env *env, size_t len, int rdma_write, int rdma_read, struct tool_mem *m);
void tool_mem_free(struct tool_env *env, struct tool_mem *m);
/* Descriptor i (64 bytes each) in a descriptor block. */
VIP_DESCRIPTOR *tool_desc(struct tool_mem *descs, unsigned i);
void tool_fill_recv(VIP_DESCRIPTOR *d, void *data, VIP_MEM_HANDLE mh, uint32_t len);
void tool_fill_send(VIP_DESCRIPTOR *d, unsigned op, void *data, VIP_MEM_HANDLE mh, uint32_t len, int imm,
                    uint32_t imm_value, uint64_t remote_addr, VIP_MEM_HANDLE remote_handle);
/* Host name ("host" or "host:port") plus discriminator -> malloc'd address. */
VIP_NET_ADDRESS *tool_addr(struct tool_env *env, const char *host, const char *disc);
/* Parse a port 1..65535; -1 if invalid. */
long tool_parse_port(const char *s);
/* A whole decimal number in min..max (min >= 0), nothing after it; -1 if not. */
long tool_parse_range(const char *s, long min, long max);
double tool_now_us(void);
/* Flush standard output; if it could not be written (now or earlier), say so
 * on stderr ("<tool>: writing standard output failed: <reason>") and return
 * 1 (the exit code), else 0. Says it once: later calls return 1 quietly. */
int tool_stdout_check(const char *tool);

#endif
