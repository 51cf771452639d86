/* The driver's loop: earliest pending access first, in batches per agent. */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "llcprobe/common.h"
#include "simrun/simrun_internal.h"

/* How often (in accesses) the progress callback is called. */
#define SIMRUN_PROGRESS_EVERY ((uint64_t)1 << 20)

static inline double time_of(const struct simrun_agent *a, uint64_t k)
{
    return a->t0 + (double)(k - a->k0) * a->period;
}

/* The shared clock's order: earlier time first, then lower agent index. */
static inline bool goes_before(double ta, unsigned a, double tb, unsigned b)
{
    return ta < tb || (ta == tb && a < b);
}

static int sim_error(struct simrun_agent *a, int rc, char *err, size_t errlen)
{
    /* The trace is checksummed only as a whole, so a corrupt one decodes to
     * wild addresses first; blame the file, not the simulator, if it is. */
    if (rc == -EINTR)
        return llc_errf(err, errlen, rc, "stopped by a signal");
    if (a->trace && simrun_trace_drain(a, err, errlen) < 0)
        return rc;
    switch (rc) {
    case -ENOMEM:
        return llc_errf(err, errlen, rc, "%s: simulated physical memory exhausted", a->name);
    case -ERANGE:
        return llc_errf(err, errlen, rc, "%s: physical address beyond the simulator's limit",
                        a->name);
    default:
        return llc_errf(err, errlen, rc, "%s: simulator refused the access (code %d)", a->name, rc);
    }
}

static int issue_callback(struct llc_simrun *r, unsigned i, char *err, size_t errlen)
{
    struct simrun_agent *a = &r->agent[i];
    uint64_t addr;
    bool is_write = false;
    char sub[LLC_ERRLEN] = "";
    int rc = a->next(a->ctx, a->has_prev ? &a->prev : NULL, &addr, &is_write, sub, sizeof(sub));
    if (rc < 0)
        return llc_errf(err, errlen, rc, "%s: %s", a->name, sub[0] ? sub : "stream failed");
    if (rc == 0) {
        a->ended = true;
        return 0;
    }
    rc = a->physical ? llc_sim_access_phys(r->sim, i, addr, &a->prev)
                     : llc_sim_access(r->sim, i, addr, &a->prev);
    if (rc < 0)
        return sim_error(a, rc, err, errlen);
    a->has_prev = true;
    a->writes += is_write;
    return 1;
}

/* Issues k buffered accesses of agent i. */
static int issue_buffered(struct llc_simrun *r, unsigned i, uint32_t k, char *err, size_t errlen)
{
    struct simrun_agent *a = &r->agent[i];
    const uint64_t *addrs = a->addrs + a->pos;
    /* Even one access goes through the batch path: it is specialised for
     * the configuration, the single-access one is not. */
    const int rc = llc_sim_run(r->sim, i, addrs, k, a->physical, NULL);
    if (rc < 0)
        return sim_error(a, rc, err, errlen);
    const uint8_t *w = a->is_write + a->pos;
    uint64_t writes = 0;
    for (uint32_t j = 0; j < k; j++)
        writes += w[j];
    a->writes += writes;
    a->pos += k;
    return 0;
}

static int check_can_end(const struct llc_simrun *r, char *err, size_t errlen)
{
    for (unsigned i = 0; i < r->nagents; i++) {
        const struct simrun_agent *a = &r->agent[i];
        if (a->counted && !a->ended && a->workload)
            return llc_errf(err, errlen, -EINVAL,
                            "%s: a synthetic workload never ends: give a duration", a->name);
    }
    return 0;
}

int llc_simrun_run(struct llc_simrun *r, const struct llc_simrun_limits *lim, char *err,
                   size_t errlen)
{
    int rc = 0;
    if (lim->duration == 0) {
        rc = check_can_end(r, err, errlen);
        if (rc < 0)
            return rc;
    }
    const uint64_t start = r->counted;
    const uint64_t end = lim->duration ? start + lim->duration : UINT64_MAX;
    const uint64_t interval = lim->interval;
    if (interval)
        r->next_frame = (r->counted / interval + 1) * interval;
    uint64_t next_progress = r->total + SIMRUN_PROGRESS_EVERY;

    while (r->counted < end) {
        /* Earliest and second-earliest pending agents. */
        int a = -1, b = -1;
        double ta = 0, tb = 0;
        unsigned live_counted = 0;
        for (unsigned i = 0; i < r->nagents; i++) {
            const struct simrun_agent *ag = &r->agent[i];
            if (ag->ended)
                continue;
            live_counted += ag->counted;
            const double t = time_of(ag, ag->issued);
            if (a < 0 || t < ta) {
                b = a;
                tb = ta;
                a = (int)i;
                ta = t;
            } else if (b < 0 || t < tb) {
                b = (int)i;
                tb = t;
            }
        }
        if (live_counted == 0)
            return 1;
        struct simrun_agent *ag = &r->agent[a];
        uint32_t k = 1;
        if (ag->next) {
            rc = issue_callback(r, (unsigned)a, err, errlen);
            if (rc < 0)
                return rc;
            if (rc == 0)
                continue;
        } else {
            if (ag->pos == ag->len) {
                rc = simrun_refill(r, (unsigned)a, err, errlen);
                if (rc < 0)
                    return rc;
                if (rc == 0) {
                    ag->ended = true;
                    continue;
                }
            }
            uint64_t max = ag->len - ag->pos;
            if (ag->counted) {
                if (end - r->counted < max)
                    max = end - r->counted;
                if (interval && r->next_frame - r->counted < max)
                    max = r->next_frame - r->counted;
            }
            /* Run ahead while this agent stays first on the clock. */
            if (b < 0) {
                k = (uint32_t)max;
            } else {
                while (k < max &&
                       goes_before(time_of(ag, ag->issued + k), (unsigned)a, tb, (unsigned)b))
                    k++;
            }
            rc = issue_buffered(r, (unsigned)a, k, err, errlen);
            if (rc < 0)
                return rc;
        }
        ag->issued += k;
        r->total += k;
        r->clock = time_of(ag, ag->issued - 1);
        if (ag->counted) {
            r->counted += k;
            if (interval && r->counted >= r->next_frame) {
                rc = llc_simrun_capture(r, err, errlen);
                if (rc < 0)
                    return rc;
                r->next_frame += interval;
            }
        }
        if (lim->progress && r->total >= next_progress) {
            lim->progress(lim->progress_ctx, r->counted - start, lim->duration);
            next_progress = r->total + SIMRUN_PROGRESS_EVERY;
        }
    }
    return 0;
}
