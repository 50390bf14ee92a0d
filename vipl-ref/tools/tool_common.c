#include "tool_common.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

VIP_RETURN tool_open(struct tool_env *env, const char *device)
{
    memset(env, 0, sizeof *env);
    VIP_RETURN rc = VipOpenNic(device, &env->nic);
    if (rc != VIP_SUCCESS)
        return rc;
    rc = VipCreatePtag(env->nic, &env->ptag);
    if (rc != VIP_SUCCESS)
        VipCloseNic(env->nic);
    return rc;
}

void tool_close(struct tool_env *env)
{
    if (env->nic)
        VipCloseNic(env->nic);
    env->nic = NULL;
}

VIP_RETURN tool_mem_alloc(struct tool_env *env, size_t len, int rdma_write, int rdma_read, struct tool_mem *m)
{
    size_t rounded = (len + 63) & ~(size_t)63;
    m->base = aligned_alloc(64, rounded ? rounded : 64);
    if (!m->base)
        return VIP_ERROR_RESOURCE;
    memset(m->base, 0, rounded ? rounded : 64);
    m->len = rounded ? rounded : 64;
    VIP_MEM_ATTRIBUTES ma = {.Ptag = env->ptag, .EnableRdmaWrite = rdma_write, .EnableRdmaRead = rdma_read};
    VIP_RETURN rc = VipRegisterMem(env->nic, m->base, m->len, &ma, &m->mh);
    if (rc != VIP_SUCCESS) {
        free(m->base);
        m->base = NULL;
    }
    return rc;
}

void tool_mem_free(struct tool_env *env, struct tool_mem *m)
{
    if (!m->base)
        return;
    VipDeregisterMem(env->nic, m->base, m->mh);
    free(m->base);
    m->base = NULL;
}

VIP_DESCRIPTOR *tool_desc(struct tool_mem *descs, unsigned i)
{
    return (VIP_DESCRIPTOR *)((char *)descs->base + (size_t)i * 64);
}

void tool_fill_recv(VIP_DESCRIPTOR *d, void *data, VIP_MEM_HANDLE mh, uint32_t len)
{
    memset(d, 0, 64);
    d->CS.SegCount = 1;
    d->CS.Length = len;
    d->DS[0].Local.Data.Address = data;
    d->DS[0].Local.Handle = mh;
    d->DS[0].Local.Length = len;
}

void tool_fill_send(VIP_DESCRIPTOR *d, unsigned op, void *data, VIP_MEM_HANDLE mh, uint32_t len, int imm,
                    uint32_t imm_value, uint64_t remote_addr, VIP_MEM_HANDLE remote_handle)
{
    memset(d, 0, 64);
    d->CS.Control = (VIP_UINT16)(op | (imm ? VIP_CONTROL_IMMEDIATE : 0));
    d->CS.Length = len;
    d->CS.ImmediateData = imm_value;
    VIP_DATA_SEGMENT *local;
    if (op == VIP_CONTROL_OP_SENDRECV) {
        d->CS.SegCount = 1;
        local = &d->DS[0].Local;
    } else {
        d->CS.SegCount = 2;
        d->DS[0].Remote.Data.AddressBits = remote_addr;
        d->DS[0].Remote.Handle = remote_handle;
        local = &d->DS[1].Local;
    }
    local->Data.Address = data;
    local->Handle = mh;
    local->Length = len;
}

VIP_NET_ADDRESS *tool_addr(struct tool_env *env, const char *host, const char *disc)
{
    size_t dl = strlen(disc);
    VIP_NET_ADDRESS *a = calloc(1, sizeof *a + 16 + dl);
    if (!a)
        return NULL;
    if (VipNSGetHostByName(env->nic, (VIP_CHAR *)host, a, 0) != VIP_SUCCESS) {
        free(a);
        return NULL;
    }
    a->DiscriminatorLen = (VIP_UINT16)dl;
    memcpy(a->HostAddress + a->HostAddressLen, disc, dl);
    return a;
}

long tool_parse_port(const char *s)
{
    return tool_parse_range(s, 1, 65535);
}

long tool_parse_range(const char *s, long min, long max)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (!*s || *s == ' ' || *s == '+' || *end || errno == ERANGE || v < min || v > max)
        return -1;
    return v;
}

double tool_now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

int tool_stdout_check(const char *tool)
{
    static int reported;
    if (reported)
        return 1;
    errno = 0;
    int bad = fflush(stdout) != 0;
    int e = errno;
    if (!bad && !ferror(stdout))
        return 0;
    fprintf(stderr, "%s: writing standard output failed: %s\n", tool, e ? strerror(e) : "I/O error");
    reported = 1;
    return 1;
}
