/* NIC access, protection tags, memory registration, completion queues,
 * error callback, queries and the name service. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>
#include "provider.h"

#define LOCK_NIC_OR_RETURN(nic)                           \
    do {                                                  \
        if (!handle_valid((nic), OBJ_NIC))                \
            return VIP_INVALID_PARAMETER;                 \
        pthread_mutex_lock(&(nic)->lock);                 \
    } while (0)

static bool parse_bool(const char *v, bool *out)
{
    if (!strcmp(v, "on") || !strcmp(v, "1") || !strcmp(v, "yes")) {
        *out = true;
        return true;
    }
    if (!strcmp(v, "off") || !strcmp(v, "0") || !strcmp(v, "no")) {
        *out = false;
        return true;
    }
    return false;
}

static bool parse_uint(const char *v, unsigned long max, unsigned long *out)
{
    char *end;
    errno = 0;
    unsigned long x = strtoul(v, &end, 10);
    if (errno || end == v || *end || x > max)
        return false;
    *out = x;
    return true;
}

/* "host:port", "[v6]:port" -> sockaddr. */
static bool parse_host_port(const char *s, struct sockaddr_storage *ss, socklen_t *len)
{
    char host[128];
    const char *colon;
    if (s[0] == '[') {
        const char *close = strchr(s, ']');
        if (!close || close[1] != ':' || (size_t)(close - s - 1) >= sizeof host)
            return false;
        memcpy(host, s + 1, (size_t)(close - s - 1));
        host[close - s - 1] = 0;
        colon = close + 1;
    } else {
        colon = strrchr(s, ':');
        if (!colon || (size_t)(colon - s) >= sizeof host)
            return false;
        memcpy(host, s, (size_t)(colon - s));
        host[colon - s] = 0;
    }
    unsigned long port;
    if (!parse_uint(colon + 1, 65535, &port))
        return false;
    memset(ss, 0, sizeof *ss);
    struct sockaddr_in *a4 = (struct sockaddr_in *)ss;
    struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)ss;
    if (host[0] == 0 || !strcmp(host, "*")) {
        a4->sin_family = AF_INET;
        a4->sin_port = htons((uint16_t)port);
        *len = sizeof *a4;
        return true;
    }
    if (inet_pton(AF_INET, host, &a4->sin_addr) == 1) {
        a4->sin_family = AF_INET;
        a4->sin_port = htons((uint16_t)port);
        *len = sizeof *a4;
        return true;
    }
    if (inet_pton(AF_INET6, host, &a6->sin6_addr) == 1) {
        a6->sin6_family = AF_INET6;
        a6->sin6_port = htons((uint16_t)port);
        *len = sizeof *a6;
        return true;
    }
    return false;
}

static VIP_RETURN apply_option(struct vipl_nic *nic, const char *opt)
{
    const char *eq = strchr(opt, '=');
    if (!eq)
        return VIP_INVALID_PARAMETER;
    size_t klen = (size_t)(eq - opt);
    const char *v = eq + 1;
    unsigned long x;
    if (klen == 3 && !strncmp(opt, "crc", 3))
        return parse_bool(v, &nic->crc_on) ? VIP_SUCCESS : VIP_INVALID_PARAMETER;
    if (klen == 3 && !strncmp(opt, "dfc", 3))
        return parse_bool(v, &nic->dfc_on) ? VIP_SUCCESS : VIP_INVALID_PARAMETER;
    if (klen == 6 && !strncmp(opt, "window", 6) && parse_uint(v, 64, &x)) {
        nic->read_window = (uint16_t)x;
        return VIP_SUCCESS;
    }
    if (klen == 3 && !strncmp(opt, "seg", 3) && parse_uint(v, VIPL_SEG_PAYLOAD, &x) && x >= 1) {
        nic->seg_payload = (uint32_t)x;
        return VIP_SUCCESS;
    }
    if (klen == 6 && !strncmp(opt, "urgent", 6))
        return parse_bool(v, &nic->urgent_opt) ? VIP_SUCCESS : VIP_INVALID_PARAMETER;
    if (klen == 9 && !strncmp(opt, "refusecrc", 9))
        return parse_bool(v, &nic->refuse_crc) ? VIP_SUCCESS : VIP_INVALID_PARAMETER;
    if (klen == 5 && !strncmp(opt, "grace", 5) && parse_uint(v, 600000, &x)) {
        nic->grace_ms = (unsigned)x;
        return VIP_SUCCESS;
    }
    if (klen == 4 && !strncmp(opt, "port", 4) && parse_uint(v, 65535, &x) && x > 0) {
        nic->remote_port = (uint16_t)x;
        return VIP_SUCCESS;
    }
    if (klen == 5 && !strncmp(opt, "fault", 5)) {
        nic->fault = ViplFaultByName(v);
        return nic->fault != VIPL_FAULT_NONE ? VIP_SUCCESS : VIP_INVALID_PARAMETER;
    }
    return VIP_INVALID_PARAMETER;
}

int vipl_open_listener(const struct sockaddr_storage *ss, socklen_t len)
{
    int fd = socket(ss->ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0)
        return -1;
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (bind(fd, (const struct sockaddr *)ss, len) < 0 || listen(fd, 64) < 0) {
        close(fd);
        return -1;
    }
    return fd;
}

static void free_nic(struct vipl_nic *nic)
{
    host_leave(nic);
    if (nic->listen_fd >= 0)
        close(nic->listen_fd);
    listen_guard_free(nic);
    if (nic->wake_fd >= 0)
        close(nic->wake_fd);
    if (nic->epfd >= 0)
        close(nic->epfd);
    free(nic->rxbuf);
    pthread_mutex_destroy(&nic->lock);
    pthread_cond_destroy(&nic->cond);
    free(nic);
}

VIP_RETURN VipOpenNic(const VIP_CHAR *DeviceName, VIP_NIC_HANDLE *NicHandle)
{
    if (!DeviceName || !NicHandle)
        return VIP_INVALID_PARAMETER;
    struct vipl_nic *nic = calloc(1, sizeof *nic);
    if (!nic)
        return VIP_ERROR_RESOURCE;
    nic->listen_fd = nic->wake_fd = nic->epfd = -1;
    listen_guard_init(nic);
    pthread_mutex_init(&nic->lock, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&nic->cond, &ca);
    pthread_condattr_destroy(&ca);
    nic->crc_on = true; /* A11 */
    nic->dfc_on = false;
    nic->read_window = VIPL_DEFAULT_WINDOW;
    nic->seg_payload = VIPL_SEG_PAYLOAD;
    nic->grace_ms = VIPL_DEFAULT_GRACE_MS;
    nic->remote_port = VW_VITCP_DEFAULT_PORT;
    nic->next_mem_handle = 1;
    snprintf(nic->name, sizeof nic->name, "%s", DeviceName);

    const char *env;
    unsigned long host_port = VW_VITCP_DEFAULT_PORT;
    /* VIPL_PORT: the VI/TCP port of this installation (V1), listened on by
     * default NICs and called when the name service has no port. */
    if ((env = getenv("VIPL_PORT")) && (!parse_uint(env, 65535, &host_port) || host_port == 0))
        goto bad;
    nic->remote_port = (uint16_t)host_port;
    if ((env = getenv("VIPL_CRC")) && !parse_bool(env, &nic->crc_on))
        goto bad;
    if ((env = getenv("VIPL_DFC")) && !parse_bool(env, &nic->dfc_on))
        goto bad;

    /* DeviceName: [listen-address][,option=value...] */
    char spec[256];
    if (strlen(DeviceName) >= sizeof spec)
        goto bad;
    strcpy(spec, DeviceName);
    char *opts = strchr(spec, ',');
    if (opts)
        *opts++ = 0;
    while (opts && *opts) {
        char *nextopt = strchr(opts, ',');
        if (nextopt)
            *nextopt++ = 0;
        if (apply_option(nic, opts) != VIP_SUCCESS)
            goto bad;
        opts = nextopt;
    }
    struct sockaddr_storage ss;
    socklen_t sl;
    bool explicit_addr = strchr(spec, ':') && strncmp(spec, "/dev/", 5) != 0;
    const char *listen_spec = explicit_addr ? spec : getenv("VIPL_LISTEN");
    if (listen_spec && explicit_addr) {
        if (!parse_host_port(listen_spec, &ss, &sl))
            goto bad;
        nic->listen_fd = vipl_open_listener(&ss, sl);
        if (nic->listen_fd < 0) {
            free_nic(nic);
            return VIP_ERROR_RESOURCE;
        }
    } else if (listen_spec) {
        /* VIPL_LISTEN: the host's VI/TCP address, shared by its default NICs */
        if (!parse_host_port(listen_spec, &ss, &sl))
            goto bad;
        if (!host_join(nic, &ss, sl)) {
            free_nic(nic);
            return VIP_ERROR_RESOURCE;
        }
    } else {
        /* Default NIC: every process of the host shares the VI/TCP port,
         * routed by discriminator (host.c, issue 17). When something else
         * holds the port, the NIC still connects out. */
        char host_spec[32];
        snprintf(host_spec, sizeof host_spec, "0.0.0.0:%lu", host_port);
        parse_host_port(host_spec, &ss, &sl);
        host_join(nic, &ss, sl);
    }
    if (nic->listen_fd >= 0) {
        struct sockaddr_storage bound;
        socklen_t bl = sizeof bound;
        getsockname(nic->listen_fd, (struct sockaddr *)&bound, &bl);
        if (bound.ss_family == AF_INET6) {
            struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)&bound;
            nic->listen_port = ntohs(a6->sin6_port);
            memcpy(nic->local_addr, &a6->sin6_addr, 16);
            nic->local_addr_len = 16;
        } else {
            struct sockaddr_in *a4 = (struct sockaddr_in *)&bound;
            nic->listen_port = ntohs(a4->sin_port);
            memcpy(nic->local_addr, &a4->sin_addr, 4);
            nic->local_addr_len = 4;
        }
    }
    if (nic->local_addr_len == 0 || (nic->local_addr_len == 4 && !memcmp(nic->local_addr, "\0\0\0\0", 4))) {
        static const uint8_t loop[4] = {127, 0, 0, 1};
        memcpy(nic->local_addr, loop, 4);
        nic->local_addr_len = 4;
    }
    nic->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    nic->epfd = epoll_create1(EPOLL_CLOEXEC);
    if (nic->wake_fd < 0 || nic->epfd < 0) {
        free_nic(nic);
        return VIP_ERROR_RESOURCE;
    }
    nic->rxbuf_cap = 256 * 1024;
    nic->rxbuf = malloc(nic->rxbuf_cap);
    if (!nic->rxbuf) {
        free_nic(nic);
        return VIP_ERROR_RESOURCE;
    }
    nic->running = true;
    if (pthread_create(&nic->thread, NULL, provider_main, nic) != 0) {
        free_nic(nic);
        return VIP_ERROR_RESOURCE;
    }
    handle_add(nic, OBJ_NIC);
    *NicHandle = nic;
    return VIP_SUCCESS;
bad:
    free_nic(nic);
    return VIP_INVALID_PARAMETER;
}

VIP_RETURN VipCloseNic(VIP_NIC_HANDLE NicHandle)
{
    struct vipl_nic *nic = NicHandle;
    if (!handle_valid(nic, OBJ_NIC))
        return VIP_INVALID_PARAMETER;
    handle_remove(nic);
    pthread_mutex_lock(&nic->lock);
    nic->running = false;
    nic_wake(nic);
    pthread_mutex_unlock(&nic->lock);
    pthread_join(nic->thread, NULL);
    /* Release what the consumer did not: a closing process frees its NIC. */
    while (nic->conns) {
        struct vipl_conn *c = nic->conns;
        nic->conns = c->next;
        conn_free(c);
    }
    while (nic->vis) {
        struct vipl_vi *vi = nic->vis;
        nic->vis = vi->next;
        handle_remove(vi);
        vi_close_fd(vi, false);
        if (vi->kick_fd >= 0)
            close(vi->kick_fd);
        free(vi->io_rxbuf);
        if (vi->framer_ready)
            vw_vitcp_framer_free(&vi->framer);
        free(vi->sq.e);
        free(vi->rq.e);
        free(vi->out);
        free(vi->gather);
        free(vi);
    }
    while (nic->cqs) {
        struct vipl_cq *cq = nic->cqs;
        nic->cqs = cq->next;
        handle_remove(cq);
        free(cq->ring);
        free(cq);
    }
    while (nic->regions) {
        struct vipl_region *r = nic->regions;
        nic->regions = r->next;
        free(r);
    }
    while (nic->ptags) {
        struct vipl_ptag *p = nic->ptags;
        nic->ptags = p->next;
        handle_remove(p);
        free(p);
    }
    while (nic->ns) {
        struct ns_entry *e = nic->ns;
        nic->ns = e->next;
        free(e);
    }
    nic_unlock(nic); /* runs callbacks still pending, then frees them */
    free_nic(nic);
    return VIP_SUCCESS;
}

VIP_RETURN VipQueryNic(VIP_NIC_HANDLE NicHandle, VIP_NIC_ATTRIBUTES *a)
{
    struct vipl_nic *nic = NicHandle;
    if (!a)
        return VIP_INVALID_PARAMETER;
    LOCK_NIC_OR_RETURN(nic);
    memset(a, 0, sizeof *a);
    snprintf(a->Name, sizeof a->Name, "%s", nic->name);
    a->HardwareVersion = 0;
    a->ProviderVersion = 0x00010000; /* 1.0: VI/TCP version 1 */
    a->NicAddressLen = nic->local_addr_len;
    a->LocalNicAddress = nic->local_addr;
    a->ThreadSafe = VIP_TRUE;
    a->MaxDiscriminatorLen = VW_VITCP_DISC_MAX;
    a->MaxRegisterBytes = (VIP_ULONG)1 << 40;
    a->MaxRegisterRegions = 1u << 20;
    a->MaxRegisterBlockBytes = (VIP_ULONG)1 << 40;
    a->MaxVI = 1024;
    a->MaxDescriptorsPerQueue = VIPL_QUEUE_CAP;
    a->MaxSegmentsPerDesc = VIPL_MAX_SEGS;
    a->MaxCQ = 1024;
    a->MaxCQEntries = 1u << 16;
    a->MaxTransferSize = VIPL_MAX_TRANSFER;
    a->NativeMTU = VIPL_SEG_PAYLOAD;
    a->MaxPtags = 1024;
    a->ReliabilityLevelSupport =
        VIP_SERVICE_UNRELIABLE | VIP_SERVICE_RELIABLE_DELIVERY | VIP_SERVICE_RELIABLE_RECEPTION;
    a->RDMAReadSupport = VIP_SERVICE_RELIABLE_DELIVERY | VIP_SERVICE_RELIABLE_RECEPTION;
    nic_unlock(nic);
    return VIP_SUCCESS;
}

VIP_RETURN ViplNicListenPort(VIP_NIC_HANDLE NicHandle, VIP_UINT16 *Port)
{
    struct vipl_nic *nic = NicHandle;
    if (!Port)
        return VIP_INVALID_PARAMETER;
    LOCK_NIC_OR_RETURN(nic);
    VIP_RETURN rc = nic->listen_fd >= 0 || nic->host ? VIP_SUCCESS : VIP_ERROR_RESOURCE;
    *Port = nic->listen_port;
    nic_unlock(nic);
    return rc;
}

VIP_RETURN ViplNicSetRemotePort(VIP_NIC_HANDLE NicHandle, VIP_UINT16 Port)
{
    struct vipl_nic *nic = NicHandle;
    if (Port == 0)
        return VIP_INVALID_PARAMETER;
    LOCK_NIC_OR_RETURN(nic);
    nic->remote_port = Port;
    nic_unlock(nic);
    return VIP_SUCCESS;
}

VIP_RETURN ViplNicSetFault(VIP_NIC_HANDLE NicHandle, enum vipl_fault f)
{
    struct vipl_nic *nic = NicHandle;
    if ((unsigned)f >= VIPL_FAULT_COUNT)
        return VIP_INVALID_PARAMETER;
    LOCK_NIC_OR_RETURN(nic);
    nic->fault = f;
    nic_unlock(nic);
    return VIP_SUCCESS;
}

VIP_RETURN VipErrorCallback(VIP_NIC_HANDLE NicHandle, VIP_PVOID Context, VIP_ERROR_HANDLER Handler)
{
    struct vipl_nic *nic = NicHandle;
    LOCK_NIC_OR_RETURN(nic);
    nic->err_handler = Handler;
    nic->err_ctx = Context;
    nic_unlock(nic);
    return VIP_SUCCESS;
}

VIP_RETURN VipQuerySystemManagementInfo(VIP_NIC_HANDLE NicHandle, VIP_ULONG InfoType, VIP_PVOID SysManInfo)
{
    struct vipl_nic *nic = NicHandle;
    if (InfoType == VIP_SMI_AUTODISCOVERY && SysManInfo && handle_valid(nic, OBJ_NIC))
        return VIP_ERROR_NOT_SUPPORTED; /* no host discovery over TCP/IP */
    if (InfoType != VIPL_SMI_STATISTICS || !SysManInfo)
        return VIP_INVALID_PARAMETER;
    LOCK_NIC_OR_RETURN(nic);
    memcpy(SysManInfo, &nic->stats, sizeof nic->stats);
    nic_unlock(nic);
    return VIP_SUCCESS;
}

/* ------------------------------------------------------ protection tags */
VIP_RETURN VipCreatePtag(VIP_NIC_HANDLE NicHandle, VIP_PROTECTION_HANDLE *ProtectionTag)
{
    struct vipl_nic *nic = NicHandle;
    if (!ProtectionTag)
        return VIP_INVALID_PARAMETER;
    LOCK_NIC_OR_RETURN(nic);
    struct vipl_ptag *p = calloc(1, sizeof *p);
    if (!p) {
        nic_unlock(nic);
        return VIP_ERROR_RESOURCE;
    }
    p->nic = nic;
    p->next = nic->ptags;
    nic->ptags = p;
    handle_add(p, OBJ_PTAG);
    *ProtectionTag = p;
    nic_unlock(nic);
    return VIP_SUCCESS;
}

VIP_RETURN VipDestroyPtag(VIP_NIC_HANDLE NicHandle, VIP_PROTECTION_HANDLE ProtectionTag)
{
    struct vipl_nic *nic = NicHandle;
    struct vipl_ptag *p = ProtectionTag;
    if (!handle_valid(p, OBJ_PTAG))
        return VIP_INVALID_PARAMETER;
    LOCK_NIC_OR_RETURN(nic);
    if (p->nic != nic) {
        nic_unlock(nic);
        return VIP_INVALID_PARAMETER;
    }
    if (p->refs) {
        nic_unlock(nic);
        return VIP_ERROR_RESOURCE;
    }
    for (struct vipl_ptag **pp = &nic->ptags; *pp; pp = &(*pp)->next)
        if (*pp == p) {
            *pp = p->next;
            break;
        }
    handle_remove(p);
    free(p);
    nic_unlock(nic);
    return VIP_SUCCESS;
}

/* ------------------------------------------------------------- memory */
struct vipl_region *region_find(struct vipl_nic *nic, VIP_MEM_HANDLE h)
{
    for (struct vipl_region *r = nic->regions; r; r = r->next)
        if (r->handle == h)
            return r;
    return NULL;
}

struct vipl_region *region_check(struct vipl_nic *nic, VIP_MEM_HANDLE h, uint64_t addr, uint64_t len,
                                 struct vipl_ptag *ptag)
{
    struct vipl_region *r = region_find(nic, h);
    if (!r || r->ptag != ptag)
        return NULL;
    /* [addr, addr+len) inside [r->addr, r->addr+r->len), without overflow. */
    if (addr < r->addr || addr - r->addr > r->len || len > r->len - (addr - r->addr))
        return NULL;
    return r;
}

static bool ptag_ok(struct vipl_nic *nic, VIP_PROTECTION_HANDLE p)
{
    return handle_valid(p, OBJ_PTAG) && ((struct vipl_ptag *)p)->nic == nic;
}

VIP_RETURN VipRegisterMem(VIP_NIC_HANDLE NicHandle, VIP_PVOID VirtualAddress, VIP_ULONG Length,
                          VIP_MEM_ATTRIBUTES *MemAttribs, VIP_MEM_HANDLE *MemoryHandle)
{
    struct vipl_nic *nic = NicHandle;
    if (MemoryHandle)
        *MemoryHandle = 0;
    if (!VirtualAddress || Length == 0 || !MemAttribs || !MemoryHandle ||
        (uintptr_t)VirtualAddress + Length < (uintptr_t)VirtualAddress)
        return VIP_INVALID_PARAMETER;
    LOCK_NIC_OR_RETURN(nic);
    if (!ptag_ok(nic, MemAttribs->Ptag)) {
        nic_unlock(nic);
        return VIP_INVALID_PTAG;
    }
    struct vipl_region *r = calloc(1, sizeof *r);
    if (!r) {
        nic_unlock(nic);
        return VIP_ERROR_RESOURCE;
    }
    r->handle = nic->next_mem_handle++;
    if (nic->next_mem_handle == 0)
        nic->next_mem_handle = 1;
    r->addr = (uintptr_t)VirtualAddress;
    r->len = Length;
    r->ptag = MemAttribs->Ptag;
    r->ptag->refs++;
    r->rdma_write = MemAttribs->EnableRdmaWrite != 0;
    r->rdma_read = MemAttribs->EnableRdmaRead != 0;
    r->next = nic->regions;
    nic->regions = r;
    *MemoryHandle = r->handle;
    nic_unlock(nic);
    return VIP_SUCCESS;
}

VIP_RETURN VipDeregisterMem(VIP_NIC_HANDLE NicHandle, VIP_PVOID VirtualAddress, VIP_MEM_HANDLE MemoryHandle)
{
    struct vipl_nic *nic = NicHandle;
    LOCK_NIC_OR_RETURN(nic);
    for (struct vipl_region **pp = &nic->regions; *pp; pp = &(*pp)->next) {
        struct vipl_region *r = *pp;
        if (r->handle == MemoryHandle && r->addr == (uintptr_t)VirtualAddress) {
            *pp = r->next;
            r->ptag->refs--;
            /* An inbound RDMA Write in progress into this region stops placing. */
            for (struct vipl_vi *vi = nic->vis; vi; vi = vi->next)
                if (vi->rx_region == r) {
                    vi->rx_region = NULL;
                    vi->rx_status |= VIP_STATUS_RDMA_PROT_ERROR;
                }
            free(r);
            nic_unlock(nic);
            return VIP_SUCCESS;
        }
    }
    nic_unlock(nic);
    return VIP_INVALID_PARAMETER;
}

VIP_RETURN VipQueryMem(VIP_NIC_HANDLE NicHandle, VIP_PVOID Address, VIP_MEM_HANDLE MemHandle,
                       VIP_MEM_ATTRIBUTES *MemAttribs)
{
    struct vipl_nic *nic = NicHandle;
    if (!MemAttribs)
        return VIP_INVALID_PARAMETER;
    LOCK_NIC_OR_RETURN(nic);
    struct vipl_region *r = region_find(nic, MemHandle);
    if (!r || r->addr != (uintptr_t)Address) {
        nic_unlock(nic);
        return VIP_INVALID_PARAMETER;
    }
    MemAttribs->Ptag = r->ptag;
    MemAttribs->EnableRdmaWrite = r->rdma_write;
    MemAttribs->EnableRdmaRead = r->rdma_read;
    nic_unlock(nic);
    return VIP_SUCCESS;
}

VIP_RETURN VipSetMemAttributes(VIP_NIC_HANDLE NicHandle, VIP_PVOID Address, VIP_MEM_HANDLE MemHandle,
                               VIP_MEM_ATTRIBUTES *MemAttribs)
{
    struct vipl_nic *nic = NicHandle;
    if (!MemAttribs)
        return VIP_INVALID_PARAMETER;
    LOCK_NIC_OR_RETURN(nic);
    struct vipl_region *r = region_find(nic, MemHandle);
    if (!r || r->addr != (uintptr_t)Address) {
        nic_unlock(nic);
        return VIP_INVALID_PARAMETER;
    }
    if (!ptag_ok(nic, MemAttribs->Ptag)) {
        nic_unlock(nic);
        return VIP_INVALID_PTAG;
    }
    r->ptag->refs--;
    r->ptag = MemAttribs->Ptag;
    r->ptag->refs++;
    r->rdma_write = MemAttribs->EnableRdmaWrite != 0;
    r->rdma_read = MemAttribs->EnableRdmaRead != 0;
    nic_unlock(nic);
    return VIP_SUCCESS;
}

/* --------------------------------------------------- completion queues */
VIP_RETURN VipCreateCQ(VIP_NIC_HANDLE NicHandle, VIP_ULONG EntryCount, VIP_CQ_HANDLE *CQHandle)
{
    struct vipl_nic *nic = NicHandle;
    if (!CQHandle || EntryCount == 0)
        return VIP_INVALID_PARAMETER;
    if (EntryCount > (1u << 16))
        return VIP_ERROR_RESOURCE;
    LOCK_NIC_OR_RETURN(nic);
    struct vipl_cq *cq = calloc(1, sizeof *cq);
    if (cq)
        cq->ring = calloc(EntryCount, sizeof *cq->ring);
    if (!cq || !cq->ring) {
        free(cq);
        nic_unlock(nic);
        return VIP_ERROR_RESOURCE;
    }
    cq->nic = nic;
    cq->cap = EntryCount;
    cq->next = nic->cqs;
    nic->cqs = cq;
    handle_add(cq, OBJ_CQ);
    *CQHandle = cq;
    nic_unlock(nic);
    return VIP_SUCCESS;
}

VIP_RETURN VipDestroyCQ(VIP_CQ_HANDLE CQHandle)
{
    struct vipl_cq *cq = CQHandle;
    if (!handle_valid(cq, OBJ_CQ))
        return VIP_INVALID_PARAMETER;
    struct vipl_nic *nic = cq->nic;
    pthread_mutex_lock(&nic->lock);
    if (cq->refs) {
        nic_unlock(nic);
        return VIP_ERROR_RESOURCE;
    }
    for (struct vipl_cq **pp = &nic->cqs; *pp; pp = &(*pp)->next)
        if (*pp == cq) {
            *pp = cq->next;
            break;
        }
    handle_remove(cq);
    free(cq->ring);
    free(cq);
    nic_unlock(nic);
    return VIP_SUCCESS;
}

VIP_RETURN VipResizeCQ(VIP_CQ_HANDLE CQHandle, VIP_ULONG EntryCount)
{
    struct vipl_cq *cq = CQHandle;
    if (!handle_valid(cq, OBJ_CQ) || EntryCount == 0)
        return VIP_INVALID_PARAMETER;
    struct vipl_nic *nic = cq->nic;
    pthread_mutex_lock(&nic->lock);
    struct vipl_cq_entry *ring = EntryCount <= (1u << 16) && EntryCount >= cq->count
                                     ? calloc(EntryCount, sizeof *ring) : NULL;
    if (!ring) {
        nic_unlock(nic);
        return VIP_ERROR_RESOURCE;
    }
    for (size_t i = 0; i < cq->count; i++)
        ring[i] = cq->ring[(cq->head + i) % cq->cap];
    free(cq->ring);
    cq->ring = ring;
    cq->cap = EntryCount;
    cq->head = 0;
    nic_unlock(nic);
    return VIP_SUCCESS;
}

static bool cq_pop(struct vipl_cq *cq, VIP_VI_HANDLE *vi, VIP_BOOLEAN *recv)
{
    if (cq->count == 0)
        return false;
    struct vipl_cq_entry e = cq->ring[cq->head];
    cq->head = (cq->head + 1) % cq->cap;
    cq->count--;
    *vi = e.vi;
    *recv = e.recv;
    return true;
}

VIP_RETURN VipCQDone(VIP_CQ_HANDLE CQHandle, VIP_VI_HANDLE *ViHandle, VIP_BOOLEAN *RecvQueue)
{
    struct vipl_cq *cq = CQHandle;
    if (!handle_valid(cq, OBJ_CQ) || !ViHandle || !RecvQueue)
        return VIP_INVALID_PARAMETER;
    pthread_mutex_lock(&cq->nic->lock);
    bool got = cq_pop(cq, ViHandle, RecvQueue);
    nic_unlock(cq->nic);
    return got ? VIP_SUCCESS : VIP_NOT_DONE;
}

VIP_RETURN VipCQWait(VIP_CQ_HANDLE CQHandle, VIP_ULONG Timeout, VIP_VI_HANDLE *ViHandle, VIP_BOOLEAN *RecvQueue)
{
    struct vipl_cq *cq = CQHandle;
    if (!handle_valid(cq, OBJ_CQ) || !ViHandle || !RecvQueue)
        return VIP_INVALID_PARAMETER;
    struct vipl_nic *nic = cq->nic;
    int64_t deadline = deadline_after(Timeout);
    pthread_mutex_lock(&nic->lock);
    for (;;) {
        if (cq_pop(cq, ViHandle, RecvQueue)) {
            nic_unlock(nic);
            return VIP_SUCCESS;
        }
        if (!nic_wait(nic, deadline) || !handle_valid(cq, OBJ_CQ)) {
            VIP_RETURN rc = handle_valid(cq, OBJ_CQ) && cq_pop(cq, ViHandle, RecvQueue) ? VIP_SUCCESS
                                                                                       : VIP_TIMEOUT;
            nic_unlock(nic);
            return rc;
        }
    }
}

VIP_RETURN VipCQNotify(VIP_CQ_HANDLE CQHandle, VIP_PVOID Context, VIP_CQ_NOTIFY_HANDLER Handler)
{
    struct vipl_cq *cq = CQHandle;
    if (!handle_valid(cq, OBJ_CQ) || !Handler)
        return VIP_INVALID_PARAMETER;
    struct vipl_nic *nic = cq->nic;
    pthread_mutex_lock(&nic->lock);
    VIP_VI_HANDLE vi;
    VIP_BOOLEAN recv;
    if (cq_pop(cq, &vi, &recv)) {
        defer_cq_notify(nic, vi, Handler, Context, recv);
    } else {
        cq->notify = Handler;
        cq->notify_ctx = Context;
    }
    nic_unlock(nic);
    return VIP_SUCCESS;
}

/* -------------------------------------------------------- name service */
VIP_RETURN VipNSInit(VIP_NIC_HANDLE NicHandle, VIP_PVOID NSInitInfo)
{
    (void)NSInitInfo;
    return handle_valid(NicHandle, OBJ_NIC) ? VIP_SUCCESS : VIP_INVALID_PARAMETER;
}

VIP_RETURN VipNSShutdown(VIP_NIC_HANDLE NicHandle)
{
    return handle_valid(NicHandle, OBJ_NIC) ? VIP_SUCCESS : VIP_INVALID_PARAMETER;
}

uint16_t ns_port_for(struct vipl_nic *nic, const uint8_t *addr, uint16_t len)
{
    for (struct ns_entry *e = nic->ns; e; e = e->next)
        if (e->addr_len == len && !memcmp(e->addr, addr, len))
            return e->port;
    return nic->remote_port;
}

VIP_RETURN VipNSGetHostByName(VIP_NIC_HANDLE NicHandle, VIP_CHAR *Name, VIP_NET_ADDRESS *Address,
                              VIP_ULONG NameIndex)
{
    struct vipl_nic *nic = NicHandle;
    if (!handle_valid(nic, OBJ_NIC) || !Name || !Address)
        return VIP_INVALID_PARAMETER;
    /* "host", "host:port", "[v6]:port" (A15) */
    char host[256];
    unsigned long port = 0;
    if (strlen(Name) >= sizeof host || !*Name)
        return VIP_ERROR_NAMESERVICE;
    strcpy(host, Name);
    char *colon = NULL;
    if (host[0] == '[') {
        char *close = strchr(host, ']');
        if (!close || (close[1] && close[1] != ':'))
            return VIP_ERROR_NAMESERVICE;
        if (close[1] == ':') {
            char *end;
            port = strtoul(close + 2, &end, 10);
            if (*end || port == 0 || port > 65535)
                return VIP_ERROR_NAMESERVICE;
        }
        *close = 0;
        memmove(host, host + 1, strlen(host + 1) + 1);
    } else if ((colon = strchr(host, ':')) && !strchr(colon + 1, ':')) {
        *colon = 0;
        char *end;
        port = strtoul(colon + 1, &end, 10);
        if (*end || port == 0 || port > 65535)
            return VIP_ERROR_NAMESERVICE;
    }
    struct addrinfo hints = {.ai_socktype = SOCK_STREAM}, *res = NULL;
    if (getaddrinfo(host, NULL, &hints, &res) != 0 || !res)
        return VIP_ERROR_NAMESERVICE;
    /* IPv4 answers first: VIA programs of the time expect 4-byte addresses. */
    VIP_ULONG idx = 0;
    VIP_RETURN rc = VIP_ERROR_NAMESERVICE;
    for (int pass = 0; pass < 2 && rc != VIP_SUCCESS; pass++) {
        for (struct addrinfo *ai = res; ai; ai = ai->ai_next) {
            int fam = pass == 0 ? AF_INET : AF_INET6;
            if (ai->ai_family != fam)
                continue;
            if (idx++ != NameIndex)
                continue;
            uint8_t a[16];
            uint16_t alen;
            if (fam == AF_INET) {
                memcpy(a, &((struct sockaddr_in *)ai->ai_addr)->sin_addr, 4);
                alen = 4;
            } else {
                memcpy(a, &((struct sockaddr_in6 *)ai->ai_addr)->sin6_addr, 16);
                alen = 16;
            }
            Address->HostAddressLen = alen;
            memcpy(Address->HostAddress, a, alen);
            rc = VIP_SUCCESS;
            if (port) {
                pthread_mutex_lock(&nic->lock);
                struct ns_entry *e = NULL;
                for (e = nic->ns; e; e = e->next)
                    if (e->addr_len == alen && !memcmp(e->addr, a, alen))
                        break;
                if (!e && (e = calloc(1, sizeof *e))) {
                    e->next = nic->ns;
                    nic->ns = e;
                }
                if (e) {
                    memcpy(e->addr, a, alen);
                    e->addr_len = alen;
                    e->port = (uint16_t)port;
                }
                nic_unlock(nic);
            }
            break;
        }
    }
    freeaddrinfo(res);
    return rc;
}

VIP_RETURN VipNSGetHostByAddr(VIP_NIC_HANDLE NicHandle, VIP_NET_ADDRESS *Address, VIP_CHAR *Name,
                              VIP_ULONG *NameLen)
{
    if (!handle_valid(NicHandle, OBJ_NIC) || !Address || !Name || !NameLen || *NameLen == 0)
        return VIP_INVALID_PARAMETER;
    struct sockaddr_storage ss;
    memset(&ss, 0, sizeof ss);
    socklen_t sl;
    if (Address->HostAddressLen == 4) {
        struct sockaddr_in *a = (struct sockaddr_in *)&ss;
        a->sin_family = AF_INET;
        memcpy(&a->sin_addr, Address->HostAddress, 4);
        sl = sizeof *a;
    } else if (Address->HostAddressLen == 16) {
        struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;
        a->sin6_family = AF_INET6;
        memcpy(&a->sin6_addr, Address->HostAddress, 16);
        sl = sizeof *a;
    } else {
        return VIP_INVALID_PARAMETER;
    }
    char host[NI_MAXHOST];
    if (getnameinfo((struct sockaddr *)&ss, sl, host, sizeof host, NULL, 0, 0) != 0)
        return VIP_ERROR_NAMESERVICE;
    size_t need = strlen(host) + 1;
    if (need > *NameLen) {
        *NameLen = need;
        return VIP_ERROR_RESOURCE;
    }
    memcpy(Name, host, need);
    *NameLen = need;
    return VIP_SUCCESS;
}
