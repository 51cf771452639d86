/* Draining perf's mmap ring buffers: the kernel writes records at data_head,
 * we read up to it and publish data_tail, so nothing is overwritten and
 * nothing has to be signalled per sample. */
#include "sampling/sampling_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void llc_sampling_sink_reset(struct llc_sampling_sink *k)
{
    k->n = 0;
    k->lost = 0;
    k->ntids = 0;
    k->npids = 0;
}

void llc_sampling_sink_free(struct llc_sampling_sink *k)
{
    free(k->ips);
    memset(k, 0, sizeof(*k));
}

static int push_ip(struct llc_sampling_sink *k, uint64_t ip)
{
    if (k->n == k->cap) {
        const size_t cap = k->cap ? 2 * k->cap : 1024;
        uint64_t *p = realloc(k->ips, cap * sizeof(*p));
        if (!p)
            return -ENOMEM;
        k->ips = p;
        k->cap = cap;
    }
    k->ips[k->n++] = ip;
    return 0;
}

/* Linear search: a window sees a handful of threads, and the count
 * saturates at LLC_SAMPLING_MAX_IDS. */
static void note_id(uint32_t *ids, unsigned *n, uint32_t id)
{
    for (unsigned i = 0; i < *n; i++)
        if (ids[i] == id)
            return;
    if (*n < LLC_SAMPLING_MAX_IDS)
        ids[(*n)++] = id;
}

/* Copies len bytes at ring offset pos, unwrapping the end of the ring. */
static void ring_copy(const unsigned char *data, uint64_t size, uint64_t pos, void *dst,
                      size_t len)
{
    const uint64_t off = pos & (size - 1);
    const size_t first = off + len <= size ? len : (size_t)(size - off);
    memcpy(dst, data + off, first);
    if (first < len)
        memcpy((unsigned char *)dst + first, data, len - first);
}

int llc_sampling_ring_drain(struct perf_event_mmap_page *meta, const unsigned char *data,
                            uint64_t size, struct llc_sampling_sink *k)
{
    /* Acquire pairs with the kernel's release of data_head: records below it
     * are complete. */
    const uint64_t head = __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE);
    uint64_t tail = meta->data_tail;
    /* More unread than the ring holds: records were overwritten (never in
     * the kernel's non-overwrite mode, but then nothing here is trustworthy). */
    int rc = head - tail > size ? -EPROTO : 0;
    if (rc < 0)
        tail = head;
    while (tail < head) {
        struct perf_event_header h;
        ring_copy(data, size, tail, &h, sizeof(h));
        if (h.size < sizeof(h) || h.size > size || tail + h.size > head) {
            rc = -EPROTO;
            break;
        }
        if (h.type == PERF_RECORD_SAMPLE && h.size >= sizeof(h) + 16) {
            struct {
                uint64_t ip;
                uint32_t pid, tid;
            } body;
            ring_copy(data, size, tail + sizeof(h), &body, sizeof(body));
            rc = push_ip(k, body.ip);
            if (rc < 0)
                break;
            note_id(k->tids, &k->ntids, body.tid);
            note_id(k->pids, &k->npids, body.pid);
        } else if (h.type == PERF_RECORD_LOST && h.size >= sizeof(h) + 16) {
            uint64_t id_lost[2];
            ring_copy(data, size, tail + sizeof(h), id_lost, sizeof(id_lost));
            k->lost += id_lost[1];
        }
        /* Anything else (throttle, exit, ...) carries nothing we use. */
        tail += h.size;
    }
    /* A damaged ring is abandoned whole: skipping to head resynchronises. */
    __atomic_store_n(&meta->data_tail, rc == -EPROTO ? head : tail, __ATOMIC_RELEASE);
    return rc;
}
