/* Filling an agent's address buffer from its workload or trace. */
#include <errno.h>

#include "llcprobe/common.h"
#include "llcprobe/trace.h"
#include "llcprobe/workload.h"
#include "simrun/simrun_internal.h"

/* Appends the pending lines of the current trace record. */
static void take_pending(struct simrun_agent *a, uint32_t line_size)
{
    while (a->pend_lines && a->len < SIMRUN_BATCH) {
        a->addrs[a->len] = a->pend_addr;
        a->is_write[a->len] = a->pend_write;
        a->len++;
        a->pend_addr = (a->pend_addr | (line_size - 1)) + 1;
        a->pend_lines--;
    }
}

static int fill_from_trace(struct simrun_agent *a, uint32_t line_size, char *err, size_t errlen)
{
    take_pending(a, line_size);
    while (a->len < SIMRUN_BATCH) {
        struct llc_trace_rec rec;
        const int rc = llc_trace_reader_next(a->trace, &rec, err, errlen);
        if (rc < 0)
            return rc;
        if (rc == 0) {
            a->ended = a->len == 0;
            break;
        }
        if (++a->records > a->trace_records)
            return llc_errf(err, errlen, -EPROTO,
                            "%s: more records than its trailer counts (%llu): the file is corrupt",
                            a->trace_path, (unsigned long long)a->trace_records);
        if (rec.kind == LLC_TRACE_INSTR) {
            a->instructions++;
            continue;
        }
        if (rec.kind > LLC_TRACE_MODIFY)
            return llc_errf(err, errlen, -EINVAL, "%s: record %llu has unknown kind %u",
                            a->trace_path, (unsigned long long)a->records, rec.kind);
        const uint64_t size = rec.size ? rec.size : 1;
        if (size > SIMRUN_MAX_RECORD_BYTES) {
            /* Corruption decodes to such sizes before the checksum at the
             * end can tell: let the reader have its say first. */
            const unsigned long long at = (unsigned long long)a->records;
            if (simrun_trace_drain(a, err, errlen) < 0)
                return -EPROTO;
            return llc_errf(err, errlen, -EPROTO,
                            "%s: record %llu accesses %llu bytes at once (over 4 KiB)",
                            a->trace_path, at, (unsigned long long)size);
        }
        a->pend_addr = rec.addr;
        /* Relative to the line start: no overflow at the top of memory. */
        a->pend_lines = ((rec.addr & (line_size - 1)) + size - 1) / line_size + 1;
        a->pend_write = rec.kind != LLC_TRACE_LOAD;
        take_pending(a, line_size);
    }
    return 0;
}

int simrun_refill(struct llc_simrun *r, unsigned i, char *err, size_t errlen)
{
    struct simrun_agent *a = &r->agent[i];
    a->pos = 0;
    a->len = 0;
    if (a->ended)
        return 0;
    if (a->workload) {
        a->len = (uint32_t)llc_workload_fill(a->workload, a->addrs, a->is_write, SIMRUN_BATCH);
    } else {
        const int rc = fill_from_trace(a, r->line_size, err, errlen);
        if (rc < 0)
            return rc;
    }
    if (a->translate) {
        /* Translated at fill time: the agent's pages are allocated in its own
         * access order, as they would be at issue time. */
        for (uint32_t k = 0; k < a->len; k++) {
            uint64_t pa;
            const int rc = llc_sim_pages_translate(r->alt_pages, i, a->addrs[k], &pa);
            if (rc < 0) {
                if (a->trace && simrun_trace_drain(a, err, errlen) < 0)
                    return rc;
                return llc_errf(err, errlen, rc, "%s: simulated physical memory exhausted",
                                a->name);
            }
            a->addrs[k] = pa + r->alt_offset;
        }
    }
    return (int)a->len;
}

int simrun_trace_drain(struct simrun_agent *a, char *err, size_t errlen)
{
    struct llc_trace_rec rec;
    int rc;
    while ((rc = llc_trace_reader_next(a->trace, &rec, err, errlen)) > 0)
        ;
    return rc;
}
