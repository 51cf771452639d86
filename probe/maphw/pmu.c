/* The pmu backend: an LLC-miss event (libpfm4 encodes it; --event or the
 * CPU's default) counted by perf_event_open on the probe thread, one unit
 * at a time, the counter read around batches of each unit's dwell. */
#include "maphw/maphw_internal.h"

#include <perfmon/pfmlib_perf_event.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "llcprobe/common.h"
#include "llcprobe/sysinfo.h"

struct encoding {
    char event[200];
    char note[160];
    uint32_t type;
    uint64_t config, config1, config2;
};

/* opt->event through libpfm4, or the LLC-miss event sysinfo picks for the
 * detected core PMU (llc_pmu_llc_miss_event and its fallbacks). */
static int encode(const char *event, struct encoding *e, char *err, size_t errlen)
{
    memset(e, 0, sizeof(*e));
    if (!event) {
        struct llc_pmu_check pc;
        llc_pmu_check(NULL, false, &pc);
        if (!pc.encoded)
            return llc_errf(err, errlen, -ENOTSUP, "pmu: no LLC-miss event: %s", pc.reason);
        snprintf(e->event, sizeof(e->event), "%s", pc.event);
        snprintf(e->note, sizeof(e->note), "%s", pc.event_note);
        e->type = pc.type;
        e->config = pc.config;
        e->config1 = pc.config1;
        e->config2 = pc.config2;
        return 0;
    }
    int rc = pfm_initialize();
    if (rc != PFM_SUCCESS)
        return llc_errf(err, errlen, -ENOTSUP, "pmu: libpfm4 failed to initialise: %s",
                        pfm_strerror(rc));
    struct perf_event_attr attr;
    pfm_perf_encode_arg_t arg;
    memset(&attr, 0, sizeof(attr));
    memset(&arg, 0, sizeof(arg));
    arg.attr = &attr;
    arg.size = sizeof(arg);
    rc = pfm_get_os_event_encoding(event, PFM_PLM3, PFM_OS_PERF_EVENT, &arg);
    pfm_terminate();
    if (rc != PFM_SUCCESS)
        return llc_errf(err, errlen, -EINVAL, "pmu: event '%s' does not encode: %s", event,
                        pfm_strerror(rc));
    snprintf(e->event, sizeof(e->event), "%s", event);
    snprintf(e->note, sizeof(e->note), "given with --event");
    e->type = attr.type;
    e->config = attr.config;
    e->config1 = attr.config1;
    e->config2 = attr.config2;
    return 0;
}

static const char *open_hint(int e)
{
    switch (e) {
    case ENOENT:
    case ENODEV:
    case EOPNOTSUPP:
        return "no hardware PMU for this event: a VM without a virtual PMU, or no driver";
    case EACCES:
    case EPERM:
        return "not permitted: needs CAP_PERFMON or a lower kernel.perf_event_paranoid";
    case EINVAL:
        return "the kernel rejected the encoding";
    case ENOSYS:
        return "kernel built without perf events";
    case EBUSY:
        return "counters held by another user";
    default:
        return "unexpected error";
    }
}

struct open_call {
    struct maphw *m;
    const struct encoding *e;
    int fd, err;
};

/* On the probe thread: pid 0 counts that thread only, user mode. Pinned,
 * so the event never shares its counter (a multiplexed count would mix in
 * time it did not run). */
static int open_on_worker(void *p)
{
    struct open_call *c = p;
    struct perf_event_attr attr;
    memset(&attr, 0, sizeof(attr));
    attr.size = sizeof(attr);
    attr.type = c->e->type;
    attr.config = c->e->config;
    attr.config1 = c->e->config1;
    attr.config2 = c->e->config2;
    attr.exclude_kernel = 1;
    attr.exclude_hv = 1;
    attr.pinned = 1;
    attr.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
    const long fd = syscall(SYS_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
    c->fd = (int)fd;
    c->err = fd < 0 ? errno : 0;
    return fd < 0 ? -c->err : 0;
}

/* The count, and whether the counter ran all the time since the last read. */
static int read_counter(void *ctx, uint64_t *value, bool *complete)
{
    struct maphw *m = ctx;
    uint64_t v[3];
    if (read(m->fd, v, sizeof(v)) != (ssize_t)sizeof(v))
        return -EIO; /* a pinned event that lost its counter reads as EOF */
    *complete = v[1] - m->enabled == v[2] - m->running;
    m->enabled = v[1];
    m->running = v[2];
    *value = v[0];
    return 0;
}

/* On the worker: each unit alone for dwell_s (the counter cannot tell
 * units apart), units without a verified set get nothing. At the
 * occupancy search's pace each unit's first rounds warm its shortened
 * walk and are not counted. */
int llc_maphw_pmu_measure(struct maphw *m, const uint32_t *units, size_t n, double dwell_s,
                          uint64_t *misses, uint64_t *accesses, char *err, size_t errlen)
{
    struct llc_maphw_walk_cfg c;
    llc_maphw_walk_cfg(m, 1, &c);
    double warm, count;
    llc_maphw_warm_split(dwell_s, m->occ_rate, m->opt.geo.llc_ways, &warm, &count);
    for (size_t i = 0; i < n; i++) {
        const uint32_t u = units[i];
        if (u >= m->units)
            return llc_errf(err, errlen, -EINVAL, "pmu: unit %u out of range (%u units)", u,
                            m->units);
        if (!m->sets->sets[u].verified)
            continue;
        llc_maphw_relink(m, &u, 1, llc_maphw_walk_for(m, &u, 1));
        struct llc_maphw_walk_stats st;
        char why[LLC_ERRLEN];
        uint64_t warm_misses = 0, warm_accesses = 0;
        int rc = 0;
        if (warm > 0)
            rc = llc_maphw_walk_counted(&c, &m->cursor[u], warm, read_counter, m, &warm_misses,
                                        &warm_accesses, &st, why, sizeof(why));
        if (rc == 0)
            rc = llc_maphw_walk_counted(&c, &m->cursor[u], count, read_counter, m, &misses[u],
                                        &accesses[u], &st, why, sizeof(why));
        if (rc < 0)
            return llc_errf(err, errlen, rc, "pmu: %s (%s)", why, m->event);
    }
    return 0;
}

static const struct llc_map_backend_ops pmu_ops = {
    .measure = llc_maphw_measure_op,
    .target_alive = llc_maphw_target_alive,
    .release = llc_maphw_release_op,
    .probe_set = llc_maphw_probe_set_op,
    .corunner = llc_maphw_corunner_op,
};

int llc_map_backend_pmu(const struct llc_map_hw_options *opt, struct llc_map_backend **out,
                        struct llc_map_selftest *st, char *err, size_t errlen)
{
    struct llc_map_selftest local;
    if (!st)
        st = &local;
    memset(st, 0, sizeof(*st));
    *out = NULL;
    struct maphw *m = NULL;
    struct encoding e;
    int rc = llc_maphw_new("pmu", opt, &m, err, errlen);
    if (rc == 0)
        rc = encode(opt->event, &e, err, errlen);
    if (rc == 0)
        rc = llc_maphw_start(m, err, errlen);
    if (rc < 0)
        goto out;
    m->measure = llc_maphw_pmu_measure;
    snprintf(m->event, sizeof(m->event), "%s", e.event);
    /* the counter first: without one there is no point building sets */
    struct open_call oc = {m, &e, -1, 0};
    rc = llc_maphw_worker_call(m->worker, open_on_worker, &oc);
    if (rc < 0) {
        rc = llc_errf(err, errlen, -ENOTSUP,
                      "pmu: perf_event_open(%s) on the probe thread failed: %s (%s)", e.event,
                      strerror(oc.err), open_hint(oc.err));
        goto out;
    }
    m->fd = oc.fd;
    rc = llc_maphw_build(m, err, errlen);
    if (rc == 0) /* timed, as in the timing backend: counters cannot tell L2 hits */
        rc = llc_maphw_walk_check(m, err, errlen);
    if (rc == 0)
        rc = llc_maphw_selftest(m, st, err, errlen);
    if (rc == 0)
        rc = llc_maphw_slow_check(m, err, errlen);
    if (rc < 0)
        goto out;
    snprintf(
        m->be.calibration, sizeof(m->be.calibration),
        "event %.120s (%.80s), user mode, probe thread on CPU %d; batches of %u accesses with a "
        "context switch dropped",
        e.event, e.note, m->probe_cpu, m->batch);
    m->be.ops = &pmu_ops;
    m->be.all_at_once = false;
    *out = &m->be;
    m = NULL;
out:
    llc_maphw_free(m);
    return rc;
}
