/* Draining perf's mmap ring buffers: the kernel writes records at data_head,
 * we read up to it and publish data_tail, so nothing is overwritten and
 * nothing has to be signalled per sample. */
#include "ipsampling/sampling_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void llc_sampling_sink_reset(struct llc_sampling_sink *k)
{
    k->n = 0;
    k->nsamples = 0;
    k->nside = 0;
    k->lost = 0;
    k->ntids = 0;
    k->npids = 0;
}

void llc_sampling_sink_free(struct llc_sampling_sink *k)
{
    free(k->ips);
    free(k->samples);
    free(k->side);
    memset(k, 0, sizeof(*k));
}

/* Room for one more element of an array that doubles. */
static int grow(void **v, size_t n, size_t *cap, size_t elem)
{
    if (n < *cap)
        return 0;
    const size_t c = *cap ? 2 * *cap : 1024;
    void *p = realloc(*v, c * elem);
    if (!p)
        return -ENOMEM;
    *v = p;
    *cap = c;
    return 0;
}

static int push_sample(struct llc_sampling_sink *k, const struct llc_sampling_sample *x)
{
    if (grow((void **)&k->samples, k->nsamples, &k->capsamples, sizeof(*x)) < 0)
        return -ENOMEM;
    k->samples[k->nsamples++] = *x;
    return 0;
}

static int push_side(struct llc_sampling_sink *k, const struct llc_sampling_side *x)
{
    if (grow((void **)&k->side, k->nside, &k->capside, sizeof(*x)) < 0)
        return -ENOMEM;
    k->side[k->nside++] = *x;
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
static void ring_copy(const unsigned char *data, uint64_t size, uint64_t pos, void *dst, size_t len)
{
    const uint64_t off = pos & (size - 1);
    const size_t first = off + len <= size ? len : (size_t)(size - off);
    memcpy(dst, data + off, first);
    if (first < len)
        memcpy((unsigned char *)dst + first, data, len - first);
}

/* Record bodies as laid out for LLC_SAMPLING_SAMPLE_TYPE with
 * sample_id_all: every side-band record ends in this trailer. */
struct sample_id {
    uint32_t pid, tid;
    uint64_t time;
};
/* MMAP2: pid, tid, addr, len, pgoff, 24 bytes of device/inode or build id,
 * prot, flags, then the file name. */
#define MMAP2_NAME_AT (sizeof(struct perf_event_header) + 8 + 24 + 24 + 8)
/* Largest record decoded: a path of PATH_MAX plus the fixed fields. */
#define MAX_RECORD 4352

/* One record (whole, unwrapped in rec) into the sink. */
static int decode(const unsigned char *rec, const struct perf_event_header *h,
                  struct llc_sampling_sink *k)
{
    const size_t hs = sizeof(*h);
    struct sample_id id;
    if (h->type != PERF_RECORD_SAMPLE && h->size >= hs + sizeof(id))
        memcpy(&id, rec + h->size - sizeof(id), sizeof(id));
    switch (h->type) {
    case PERF_RECORD_SAMPLE: {
        /* ip, pid/tid, time, [period], [regs_user: ABI, then the one
         * register asked for, the IP]. */
        uint64_t f[4];
        const bool has_period = !k->no_period;
        const size_t fixed = has_period ? 4 : 3;
        if (h->size < hs + fixed * 8)
            return 0;
        memcpy(f, rec + hs, fixed * 8);
        uint64_t ip = f[0];
        if (k->ip_from_user_regs) {
            /* ABI 0: the task had no user context (a kernel thread). */
            uint64_t regs[2];
            if (h->size < hs + (fixed + 1) * 8)
                return 0;
            memcpy(&regs[0], rec + hs + fixed * 8, 8);
            if (regs[0] == PERF_SAMPLE_REGS_ABI_NONE || h->size < hs + (fixed + 2) * 8)
                return 0;
            memcpy(&regs[1], rec + hs + (fixed + 1) * 8, 8);
            ip = regs[1];
        }
        const uint32_t pid = (uint32_t)f[1], tid = (uint32_t)(f[1] >> 32);
        note_id(k->tids, &k->ntids, tid);
        note_id(k->pids, &k->npids, pid);
        const struct llc_sampling_sample x = {
            .ip = ip, .time = f[2], .period = has_period ? f[3] : 0, .pid = pid};
        return push_sample(k, &x);
    }
    case PERF_RECORD_MMAP2: {
        struct {
            uint32_t pid, tid;
            uint64_t addr, len, pgoff;
        } b;
        if (h->size < MMAP2_NAME_AT + sizeof(id) + 1)
            return 0;
        memcpy(&b, rec + hs, sizeof(b));
        char name[MAX_RECORD];
        const size_t nlen = h->size - sizeof(id) - MMAP2_NAME_AT;
        memcpy(name, rec + MMAP2_NAME_AT, nlen);
        name[nlen] = '\0';
        /* Anonymous code (a JIT) has no stable name: its IPs stay raw. */
        if (strcmp(name, "//anon") == 0)
            return 0;
        const struct llc_sampling_side x = {.time = id.time,
                                            .kind = LLC_SAMPLING_SIDE_MMAP,
                                            .pid = b.pid,
                                            .addr = b.addr,
                                            .len = b.len,
                                            .pgoff = b.pgoff,
                                            .file_key = llc_sampling_file_key(name)};
        return push_side(k, &x);
    }
    case PERF_RECORD_COMM: {
        uint32_t pid;
        if (!(h->misc & PERF_RECORD_MISC_COMM_EXEC) || h->size < hs + 4 + sizeof(id))
            return 0;
        memcpy(&pid, rec + hs, sizeof(pid));
        const struct llc_sampling_side x = {
            .time = id.time, .kind = LLC_SAMPLING_SIDE_EXEC, .pid = pid};
        return push_side(k, &x);
    }
    case PERF_RECORD_FORK:
    case PERF_RECORD_EXIT: {
        struct {
            uint32_t pid, ppid, tid, ptid;
            uint64_t time;
        } b;
        if (h->size < hs + sizeof(b))
            return 0;
        memcpy(&b, rec + hs, sizeof(b));
        /* Threads share their process's mappings: only processes matter. */
        if (h->type == PERF_RECORD_FORK ? b.pid == b.ppid : b.pid != b.tid)
            return 0;
        const struct llc_sampling_side x = {
            .time = b.time,
            .kind = h->type == PERF_RECORD_FORK ? LLC_SAMPLING_SIDE_FORK : LLC_SAMPLING_SIDE_EXIT,
            .pid = b.pid,
            .ppid = b.ppid};
        return push_side(k, &x);
    }
    case PERF_RECORD_LOST: {
        uint64_t id_lost[2];
        if (h->size < hs + sizeof(id_lost))
            return 0;
        memcpy(id_lost, rec + hs, sizeof(id_lost));
        k->lost += id_lost[1];
        return 0;
    }
    default:
        return 0; /* throttle, ...: nothing we use */
    }
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
    unsigned char rec[MAX_RECORD];
    while (tail < head) {
        struct perf_event_header h;
        ring_copy(data, size, tail, &h, sizeof(h));
        if (h.size < sizeof(h) || h.size > size || tail + h.size > head) {
            rc = -EPROTO;
            break;
        }
        if (h.size <= MAX_RECORD) {
            ring_copy(data, size, tail, rec, h.size);
            rc = decode(rec, &h, k);
            if (rc < 0)
                break;
        }
        tail += h.size;
    }
    /* A damaged ring is abandoned whole: skipping to head resynchronises. */
    __atomic_store_n(&meta->data_tail, rc == -EPROTO ? head : tail, __ATOMIC_RELEASE);
    return rc;
}
