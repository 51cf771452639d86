/* Phase-guided profiling schedules (docs/METHODS.md §11): profile each phase once, spread
 * profiled windows over each phase with a doubling period, or the
 * phase-blind periodic baseline. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "llcprobe/common.h"
#include "llcprobe/phase.h"
#include "phase_rng.h"

struct phase_state {
    uint64_t seen;     /* windows classified as the phase */
    uint64_t profiled; /* of which profiled */
    unsigned period;   /* g_p */
    long countdown;    /* next_p, in windows of the phase */
};

struct llc_phase_schedule {
    struct llc_phase_schedule_config cfg;
    uint64_t rng;
    struct phase_state *phases;
    size_t n_phases;
    long periodic_countdown;
};

void llc_phase_schedule_config_default(struct llc_phase_schedule_config *cfg)
{
    *cfg = (struct llc_phase_schedule_config){
        .kind = LLC_PHASE_SCHEDULE_SPREAD,
        .k_seen = 2,
        .g0 = 1,
        .g_max = 64,
        .periodic_mean = 8.0,
        .seed = 1,
    };
}

/* A gap of max(1, round(Exp(mean))) windows. */
static long draw_gap(struct llc_phase_schedule *s, double mean)
{
    const long gap = lround(llc_phase_exponential(&s->rng, mean));
    return gap < 1 ? 1 : gap;
}

int llc_phase_schedule_create(const struct llc_phase_schedule_config *cfg,
                              struct llc_phase_schedule **out, char *err, size_t errlen)
{
    *out = NULL;
    switch (cfg->kind) {
    case LLC_PHASE_SCHEDULE_ONCE:
        break;
    case LLC_PHASE_SCHEDULE_SPREAD:
        if (cfg->g0 == 0 || cfg->g_max < cfg->g0)
            return llc_errf(err, errlen, -EINVAL, "need 0 < g0 (%u) <= g_max (%u)", cfg->g0,
                            cfg->g_max);
        break;
    case LLC_PHASE_SCHEDULE_PERIODIC:
        if (!(cfg->periodic_mean >= 1.0 && cfg->periodic_mean < 1e12))
            return llc_errf(err, errlen, -EINVAL, "periodic mean gap %g must be at least 1 window",
                            cfg->periodic_mean);
        break;
    default:
        return llc_errf(err, errlen, -EINVAL, "unknown schedule kind %d", (int)cfg->kind);
    }
    struct llc_phase_schedule *s = calloc(1, sizeof *s);
    if (!s)
        return llc_errf(err, errlen, -ENOMEM, "out of memory");
    s->cfg = *cfg;
    s->rng = cfg->seed;
    if (cfg->kind == LLC_PHASE_SCHEDULE_PERIODIC)
        s->periodic_countdown = draw_gap(s, cfg->periodic_mean);
    *out = s;
    return 0;
}

void llc_phase_schedule_destroy(struct llc_phase_schedule *s)
{
    if (!s)
        return;
    free(s->phases);
    free(s);
}

static const struct phase_state *state_of(const struct llc_phase_schedule *s, int phase)
{
    return phase >= 0 && (size_t)phase < s->n_phases ? &s->phases[phase] : NULL;
}

bool llc_phase_schedule_decide(const struct llc_phase_schedule *s, int predicted)
{
    if (s->cfg.kind == LLC_PHASE_SCHEDULE_PERIODIC)
        return s->periodic_countdown <= 0;
    const struct phase_state *ps = state_of(s, predicted);
    if (!ps || ps->seen < s->cfg.k_seen)
        return false;
    if (s->cfg.kind == LLC_PHASE_SCHEDULE_ONCE)
        return ps->profiled == 0;
    return ps->countdown <= 0;
}

static int ensure_phase(struct llc_phase_schedule *s, int phase)
{
    if ((size_t)phase < s->n_phases)
        return 0;
    size_t n = s->n_phases ? s->n_phases : 16;
    while (n <= (size_t)phase)
        n *= 2;
    struct phase_state *p = realloc(s->phases, n * sizeof *p);
    if (!p)
        return -ENOMEM;
    for (size_t i = s->n_phases; i < n; i++)
        p[i] = (struct phase_state){.period = s->cfg.g0};
    s->phases = p;
    s->n_phases = n;
    return 0;
}

int llc_phase_schedule_observe(struct llc_phase_schedule *s, int actual, bool profiled, char *err,
                               size_t errlen)
{
    if (s->cfg.kind == LLC_PHASE_SCHEDULE_PERIODIC) {
        /* The profiled window itself is the first of the new gap. */
        if (profiled)
            s->periodic_countdown = draw_gap(s, s->cfg.periodic_mean);
        s->periodic_countdown--;
    }
    if (actual < 0)
        return 0; /* not a phase: nothing to credit */
    if (ensure_phase(s, actual) < 0)
        return llc_errf(err, errlen, -ENOMEM, "out of memory for phase %d", actual);
    struct phase_state *ps = &s->phases[actual];
    ps->seen++;
    if (profiled) {
        ps->profiled++;
        if (s->cfg.kind == LLC_PHASE_SCHEDULE_SPREAD) {
            const unsigned g = 2 * ps->period;
            ps->period = g < s->cfg.g_max ? g : s->cfg.g_max;
            ps->countdown = draw_gap(s, ps->period);
        }
    }
    ps->countdown--;
    return 0;
}

uint64_t llc_phase_schedule_seen(const struct llc_phase_schedule *s, int phase)
{
    const struct phase_state *ps = state_of(s, phase);
    return ps ? ps->seen : 0;
}

uint64_t llc_phase_schedule_profiled(const struct llc_phase_schedule *s, int phase)
{
    const struct phase_state *ps = state_of(s, phase);
    return ps ? ps->profiled : 0;
}

unsigned llc_phase_schedule_period(const struct llc_phase_schedule *s, int phase)
{
    const struct phase_state *ps = state_of(s, phase);
    return ps && ps->seen ? ps->period : 0;
}

long llc_phase_schedule_countdown(const struct llc_phase_schedule *s, int phase)
{
    if (s->cfg.kind == LLC_PHASE_SCHEDULE_PERIODIC)
        return s->periodic_countdown;
    const struct phase_state *ps = state_of(s, phase);
    return ps ? ps->countdown : 0;
}
