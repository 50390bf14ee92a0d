/* Handle registry, clocks, waits and callbacks deferred until the NIC lock
 * is released (a consumer's handler may call back into the library). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>
#include "provider.h"

/* ------------------------------------------------------------ handles */
/* Handles are pointers; a registry lets every call tell a live handle from
 * NULL, garbage or a destroyed one without dereferencing it. */
struct handle_slot {
    const void *p;
    enum vipl_obj_type t;
};
static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static struct handle_slot *registry;
static size_t registry_len, registry_cap;

void handle_add(void *p, enum vipl_obj_type t)
{
    pthread_mutex_lock(&registry_lock);
    if (registry_len == registry_cap) {
        size_t cap = registry_cap ? registry_cap * 2 : 64;
        struct handle_slot *n = realloc(registry, cap * sizeof *n);
        if (!n) {
            pthread_mutex_unlock(&registry_lock);
            abort(); /* cannot happen in practice: 16 bytes per object */
        }
        registry = n;
        registry_cap = cap;
    }
    registry[registry_len++] = (struct handle_slot){p, t};
    pthread_mutex_unlock(&registry_lock);
}

void handle_remove(void *p)
{
    pthread_mutex_lock(&registry_lock);
    for (size_t i = 0; i < registry_len; i++) {
        if (registry[i].p == p) {
            registry[i] = registry[--registry_len];
            break;
        }
    }
    if (registry_len == 0) {
        free(registry);
        registry = NULL;
        registry_cap = 0;
    }
    pthread_mutex_unlock(&registry_lock);
}

bool handle_valid(const void *p, enum vipl_obj_type t)
{
    if (!p)
        return false;
    bool ok = false;
    pthread_mutex_lock(&registry_lock);
    for (size_t i = registry_len; i-- > 0;) {
        if (registry[i].p == p) {
            ok = registry[i].t == t;
            break;
        }
    }
    pthread_mutex_unlock(&registry_lock);
    return ok;
}

/* --------------------------------------------------------------- time */
int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t deadline_after(VIP_ULONG timeout_ms)
{
    if (timeout_ms >= VIP_INFINITE)
        return -1;
    return now_ms() + (int64_t)timeout_ms;
}

bool nic_wait(struct vipl_nic *nic, int64_t deadline)
{
    if (deadline < 0) {
        pthread_cond_wait(&nic->cond, &nic->lock);
        return true;
    }
    int64_t left = deadline - now_ms();
    if (left <= 0)
        return false;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    ts.tv_sec += left / 1000;
    ts.tv_nsec += (left % 1000) * 1000000;
    if (ts.tv_nsec >= 1000000000) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000;
    }
    int rc = pthread_cond_timedwait(&nic->cond, &nic->lock, &ts);
    return rc != ETIMEDOUT || now_ms() < deadline;
}

uint32_t random_u32(void)
{
    uint32_t v = 0;
    if (getrandom(&v, sizeof v, 0) != (ssize_t)sizeof v)
        v = (uint32_t)now_ms() * 2654435761u;
    return v;
}

void nic_wake(struct vipl_nic *nic)
{
    uint64_t one = 1;
    ssize_t n = write(nic->wake_fd, &one, sizeof one);
    (void)n; /* a saturated counter already means "wake up" */
}

/* ---------------------------------------------------- deferred calls */
enum call_kind { CALL_ERROR, CALL_VI, CALL_CQ };
struct pending_call {
    enum call_kind kind;
    VIP_ERROR_HANDLER eh;
    VIP_VI_NOTIFY_HANDLER vh;
    VIP_CQ_NOTIFY_HANDLER ch;
    VIP_PVOID ctx;
    VIP_ERROR_DESCRIPTOR ed;
    VIP_NIC_HANDLE nic;
    VIP_VI_HANDLE vi;
    VIP_DESCRIPTOR *d;
    bool recv;
    struct pending_call *next;
};

static void enqueue(struct vipl_nic *nic, struct pending_call *c)
{
    c->next = NULL;
    if (nic->calls_tail)
        nic->calls_tail->next = c;
    else
        nic->calls = c;
    nic->calls_tail = c;
}

static const char *error_code_name(VIP_ERROR_CODE c)
{
    static const char *const names[] = {"POST_DESC", "CONN_LOST", "RECVQ_EMPTY", "VI_OVERRUN",
                                        "RDMAW_PROT", "RDMAW_DATA", "RDMAW_ABORT", "RDMAR_PROT",
                                        "COMP_PROT", "RDMA_TRANSPORT", "CATASTROPHIC"};
    return (unsigned)c < sizeof names / sizeof names[0] ? names[c] : "?";
}

static void default_error_handler(VIP_PVOID ctx, VIP_ERROR_DESCRIPTOR *ed)
{
    (void)ctx;
    fprintf(stderr, "vipl: asynchronous error VIP_ERROR_%s on VI %p\n", error_code_name(ed->ErrorCode),
            ed->ViHandle);
}

void defer_error(struct vipl_nic *nic, struct vipl_vi *vi, VIP_DESCRIPTOR *d, VIP_ERROR_CODE code,
                 VIP_RESOURCE_CODE res)
{
    struct pending_call *c = calloc(1, sizeof *c);
    if (!c)
        return;
    c->kind = CALL_ERROR;
    c->eh = nic->err_handler ? nic->err_handler : default_error_handler;
    c->ctx = nic->err_ctx;
    c->ed.NicHandle = nic;
    c->ed.ViHandle = vi;
    c->ed.DescriptorPtr = d;
    c->ed.ResourceCode = res;
    c->ed.ErrorCode = code;
    c->ed.OpCode = d ? (d->CS.Status & VIP_STATUS_OP_MASK) : 0;
    enqueue(nic, c);
}

void defer_vi_notify(struct vipl_nic *nic, struct vipl_vi *vi, VIP_VI_NOTIFY_HANDLER h, VIP_PVOID ctx,
                     VIP_DESCRIPTOR *d)
{
    struct pending_call *c = calloc(1, sizeof *c);
    if (!c)
        return;
    c->kind = CALL_VI;
    c->vh = h;
    c->ctx = ctx;
    c->nic = nic;
    c->vi = vi;
    c->d = d;
    enqueue(nic, c);
}

void defer_cq_notify(struct vipl_nic *nic, struct vipl_vi *vi, VIP_CQ_NOTIFY_HANDLER h, VIP_PVOID ctx,
                     bool recv)
{
    struct pending_call *c = calloc(1, sizeof *c);
    if (!c)
        return;
    c->kind = CALL_CQ;
    c->ch = h;
    c->ctx = ctx;
    c->nic = nic;
    c->vi = vi;
    c->recv = recv;
    enqueue(nic, c);
}

void nic_unlock(struct vipl_nic *nic)
{
    struct pending_call *list = nic->calls;
    nic->calls = nic->calls_tail = NULL;
    pthread_mutex_unlock(&nic->lock);
    while (list) {
        struct pending_call *c = list;
        list = c->next;
        switch (c->kind) {
        case CALL_ERROR: c->eh(c->ctx, &c->ed); break;
        case CALL_VI: c->vh(c->ctx, c->nic, c->vi, c->d); break;
        case CALL_CQ: c->ch(c->ctx, c->nic, c->vi, c->recv); break;
        }
        free(c);
    }
}

/* ------------------------------------------------------------- names */
const char *ViplReturnName(VIP_RETURN code)
{
    static const char *const names[] = {
        "VIP_SUCCESS", "VIP_NOT_DONE", "VIP_INVALID_PARAMETER", "VIP_ERROR_RESOURCE", "VIP_TIMEOUT",
        "VIP_REJECT", "VIP_INVALID_RELIABILITY_LEVEL", "VIP_INVALID_MTU", "VIP_INVALID_QOS",
        "VIP_INVALID_PTAG", "VIP_INVALID_RDMAREAD", "VIP_DESCRIPTOR_ERROR", "VIP_INVALID_STATE",
        "VIP_ERROR_NAMESERVICE", "VIP_NO_MATCH", "VIP_NOT_REACHABLE", "VIP_ERROR_NOT_SUPPORTED"};
    return (unsigned)code < sizeof names / sizeof names[0] ? names[code] : "VIP_(unknown)";
}

/* ------------------------------------------------------------ faults */
static const struct {
    const char *name, *id, *what;
} fault_table[VIPL_FAULT_COUNT] = {
    [VIPL_FAULT_NONE] = {"none", "", "conforming behaviour"},
#define VIPL_FAULT_ROW(sym, n, i, w) [VIPL_FAULT_##sym] = {n, i, w},
    VIPL_FAULTS(VIPL_FAULT_ROW)
#undef VIPL_FAULT_ROW
};

enum vipl_fault ViplFaultByName(const char *name)
{
    if (!name)
        return VIPL_FAULT_NONE;
    for (unsigned f = 1; f < VIPL_FAULT_COUNT; f++)
        if (strcmp(name, fault_table[f].name) == 0 || strcmp(name, fault_table[f].id) == 0)
            return (enum vipl_fault)f;
    return VIPL_FAULT_NONE;
}

const char *ViplFaultName(enum vipl_fault f) { return (unsigned)f < VIPL_FAULT_COUNT ? fault_table[f].name : "?"; }
const char *ViplFaultReqId(enum vipl_fault f) { return (unsigned)f < VIPL_FAULT_COUNT ? fault_table[f].id : "?"; }
const char *ViplFaultWhat(enum vipl_fault f) { return (unsigned)f < VIPL_FAULT_COUNT ? fault_table[f].what : "?"; }
