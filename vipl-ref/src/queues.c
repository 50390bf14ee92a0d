/* VIs, descriptors, work queues and their completion (VIA chapter 6,
 * Appendix A 9.3 and 9.6). Completion order is strict FIFO per queue (A6). */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "provider.h"

VIP_DESCRIPTOR_SEGMENT *desc_seg(VIP_DESCRIPTOR *d, unsigned i)
{
    /* Segments follow the control segment; a descriptor may hold more than
     * the two that VIP_DESCRIPTOR declares, so index from the base pointer. */
    return (VIP_DESCRIPTOR_SEGMENT *)((char *)d + sizeof(VIP_CONTROL_SEGMENT)) + i;
}

uint32_t desc_check_local(struct vipl_vi *vi, VIP_DESCRIPTOR *d, unsigned first_seg, uint64_t *total)
{
    uint64_t sum = 0;
    if (d->CS.SegCount < first_seg || d->CS.SegCount - first_seg > VIPL_MAX_SEGS)
        return VIP_STATUS_FORMAT_ERROR;
    for (unsigned i = first_seg; i < d->CS.SegCount; i++) {
        VIP_DATA_SEGMENT *s = &desc_seg(d, i)->Local;
        if (s->Length && !region_check(vi->nic, s->Handle, s->Data.AddressBits, s->Length, vi->attrs.Ptag))
            return VIP_STATUS_PROTECTION_ERROR;
        sum += s->Length;
    }
    *total = sum;
    return 0;
}

void desc_scatter(VIP_DESCRIPTOR *d, unsigned first_seg, uint64_t offset, const uint8_t *src, size_t len)
{
    for (unsigned i = first_seg; i < d->CS.SegCount && len; i++) {
        VIP_DATA_SEGMENT *s = &desc_seg(d, i)->Local;
        if (offset >= s->Length) {
            offset -= s->Length;
            continue;
        }
        size_t n = s->Length - offset < len ? (size_t)(s->Length - offset) : len;
        memcpy((uint8_t *)(uintptr_t)s->Data.AddressBits + offset, src, n);
        src += n;
        len -= n;
        offset = 0;
    }
}

void desc_gather(VIP_DESCRIPTOR *d, unsigned first_seg, uint64_t offset, uint8_t *dst, size_t len)
{
    for (unsigned i = first_seg; i < d->CS.SegCount && len; i++) {
        VIP_DATA_SEGMENT *s = &desc_seg(d, i)->Local;
        if (offset >= s->Length) {
            offset -= s->Length;
            continue;
        }
        size_t n = s->Length - offset < len ? (size_t)(s->Length - offset) : len;
        memcpy(dst, (const uint8_t *)(uintptr_t)s->Data.AddressBits + offset, n);
        dst += n;
        len -= n;
        offset = 0;
    }
}

/* Tell the consumer about completions at the head of q: CQ entries, or a
 * pending one-shot notify handler. */
void wq_push_completion(struct vipl_vi *vi, struct wq *q)
{
    struct vipl_nic *nic = vi->nic;
    bool recv = q == &vi->rq;
    if (q->cq) {
        struct vipl_cq *cq = q->cq;
        if (cq->notify) {
            VIP_CQ_NOTIFY_HANDLER h = cq->notify;
            cq->notify = NULL;
            defer_cq_notify(nic, vi, h, cq->notify_ctx, recv);
        } else if (cq->count < cq->cap) {
            cq->ring[(cq->head + cq->count) % cq->cap] = (struct vipl_cq_entry){vi, recv};
            cq->count++;
        } else {
            defer_error(nic, vi, NULL, VIP_ERROR_CATASTROPHIC, VIP_RESOURCE_CQ);
        }
    } else if (q->notify && q->head != q->done) {
        VIP_VI_NOTIFY_HANDLER h = q->notify;
        q->notify = NULL;
        VIP_DESCRIPTOR *d = wq_at(q, q->head)->desc;
        q->head++;
        defer_vi_notify(nic, vi, h, q->notify_ctx, d);
    }
    pthread_cond_broadcast(&nic->cond);
    vi_kick(vi); /* a consumer blocked in poll() on this VI's socket */
}

void vi_complete_entry(struct vipl_vi *vi, struct wq *q, struct wq_entry *e, uint32_t status)
{
    e->desc->CS.Status = status | VIP_STATUS_DONE;
    e->completed = true;
    /* FIFO: advance over every completed entry at the completion front. */
    while (q->done != q->tail && wq_at(q, q->done)->completed) {
        q->done++;
        wq_push_completion(vi, q);
    }
}

static uint32_t op_status(const VIP_DESCRIPTOR *d)
{
    switch (d->CS.Control & VIP_CONTROL_OP_MASK) {
    case VIP_CONTROL_OP_RDMAWRITE: return VIP_STATUS_OP_RDMA_WRITE;
    case VIP_CONTROL_OP_RDMAREAD: return VIP_STATUS_OP_RDMA_READ;
    default: return VIP_STATUS_OP_SEND;
    }
}

/* Complete sends whose condition holds, in order (A6). */
void vi_progress_sends(struct vipl_vi *vi)
{
    struct wq *q = &vi->sq;
    bool rr = (vi->attrs.ReliabilityLevel & VIP_SERVICE_RELIABLE_RECEPTION) != 0;
    while (q->done != q->next) {
        struct wq_entry *e = wq_at(q, q->done);
        if (e->completed) {
            q->done++;
            wq_push_completion(vi, q);
            continue;
        }
        bool ready;
        if ((e->desc->CS.Control & VIP_CONTROL_OP_MASK) == VIP_CONTROL_OP_RDMAREAD)
            ready = e->read_done;
        else
            ready = e->transmitted && vi->tx_written >= e->tx_end &&
                    (!rr || (int32_t)(vi->peer_ack - e->msg_num) >= 0);
        if (!ready)
            break;
        e->desc->CS.Status = e->status | op_status(e->desc) | VIP_STATUS_DONE;
        e->completed = true;
        q->done++;
        wq_push_completion(vi, q);
    }
}

static void flush_queue(struct vipl_vi *vi, struct wq *q, uint32_t op)
{
    for (uint32_t i = q->done; i != q->tail; i++) {
        struct wq_entry *e = wq_at(q, i);
        if (!e->completed) {
            uint32_t o = q == &vi->sq ? op_status(e->desc) : op;
            e->desc->CS.Status = e->status | o | VIP_STATUS_DESC_FLUSHED_ERROR | VIP_STATUS_DONE;
            e->completed = true;
        }
    }
    while (q->done != q->tail) {
        q->done++;
        wq_push_completion(vi, q);
    }
    q->next = q->tail;
}

void vi_flush_queues(struct vipl_vi *vi)
{
    flush_queue(vi, &vi->sq, VIP_STATUS_OP_SEND);
    flush_queue(vi, &vi->rq, VIP_STATUS_OP_RECEIVE);
}

/* ------------------------------------------------------------ VIs */
static VIP_RETURN check_attrs(struct vipl_nic *nic, const VIP_VI_ATTRIBUTES *a)
{
    VIP_RELIABILITY_LEVEL level = a->ReliabilityLevel & ~VIP_SERVICE_DFC;
    if (level != VIP_SERVICE_UNRELIABLE && level != VIP_SERVICE_RELIABLE_DELIVERY &&
        level != VIP_SERVICE_RELIABLE_RECEPTION)
        return VIP_INVALID_RELIABILITY_LEVEL;
    if (a->MaxTransferSize == 0 || a->MaxTransferSize > VIPL_MAX_TRANSFER) /* A2 */
        return VIP_INVALID_MTU;
    if (a->QoS != NULL)
        return VIP_INVALID_QOS;
    if (!handle_valid(a->Ptag, OBJ_PTAG) || ((struct vipl_ptag *)a->Ptag)->nic != nic)
        return VIP_INVALID_PTAG;
    if (a->EnableRdmaRead && level == VIP_SERVICE_UNRELIABLE) /* VIA 2.5.1 */
        return VIP_INVALID_RDMAREAD;
    return VIP_SUCCESS;
}

static bool cq_ok(struct vipl_nic *nic, VIP_CQ_HANDLE cq)
{
    return !cq || (handle_valid(cq, OBJ_CQ) && ((struct vipl_cq *)cq)->nic == nic);
}

VIP_RETURN VipCreateVi(VIP_NIC_HANDLE NicHandle, VIP_VI_ATTRIBUTES *ViAttribs, VIP_CQ_HANDLE SendCQHandle,
                       VIP_CQ_HANDLE RecvCQHandle, VIP_VI_HANDLE *ViHandle)
{
    struct vipl_nic *nic = NicHandle;
    if (!handle_valid(nic, OBJ_NIC) || !ViAttribs || !ViHandle)
        return VIP_INVALID_PARAMETER;
    pthread_mutex_lock(&nic->lock);
    VIP_RETURN rc = VIP_SUCCESS;
    if (!cq_ok(nic, SendCQHandle) || !cq_ok(nic, RecvCQHandle))
        rc = VIP_INVALID_PARAMETER;
    else
        rc = check_attrs(nic, ViAttribs);
    if (rc != VIP_SUCCESS) {
        nic_unlock(nic);
        return rc;
    }
    struct vipl_vi *vi = calloc(1, sizeof *vi);
    if (vi) {
        vi->sq.e = calloc(VIPL_QUEUE_CAP, sizeof *vi->sq.e);
        vi->rq.e = calloc(VIPL_QUEUE_CAP, sizeof *vi->rq.e);
    }
    if (!vi || !vi->sq.e || !vi->rq.e) {
        if (vi) {
            free(vi->sq.e);
            free(vi->rq.e);
        }
        free(vi);
        nic_unlock(nic);
        return VIP_ERROR_RESOURCE;
    }
    vi->nic = nic;
    vi->attrs = *ViAttribs;
    vi->state = VIP_STATE_IDLE;
    vi->fd = vi->ep_fd = vi->kick_fd = vi->io_zombie_fd = -1;
    vi->sq.cq = SendCQHandle;
    vi->rq.cq = RecvCQHandle;
    if (vi->sq.cq)
        vi->sq.cq->refs++;
    if (vi->rq.cq)
        vi->rq.cq->refs++;
    ((struct vipl_ptag *)vi->attrs.Ptag)->refs++;
    vi->next = nic->vis;
    nic->vis = vi;
    handle_add(vi, OBJ_VI);
    *ViHandle = vi;
    nic_unlock(nic);
    return VIP_SUCCESS;
}

#define LOCK_VI_OR_RETURN(vi)                      \
    do {                                           \
        if (!handle_valid((vi), OBJ_VI))           \
            return VIP_INVALID_PARAMETER;          \
        pthread_mutex_lock(&(vi)->nic->lock);      \
    } while (0)

VIP_RETURN VipDestroyVi(VIP_VI_HANDLE ViHandle)
{
    struct vipl_vi *vi = ViHandle;
    LOCK_VI_OR_RETURN(vi);
    struct vipl_nic *nic = vi->nic;
    if (vi->state != VIP_STATE_IDLE || vi->sq.head != vi->sq.tail || vi->rq.head != vi->rq.tail ||
        vi->waiters) { /* another thread is inside a wait on it */
        nic_unlock(nic);
        return VIP_ERROR_RESOURCE;
    }
    for (struct vipl_vi **pp = &nic->vis; *pp; pp = &(*pp)->next)
        if (*pp == vi) {
            *pp = vi->next;
            break;
        }
    handle_remove(vi);
    vi_close_fd(vi, false);
    if (vi->kick_fd >= 0)
        close(vi->kick_fd);
    free(vi->io_rxbuf);
    if (vi->framer_ready)
        vw_vitcp_framer_free(&vi->framer);
    if (vi->sq.cq)
        vi->sq.cq->refs--;
    if (vi->rq.cq)
        vi->rq.cq->refs--;
    ((struct vipl_ptag *)vi->attrs.Ptag)->refs--;
    free(vi->sq.e);
    free(vi->rq.e);
    free(vi->out);
    free(vi->gather);
    free(vi);
    nic_unlock(nic);
    return VIP_SUCCESS;
}

VIP_RETURN VipQueryVi(VIP_VI_HANDLE ViHandle, VIP_VI_STATE *State, VIP_VI_ATTRIBUTES *Attributes,
                      VIP_BOOLEAN *ViSendQEmpty, VIP_BOOLEAN *ViRecvQEmpty)
{
    struct vipl_vi *vi = ViHandle;
    LOCK_VI_OR_RETURN(vi);
    if (State)
        *State = vi->state;
    if (Attributes)
        *Attributes = vi->attrs;
    if (ViSendQEmpty)
        *ViSendQEmpty = vi->sq.head == vi->sq.tail;
    if (ViRecvQEmpty)
        *ViRecvQEmpty = vi->rq.head == vi->rq.tail;
    nic_unlock(vi->nic);
    return VIP_SUCCESS;
}

VIP_RETURN VipSetViAttributes(VIP_VI_HANDLE ViHandle, VIP_VI_ATTRIBUTES *Attributes)
{
    struct vipl_vi *vi = ViHandle;
    if (!Attributes)
        return VIP_INVALID_PARAMETER;
    LOCK_VI_OR_RETURN(vi);
    VIP_RETURN rc = vi->state != VIP_STATE_IDLE ? VIP_INVALID_STATE : check_attrs(vi->nic, Attributes);
    if (rc == VIP_SUCCESS) {
        ((struct vipl_ptag *)vi->attrs.Ptag)->refs--;
        vi->attrs = *Attributes;
        ((struct vipl_ptag *)vi->attrs.Ptag)->refs++;
    }
    nic_unlock(vi->nic);
    return rc;
}

/* ----------------------------------------------------------- posting */
/* The descriptor itself must lie in memory registered under mh with the
 * VI's protection tag (VIA 6.1). */
static bool desc_registered(struct vipl_vi *vi, VIP_DESCRIPTOR *d, VIP_MEM_HANDLE mh)
{
    if (!region_check(vi->nic, mh, (uintptr_t)d, sizeof(VIP_CONTROL_SEGMENT), vi->attrs.Ptag))
        return false;
    return region_check(vi->nic, mh, (uintptr_t)d,
                        sizeof(VIP_CONTROL_SEGMENT) + (uint64_t)d->CS.SegCount * sizeof(VIP_DESCRIPTOR_SEGMENT),
                        vi->attrs.Ptag) != NULL;
}

static VIP_RETURN post(struct vipl_vi *vi, struct wq *q, VIP_DESCRIPTOR *d, VIP_MEM_HANDLE mh)
{
    struct vipl_nic *nic = vi->nic;
    if (!desc_registered(vi, d, mh)) {
        defer_error(nic, vi, d, VIP_ERROR_POST_DESC, VIP_RESOURCE_DESCRIPTOR);
        return VIP_INVALID_PARAMETER;
    }
    if (q->tail - q->head >= VIPL_QUEUE_CAP) {
        defer_error(nic, vi, d, VIP_ERROR_VI_OVERRUN, VIP_RESOURCE_VI);
        return VIP_ERROR_RESOURCE;
    }
    d->CS.Status = 0;
    struct wq_entry *e = wq_at(q, q->tail);
    memset(e, 0, sizeof *e);
    e->desc = d;
    q->tail++;
    return VIP_SUCCESS;
}

VIP_RETURN VipPostSend(VIP_VI_HANDLE ViHandle, VIP_DESCRIPTOR *DescriptorPtr, VIP_MEM_HANDLE MemoryHandle)
{
    struct vipl_vi *vi = ViHandle;
    if (!DescriptorPtr)
        return VIP_INVALID_PARAMETER;
    LOCK_VI_OR_RETURN(vi);
    VIP_RETURN rc = post(vi, &vi->sq, DescriptorPtr, MemoryHandle);
    if (rc == VIP_SUCCESS) {
        if (vi->state != VIP_STATE_CONNECTED) {
            /* VIA 5.1-5.4: sends on a VI that is not connected complete in error. */
            flush_queue(vi, &vi->sq, VIP_STATUS_OP_SEND);
        } else {
            vi_pump(vi);
        }
    }
    nic_unlock(vi->nic);
    return rc;
}

VIP_RETURN VipPostRecv(VIP_VI_HANDLE ViHandle, VIP_DESCRIPTOR *DescriptorPtr, VIP_MEM_HANDLE MemoryHandle)
{
    struct vipl_vi *vi = ViHandle;
    if (!DescriptorPtr)
        return VIP_INVALID_PARAMETER;
    LOCK_VI_OR_RETURN(vi);
    VIP_RETURN rc = post(vi, &vi->rq, DescriptorPtr, MemoryHandle);
    if (rc == VIP_SUCCESS) {
        if (vi->state == VIP_STATE_ERROR) {
            flush_queue(vi, &vi->rq, VIP_STATUS_OP_RECEIVE);
        } else if (vi->state == VIP_STATE_CONNECTED) {
            vi->rx_posted++;
            if (vi_advert_due(vi))
                vi_pump(vi);
        }
    }
    nic_unlock(vi->nic);
    return rc;
}

static VIP_RETURN done_common(struct vipl_vi *vi, struct wq *q, VIP_DESCRIPTOR **out)
{
    if (q->head != q->done) {
        *out = wq_at(q, q->head)->desc;
        q->head++;
        return VIP_SUCCESS;
    }
    (void)vi;
    return VIP_NOT_DONE;
}

/* VipSendDone/VipRecvDone: a consumer that polls instead of waiting gets its
 * socket back into the thread's set at once (not after VIPL_IO_LINGER_MS). */
static VIP_RETURN poll_done(struct vipl_vi *vi, struct wq *q, VIP_DESCRIPTOR **out)
{
    VIP_RETURN rc = done_common(vi, q, out);
    if (rc != VIP_SUCCESS && vi->io_lazy_until && !vi->io_owner)
        vi_io_attach(vi);
    return rc;
}

VIP_RETURN VipSendDone(VIP_VI_HANDLE ViHandle, VIP_DESCRIPTOR **DescriptorPtr)
{
    struct vipl_vi *vi = ViHandle;
    if (!DescriptorPtr)
        return VIP_INVALID_PARAMETER;
    LOCK_VI_OR_RETURN(vi);
    VIP_RETURN rc = poll_done(vi, &vi->sq, DescriptorPtr);
    nic_unlock(vi->nic);
    return rc;
}

VIP_RETURN VipRecvDone(VIP_VI_HANDLE ViHandle, VIP_DESCRIPTOR **DescriptorPtr)
{
    struct vipl_vi *vi = ViHandle;
    if (!DescriptorPtr)
        return VIP_INVALID_PARAMETER;
    LOCK_VI_OR_RETURN(vi);
    VIP_RETURN rc = poll_done(vi, &vi->rq, DescriptorPtr);
    nic_unlock(vi->nic);
    return rc;
}

static VIP_RETURN wait_common(struct vipl_vi *vi, bool recv, VIP_ULONG timeout, VIP_DESCRIPTOR **out)
{
    if (!out)
        return VIP_INVALID_PARAMETER;
    LOCK_VI_OR_RETURN(vi);
    struct vipl_nic *nic = vi->nic;
    struct wq *q = recv ? &vi->rq : &vi->sq;
    if (q->cq) {
        nic_unlock(nic);
        return VIP_ERROR_RESOURCE;
    }
    int64_t deadline = deadline_after(timeout);
    int64_t until = 0;
    VIP_RETURN rc;
    vi->waiters++;
    for (;;) {
        if ((rc = done_common(vi, q, out)) == VIP_SUCCESS)
            break;
        /* First drive the socket from this thread (no hand-off through the
         * progress thread), for at most VIPL_IO_WAIT_MS; then block. */
        int io = vi_io_step(vi, recv, deadline, &until);
        if (io < 0) {
            nic_unlock(nic);
            return VIP_INVALID_PARAMETER; /* the VI was destroyed under the wait */
        }
        if (io > 0)
            continue;
        vi_io_end(vi, false);
        if (!nic_wait(nic, deadline)) {
            rc = done_common(vi, q, out) == VIP_SUCCESS ? VIP_SUCCESS : VIP_TIMEOUT;
            break;
        }
    }
    vi_io_end(vi, true);
    vi->waiters--;
    nic_unlock(nic);
    return rc;
}

VIP_RETURN VipSendWait(VIP_VI_HANDLE ViHandle, VIP_ULONG TimeOut, VIP_DESCRIPTOR **DescriptorPtr)
{
    return wait_common(ViHandle, false, TimeOut, DescriptorPtr);
}

VIP_RETURN VipRecvWait(VIP_VI_HANDLE ViHandle, VIP_ULONG TimeOut, VIP_DESCRIPTOR **DescriptorPtr)
{
    return wait_common(ViHandle, true, TimeOut, DescriptorPtr);
}

static VIP_RETURN notify_common(struct vipl_vi *vi, bool recv, VIP_PVOID ctx, VIP_VI_NOTIFY_HANDLER h)
{
    if (!h)
        return VIP_INVALID_PARAMETER;
    LOCK_VI_OR_RETURN(vi);
    struct wq *q = recv ? &vi->rq : &vi->sq;
    if (q->cq) {
        nic_unlock(vi->nic);
        return VIP_ERROR_RESOURCE;
    }
    VIP_DESCRIPTOR *d;
    if (done_common(vi, q, &d) == VIP_SUCCESS) {
        defer_vi_notify(vi->nic, vi, h, ctx, d);
    } else {
        if (!vi->io_owner)
            vi_io_attach(vi); /* the handler runs when the thread completes it */
        q->notify = h;
        q->notify_ctx = ctx;
    }
    nic_unlock(vi->nic);
    return VIP_SUCCESS;
}

VIP_RETURN VipSendNotify(VIP_VI_HANDLE ViHandle, VIP_PVOID Context, VIP_VI_NOTIFY_HANDLER Handler)
{
    return notify_common(ViHandle, false, Context, Handler);
}

VIP_RETURN VipRecvNotify(VIP_VI_HANDLE ViHandle, VIP_PVOID Context, VIP_VI_NOTIFY_HANDLER Handler)
{
    return notify_common(ViHandle, true, Context, Handler);
}
