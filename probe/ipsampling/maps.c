/* Code addresses made position-independent: a sampled IP becomes a key
 * derived from (mapped file, offset in the file), so the same code hashes to
 * the same signature bucket in every process and every run, whatever address
 * ASLR / PIE loaded it at.
 *
 *   key = (fnv1a64(file name) << 40) ^ (ip - start + pgoff)
 *
 * The file name's FNV-1a hash fills the bits above 40 (file offsets stay far
 * below 1 TiB); the XOR keeps the offset's low bits untouched, so the GF(2)
 * signature hash (phase.h) of code in one file is its hash by offset, moved
 * by a per-file constant. An IP in no known mapping (anonymous code, a JIT)
 * keeps its raw address: there is nothing stable to name it by. */
#include "ipsampling/sampling_internal.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KEY_SHIFT 40

uint64_t llc_sampling_file_key(const char *name)
{
    uint64_t h = 0xcbf29ce484222325ULL;
    for (const unsigned char *p = (const unsigned char *)name; *p; p++) {
        h ^= *p;
        h *= 0x100000001b3ULL;
    }
    return h;
}

void llc_sampling_maps_free(struct llc_sampling_maps *m)
{
    free(m->v);
    memset(m, 0, sizeof(*m));
}

/* Drops every mapping of pid that overlaps [start, end) (a new mapping
 * replaces what it covers), or all of them if end == 0. */
static void drop(struct llc_sampling_maps *m, uint32_t pid, uint64_t start, uint64_t end)
{
    size_t kept = 0;
    for (size_t i = 0; i < m->n; i++) {
        const struct llc_sampling_mapping *x = &m->v[i];
        const bool gone = x->pid == pid && (end == 0 || (x->start < end && start < x->end));
        if (!gone)
            m->v[kept++] = *x;
    }
    m->n = kept;
}

int llc_sampling_maps_add(struct llc_sampling_maps *m, uint32_t pid, uint64_t start, uint64_t len,
                          uint64_t pgoff, uint64_t file_key)
{
    if (len == 0)
        return 0;
    drop(m, pid, start, start + len);
    if (m->n == m->cap) {
        const size_t cap = m->cap ? 2 * m->cap : 64;
        struct llc_sampling_mapping *v = realloc(m->v, cap * sizeof(*v));
        if (!v)
            return -ENOMEM;
        m->v = v;
        m->cap = cap;
    }
    m->v[m->n++] = (struct llc_sampling_mapping){
        .pid = pid, .start = start, .end = start + len, .pgoff = pgoff, .file_key = file_key};
    return 0;
}

void llc_sampling_maps_forget(struct llc_sampling_maps *m, uint32_t pid)
{
    drop(m, pid, 0, 0);
}

int llc_sampling_maps_fork(struct llc_sampling_maps *m, uint32_t parent, uint32_t child)
{
    /* A reused pid's old mappings are stale. */
    drop(m, child, 0, 0);
    const size_t n = m->n;
    for (size_t i = 0; i < n; i++) {
        if (m->v[i].pid != parent)
            continue;
        const struct llc_sampling_mapping x = m->v[i];
        const int rc =
            llc_sampling_maps_add(m, child, x.start, x.end - x.start, x.pgoff, x.file_key);
        if (rc < 0)
            return rc;
    }
    return 0;
}

bool llc_sampling_maps_has(const struct llc_sampling_maps *m, uint32_t pid)
{
    for (size_t i = 0; i < m->n; i++)
        if (m->v[i].pid == pid)
            return true;
    return false;
}

bool llc_sampling_maps_key(const struct llc_sampling_maps *m, uint32_t pid, uint64_t ip,
                           uint64_t *key)
{
    for (size_t i = 0; i < m->n; i++) {
        const struct llc_sampling_mapping *x = &m->v[i];
        if (x->pid == pid && ip >= x->start && ip < x->end) {
            *key = (x->file_key << KEY_SHIFT) ^ (ip - x->start + x->pgoff);
            return true;
        }
    }
    *key = ip;
    return false;
}

int llc_sampling_maps_read_proc(struct llc_sampling_maps *m, uint32_t pid)
{
    char path[64];
    snprintf(path, sizeof(path), "/proc/%" PRIu32 "/maps", pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return -errno;
    int rc = 0;
    char line[4352];
    while (rc == 0 && fgets(line, sizeof(line), f)) {
        uint64_t start, end, off;
        char perms[8];
        int name_at = 0;
        if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %7s %" SCNx64 " %*s %*s %n", &start, &end, perms,
                   &off, &name_at) < 4 ||
            name_at == 0 || perms[2] != 'x')
            continue;
        char *name = line + name_at;
        name[strcspn(name, "\n")] = '\0';
        /* Anonymous code has no stable name: its IPs stay raw. */
        if (*name)
            rc =
                llc_sampling_maps_add(m, pid, start, end - start, off, llc_sampling_file_key(name));
    }
    fclose(f);
    return rc;
}

static int by_sample_time(const void *a, const void *b)
{
    const uint64_t x = ((const struct llc_sampling_sample *)a)->time;
    const uint64_t y = ((const struct llc_sampling_sample *)b)->time;
    return (x > y) - (x < y);
}

static int by_side_time(const void *a, const void *b)
{
    const uint64_t x = ((const struct llc_sampling_side *)a)->time;
    const uint64_t y = ((const struct llc_sampling_side *)b)->time;
    return (x > y) - (x < y);
}

static int apply(struct llc_sampling_maps *m, const struct llc_sampling_side *x)
{
    switch (x->kind) {
    case LLC_SAMPLING_SIDE_MMAP:
        return llc_sampling_maps_add(m, x->pid, x->addr, x->len, x->pgoff, x->file_key);
    case LLC_SAMPLING_SIDE_FORK:
        return llc_sampling_maps_fork(m, x->ppid, x->pid);
    case LLC_SAMPLING_SIDE_EXEC:
    case LLC_SAMPLING_SIDE_EXIT:
        llc_sampling_maps_forget(m, x->pid);
        return 0;
    }
    return 0;
}

int llc_sampling_resolve(struct llc_sampling_sink *k, struct llc_sampling_maps *m)
{
    /* Each ring is in time order, but a process moves between CPUs: merge
     * by the kernel's timestamps so a mapping applies from when it was made. */
    /* qsort's array may not be NULL even when empty (UBSan holds us to it). */
    if (k->nsamples)
        qsort(k->samples, k->nsamples, sizeof(*k->samples), by_sample_time);
    if (k->nside)
        qsort(k->side, k->nside, sizeof(*k->side), by_side_time);
    if (k->cap < k->nsamples) {
        uint64_t *p = realloc(k->ips, k->nsamples * sizeof(*p));
        if (!p)
            return -ENOMEM;
        k->ips = p;
        k->cap = k->nsamples;
    }
    uint32_t looked_up[LLC_SAMPLING_MAX_IDS];
    unsigned nlooked = 0;
    size_t j = 0;
    int rc = 0;
    k->n = 0;
    for (size_t i = 0; i < k->nsamples && rc == 0; i++) {
        const struct llc_sampling_sample *x = &k->samples[i];
        while (rc == 0 && j < k->nside && k->side[j].time <= x->time)
            rc = apply(m, &k->side[j++]);
        if (rc < 0)
            break;
        if (!llc_sampling_maps_has(m, x->pid) && nlooked < LLC_SAMPLING_MAX_IDS) {
            bool tried = false;
            for (unsigned t = 0; t < nlooked; t++)
                tried |= looked_up[t] == x->pid;
            if (!tried) {
                looked_up[nlooked++] = x->pid;
                /* Gone already: its IPs stay raw. */
                const int prc = llc_sampling_maps_read_proc(m, x->pid);
                rc = prc == -ENOMEM ? prc : 0;
            }
        }
        llc_sampling_maps_key(m, x->pid, x->ip, &k->ips[k->n++]);
    }
    while (rc == 0 && j < k->nside)
        rc = apply(m, &k->side[j++]);
    return rc;
}
