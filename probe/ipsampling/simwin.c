/* Per-window LLC ground truth for a trace: the simulator replays it (with a
 * noise co-runner if asked) and the target's counters are cut at every
 * window_instr instructions (or data records), so a per-window miss ratio
 * lines up with the phase windows of `phase --trace`. */
#include "ipsampling/sampling_internal.h"

#include "llcprobe/common.h"
#include "llcprobe/sim.h"
#include "llcprobe/simrun.h"
#include "util/stopsig.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Accesses simulated between checks of the instruction count: small next
 * to a window (about window_instr / 3 accesses), cheap next to a call. */
#define STEP 4096

static int grow(struct llc_sampling_simwin *w, size_t *cap)
{
    if (w->windows < *cap)
        return 0;
    const size_t c = *cap ? 2 * *cap : 256;
    uint64_t *a = realloc(w->accesses, c * sizeof(*a));
    if (!a)
        return -ENOMEM;
    w->accesses = a;
    uint64_t *m = realloc(w->misses, c * sizeof(*m));
    if (!m)
        return -ENOMEM;
    w->misses = m;
    *cap = c;
    return 0;
}

int llc_sampling_sim_windows(const char *trace, const char *preset, const char *noise,
                             uint64_t window_instr, bool by_refs, uint64_t seed,
                             struct llc_sampling_simwin *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof(*out));
    if (window_instr == 0)
        return llc_errf(err, errlen, -EINVAL, "window of 0 instructions");
    struct llc_sim_config cfg;
    int rc = llc_sim_preset(preset, &cfg, err, errlen);
    if (rc < 0)
        return rc;
    cfg.seed = seed;
    cfg.stop = &llc_stop_signal;
    const struct llc_simrun_agent agents[2] = {
        {.name = "target",
         .role = LLC_SIMRUN_TARGET,
         .source = LLC_SIMRUN_TRACE,
         .trace_path = trace,
         .rate = 1},
        {.name = "noise",
         .role = LLC_SIMRUN_NOISE,
         .source = LLC_SIMRUN_WORKLOAD,
         .spec = noise,
         .rate = 1},
    };
    struct llc_simrun *r = NULL;
    rc = llc_simrun_create(&cfg, agents, noise ? 2 : 1, &r, err, errlen);
    if (rc < 0)
        return rc;
    size_t cap = 0;
    uint64_t base_acc = 0, base_miss = 0;
    for (;;) {
        const struct llc_simrun_limits lim = {.duration = STEP};
        const int run = llc_simrun_run(r, &lim, err, errlen);
        if (run < 0) {
            rc = run;
            break;
        }
        struct llc_simrun_agent_state st;
        struct llc_sim_agent_stats as;
        llc_simrun_agent_state(r, 0, &st);
        llc_sim_agent_stats(llc_simrun_sim_const(r), 0, &as);
        const uint64_t misses = as.llc_misses;
        /* Close every window the count passed; a step spanning two
         * boundaries (a window shorter than a step) credits the first. */
        const uint64_t pos = by_refs ? st.records - st.instructions : st.instructions;
        while (pos >= (uint64_t)(out->windows + 1) * window_instr ||
               (run == 1 && st.accesses > base_acc)) {
            if (grow(out, &cap) < 0) {
                rc = llc_errf(err, errlen, -ENOMEM, "out of memory");
                goto out;
            }
            out->accesses[out->windows] = st.accesses - base_acc;
            out->misses[out->windows] = misses - base_miss;
            out->windows++;
            base_acc = st.accesses;
            base_miss = misses;
        }
        if (run == 1)
            break;
    }
out:
    llc_simrun_destroy(r);
    if (rc < 0)
        llc_sampling_simwin_free(out);
    return rc;
}

void llc_sampling_simwin_free(struct llc_sampling_simwin *w)
{
    free(w->accesses);
    free(w->misses);
    memset(w, 0, sizeof(*w));
}
