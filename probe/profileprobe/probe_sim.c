/* The per-phase probe readings of a profile in the simulator
 * (docs/METHODS.md §12.6): the sim map backend co-runs the stress probe
 * with the target, paced window by window at the target's solo rate, in
 * two passes over the run.
 *
 *   1. Map: for each phase, the probe walks the mapped sets while the
 *      target is in a window of that phase, at a rate where the median
 *      set's probe miss ratio is about 0.05, until the mapped sets have
 *      seen `map_events` foreign insertions each on average (the cost
 *      bound: the probe's accesses then do not depend on how long the
 *      phase runs). fit's Gaussian-25 selection and dispersion index
 *      (noise-corrected CV) of that map.
 *   2. Readings: in each window of a phase, the probe walks the phase's
 *      25 sets at each of the rates in turn (a third of the window each);
 *      Phi_hat(tau_j) is the stratified estimate of sum -ln(1 - q_k) over
 *      all sets, tau_j = W / rate_j.
 */
#include "llcprobe/profile.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "llcprobe/common.h"
#include "llcprobe/fit.h"
#include "llcprobe/map.h"
#include "llcprobe/rng.h"
#include "llcprobe/sim.h"

/* Probe miss ratio aimed at: the map's median set, and the reading at the
 * lowest rate in the hottest selected set (the linear regime is q <= 0.1). */
#define Q_MAP 0.05
#define Q_LOW 0.05
/* Turns of the rates within one window at most. */
#define ROUNDS 8
/* Pilot windows per phase at most (and at most a quarter of its windows). */
#define PILOTS 3
/* Per-set probe rates, accesses per simulated second. */
#define MIN_RATE 10.0
#define MAX_RATE 1e9
/* Where the probe waits (one set, slowly) while nothing is measured. */
#define PARK_RATE 1000.0
/* Progress lines per pass at most. */
#define PROGRESS_LINES 10

void llc_profile_probe_config_default(struct llc_profile_probe_config *c)
{
    memset(c, 0, sizeof(*c));
    c->map_sets = LLC_PROFILE_PROBE_MAP_SETS;
    c->map_events = LLC_PROFILE_PROBE_MAP_EVENTS;
    c->seed = 1;
}

struct pphase {
    double seconds, insertions; /* solo, over the phase's windows */
    size_t windows, pilots_left;
    double map_rate;      /* per set per second */
    uint64_t *miss, *acc; /* [n_map] */
    bool map_done;
    struct llc_fit_selection *sel;
    struct llc_fit_dispersion disp;
    uint32_t *units; /* [sel->n] set ids */
    double rates[LLC_PROFILE_MAX_RATES];
    uint64_t *rmiss, *racc; /* [n_rates * sel->n] */
    char note[256];
};

struct pctx {
    const struct llc_sim_config *cfg;
    struct llc_map_sim_options opt;
    const struct llc_profile_probe_config *pc;
    const struct llc_profile_probe_run *run;
    struct llc_profile *p;
    uint32_t units, ways;
    size_t n_map, n_rates;
    uint32_t *map;        /* mapped set ids */
    uint8_t *excluded;    /* [n_map] DRRIP leader sets */
    struct pphase *ph;    /* [p->n_phases] */
    uint64_t *miss, *acc; /* [units] scratch, zero between calls */
    uint32_t park;
};

static void note(const struct pctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note(const struct pctx *c, const char *fmt, ...)
{
    if (!c->pc->log)
        return;
    va_list ap;
    va_start(ap, fmt);
    fprintf(c->pc->log, "llcprobe: profile: ");
    vfprintf(c->pc->log, fmt, ap);
    fputc('\n', c->pc->log);
    va_end(ap);
}

static double clamp_rate(double r)
{
    return !(r > MIN_RATE) ? MIN_RATE : r > MAX_RATE ? MAX_RATE : r;
}

/* The mapped sets: all, or a seeded random subset in increasing order. */
static int choose_map(struct pctx *c, char *err, size_t errlen)
{
    const uint32_t want =
        c->pc->map_sets && c->pc->map_sets < c->units ? c->pc->map_sets : c->units;
    uint32_t *all = malloc(c->units * sizeof(*all));
    c->map = malloc(want * sizeof(*c->map));
    if (!all || !c->map) {
        free(all);
        return llc_errf(err, errlen, -ENOMEM, "out of memory");
    }
    for (uint32_t u = 0; u < c->units; u++)
        all[u] = u;
    uint64_t st = c->pc->seed ^ UINT64_C(0x70726f6265);
    for (uint32_t i = 0; want < c->units && i < want; i++) {
        const uint32_t j = i + (uint32_t)(llc_splitmix_next(&st) % (c->units - i));
        const uint32_t t = all[i];
        all[i] = all[j];
        all[j] = t;
    }
    /* counting sort back into increasing order */
    uint8_t *in = calloc(c->units, 1);
    if (!in) {
        free(all);
        return llc_errf(err, errlen, -ENOMEM, "out of memory");
    }
    for (uint32_t i = 0; i < want; i++)
        in[all[i]] = 1;
    size_t n = 0;
    for (uint32_t u = 0; u < c->units; u++)
        if (in[u])
            c->map[n++] = u;
    c->n_map = n;
    free(in);
    free(all);
    return 0;
}

/* One dwell of the target's window k, the probe on units[0..n) at rate
 * (per set per second); counts land in c->miss/c->acc by set id. */
static int dwell(struct pctx *c, struct llc_map_backend *b, size_t k, double share,
                 const uint32_t *units, size_t n, double rate, char *err, size_t errlen)
{
    const double sec = c->run->seconds[k] * share;
    int rc = llc_map_sim_pace_target(b, c->run->accesses[k] / c->run->seconds[k] / 1e9);
    if (rc < 0)
        return llc_errf(err, errlen, rc,
                        "window %zu: cannot pace the target at %.4g accesses per ns", k,
                        c->run->accesses[k] / c->run->seconds[k] / 1e9);
    if ((rc = b->ops->probe_set(b->ctx, rate, n, NULL, err, errlen)) < 0)
        return rc;
    return b->ops->measure(b->ctx, units, n, sec, c->miss, c->acc, err, errlen);
}

static bool usable_window(const struct pctx *c, size_t k)
{
    return c->run->seconds[k] > 0 && c->run->accesses[k] >= 1;
}

static long phase_of(const struct pctx *c, size_t k)
{
    const int id = k < c->p->windows.count ? c->p->windows.phase_of[k] : -1;
    return id < 0 ? -1 : llc_profile_phase_index(c->p, id);
}

static void progress(const struct pctx *c, const char *pass, size_t k, size_t *next)
{
    const size_t n = c->run->n_windows;
    if (k + 1 < *next || n == 0)
        return;
    note(c, "probe %s: window %zu of %zu", pass, k + 1, n);
    *next = k + 1 + (n + PROGRESS_LINES - 1) / PROGRESS_LINES;
}

static int pass_map(struct pctx *c, char *err, size_t errlen)
{
    struct llc_map_backend *b = NULL;
    int rc = llc_map_backend_sim(c->cfg, &c->opt, &b, err, errlen);
    if (rc < 0)
        return rc;
    bool *leaders = calloc(c->units, sizeof(*leaders));
    if (!leaders) {
        rc = llc_errf(err, errlen, -ENOMEM, "out of memory");
        goto out;
    }
    if (llc_map_sim_leaders(b, leaders) > 0)
        for (size_t i = 0; i < c->n_map; i++)
            c->excluded[i] = leaders[c->map[i]];
    c->park = c->map[0];
    size_t next = 0;
    for (size_t k = 0; k < c->run->n_windows && rc == 0; k++) {
        if (c->pc->stop && *c->pc->stop) {
            rc = llc_errf(err, errlen, -EINTR, "interrupted");
            break;
        }
        if (!usable_window(c, k))
            continue;
        const long j = phase_of(c, k);
        struct pphase *ph = j >= 0 ? &c->ph[j] : NULL;
        if (ph && !ph->map_done) {
            rc = dwell(c, b, k, 1, c->map, c->n_map, ph->map_rate, err, errlen);
            uint64_t sum = 0;
            for (size_t i = 0; i < c->n_map; i++) {
                const uint32_t u = c->map[i];
                ph->miss[i] += c->miss[u];
                ph->acc[i] += c->acc[u];
                sum += ph->miss[i];
                c->miss[u] = c->acc[u] = 0;
            }
            ph->map_done = (double)sum / c->ways / (double)c->n_map >= c->pc->map_events;
        } else {
            rc = dwell(c, b, k, 1, &c->park, 1, PARK_RATE, err, errlen);
            c->miss[c->park] = c->acc[c->park] = 0;
        }
        progress(c, "map", k, &next);
        bool all_done = true;
        for (size_t q = 0; q < c->p->n_phases; q++)
            all_done &= c->ph[q].map_done;
        if (all_done)
            break; /* the rest of the run would only move the target on */
    }
    rc = rc == 1 ? 0 : rc;
out:
    free(leaders);
    llc_map_backend_release(b);
    return rc;
}

/* fit's selection and dispersion of phase j's map, and its rates. */
static int select_phase(struct pctx *c, size_t j, char *err, size_t errlen)
{
    struct pphase *ph = &c->ph[j];
    double *x = malloc(c->n_map * sizeof(*x));
    if (!x)
        return llc_errf(err, errlen, -ENOMEM, "out of memory");
    for (size_t i = 0; i < c->n_map; i++)
        x[i] = (double)ph->miss[i];
    char why[LLC_ERRLEN];
    struct llc_fit_select_config sc;
    llc_fit_select_config_default(&sc);
    sc.ways = c->ways;
    sc.seed = LLC_FIT_DEFAULT_SEED ^ c->pc->seed;
    int rc = llc_fit_dispersion(x, c->n_map, c->excluded, c->ways, &ph->disp, why, sizeof(why));
    if (rc == 0)
        rc = llc_fit_select(x, c->n_map, c->excluded, &sc, &ph->sel, why, sizeof(why));
    free(x);
    if (rc == -ENODATA) {
        snprintf(ph->note, sizeof(ph->note),
                 "no probe misses in the phase's map (%zu sets at %.3g accesses/s per set): its "
                 "footprint in the LLC is too small to read",
                 c->n_map, ph->map_rate);
        return 0;
    }
    if (rc < 0)
        return llc_errf(err, errlen, rc, "phase %d: %s", c->p->phases[j].id, why);
    if (ph->sel->n > 64)
        return llc_errf(err, errlen, -EINVAL, "phase %d: %zu sets selected (64 at most)",
                        c->p->phases[j].id, ph->sel->n);
    ph->units = malloc(ph->sel->n * sizeof(*ph->units));
    ph->rmiss = calloc(c->n_rates * ph->sel->n, sizeof(*ph->rmiss));
    ph->racc = calloc(c->n_rates * ph->sel->n, sizeof(*ph->racc));
    if (!ph->units || !ph->rmiss || !ph->racc)
        return llc_errf(err, errlen, -ENOMEM, "out of memory");
    /* The hottest selected set's footprint at the map's rate, -ln(1 - q):
     * the lowest reading rate scales it to Q_LOW as a streaming footprint
     * would (phi ~ tau). A reused footprint shrinks more slowly with tau,
     * so where the rate goes up from the map's, q comes out higher: the
     * pilot windows of the readings correct that. */
    double phi_max = 0;
    for (size_t i = 0; i < ph->sel->n; i++) {
        const size_t m = ph->sel->unit[i];
        ph->units[i] = c->map[m];
        const double q = ph->acc[m] ? (double)ph->miss[m] / (double)ph->acc[m] : 0;
        phi_max = fmax(phi_max, -log1p(-fmin(q, 0.999)));
    }
    if (c->pc->n_rates) {
        memcpy(ph->rates, c->pc->rates, c->n_rates * sizeof(double));
    } else {
        ph->pilots_left = ph->windows / 4 < PILOTS ? ph->windows / 4 : PILOTS;
        const double lo =
            phi_max > 0 ? clamp_rate(ph->map_rate * phi_max / -log1p(-Q_LOW)) : ph->map_rate;
        for (size_t r = 0; r < c->n_rates; r++)
            ph->rates[r] = clamp_rate(lo * pow(10, (double)r / (double)(c->n_rates - 1)));
    }
    return 0;
}

/* A pilot window (auto rates): the whole window at the lowest rate, its
 * counts dropped; the rates scaled so the hottest of the 25 sets reads
 * about Q_LOW: by (phi / phi_target)^2 upwards (a footprint shrinks at
 * least as sqrt(tau) in practice: reuse within tau), phi / phi_target
 * downwards (it grows at most as tau), at most 10x a step. */
static int pilot(struct pctx *c, struct llc_map_backend *b, size_t k, struct pphase *ph, char *err,
                 size_t errlen)
{
    const size_t n = ph->sel->n;
    const int rc = dwell(c, b, k, 1, ph->units, n, ph->rates[0], err, errlen);
    double phi = 0;
    for (size_t i = 0; i < n; i++) {
        const uint32_t u = ph->units[i];
        const double q = c->acc[u] ? (double)c->miss[u] / (double)c->acc[u] : 0;
        phi = fmax(phi, -log1p(-fmin(q, 0.999)));
        c->miss[u] = c->acc[u] = 0;
    }
    if (rc < 0)
        return rc;
    const double want = -log1p(-Q_LOW);
    double f = 1;
    if (phi > want * 1.25)
        f = fmin(10, (phi / want) * (phi / want));
    else if (phi > 0 && phi < want / 2)
        f = fmax(0.1, phi / want);
    ph->pilots_left = f == 1 ? 0 : ph->pilots_left - 1;
    for (size_t r = 0; f != 1 && r < c->n_rates; r++)
        ph->rates[r] = clamp_rate(ph->rates[r] * f);
    return rc;
}

static int pass_readings(struct pctx *c, char *err, size_t errlen)
{
    struct llc_map_backend *b = NULL;
    int rc = llc_map_backend_sim(c->cfg, &c->opt, &b, err, errlen);
    if (rc < 0)
        return rc;
    size_t next = 0;
    for (size_t k = 0; k < c->run->n_windows && rc == 0; k++) {
        if (c->pc->stop && *c->pc->stop) {
            rc = llc_errf(err, errlen, -EINTR, "interrupted");
            break;
        }
        if (!usable_window(c, k))
            continue;
        const long j = phase_of(c, k);
        struct pphase *ph = j >= 0 ? &c->ph[j] : NULL;
        if (!ph || !ph->sel) {
            rc = dwell(c, b, k, 1, &c->park, 1, PARK_RATE, err, errlen);
            c->miss[c->park] = c->acc[c->park] = 0;
            continue;
        }
        const size_t n = ph->sel->n;
        if (ph->pilots_left) {
            rc = pilot(c, b, k, ph, err, errlen);
            continue;
        }
        /* The rates take turns within the window, in up to ROUNDS rounds
         * (a turn no shorter than 20 lifetimes at the lowest rate), so each
         * sees all of a window whose behaviour drifts; the order turns
         * window by window so no rate always follows another. */
        const double turn = 20 * c->ways / ph->rates[0] * (double)c->n_rates;
        const double fit = floor(c->run->seconds[k] / turn);
        const size_t rounds = fit < 1 ? 1 : fit > ROUNDS ? ROUNDS : (size_t)fit;
        for (size_t s = 0; s < c->n_rates * rounds && rc == 0; s++) {
            const size_t r = (s + k) % c->n_rates;
            rc = dwell(c, b, k, 1.0 / (double)(c->n_rates * rounds), ph->units, n, ph->rates[r],
                       err, errlen);
            for (size_t i = 0; i < n; i++) {
                ph->rmiss[r * n + i] += c->miss[ph->units[i]];
                ph->racc[r * n + i] += c->acc[ph->units[i]];
                c->miss[ph->units[i]] = c->acc[ph->units[i]] = 0;
            }
        }
        progress(c, "readings", k, &next);
    }
    rc = rc == 1 ? 0 : rc;
    llc_map_backend_release(b);
    return rc;
}

/* The profile's entry of phase j. */
static int fill_entry(struct pctx *c, size_t j, struct llc_profile_probe_phase *e, char *err,
                      size_t errlen)
{
    struct pphase *ph = &c->ph[j];
    e->phase = c->p->phases[j].id;
    e->n_rates = c->n_rates;
    e->cv = ph->disp.status == LLC_FIT_OK && isfinite(ph->disp.cv_true) ? ph->disp.cv_true : 0;
    for (size_t r = 0; r < c->n_rates; r++) {
        e->rates[r] =
            ph->sel ? ph->rates[r] : ph->map_rate * pow(10, (double)r / (double)(c->n_rates - 1));
        e->tau_s[r] = c->ways / e->rates[r];
    }
    if (!ph->sel)
        return (e->note = strdup(ph->note)) ? 0 : llc_errf(err, errlen, -ENOMEM, "out of memory");
    const struct llc_fit_selection *sel = ph->sel;
    const size_t n = sel->n;
    double x[64];
    bool linear = true;
    uint64_t events = UINT64_MAX;
    for (size_t r = 0; r < c->n_rates; r++) {
        double qmax = 0;
        uint64_t m = 0;
        for (size_t i = 0; i < n && i < 64; i++) {
            const uint64_t a = ph->racc[r * n + i], ms = ph->rmiss[r * n + i];
            /* a set missing on every access reads as half a hit short of that */
            const double q = a ? fmin((double)ms / (double)a, 1 - 0.5 / (double)a) : 0;
            qmax = fmax(qmax, q);
            x[i] = -log1p(-q);
            m += ms;
        }
        struct llc_fit_stratified st;
        char why[LLC_ERRLEN];
        const int rc = llc_fit_stratified_total(&sel->strata, sel->profile, x, n, (double)c->units,
                                                &st, why, sizeof(why));
        if (rc < 0)
            return llc_errf(err, errlen, rc, "phase %d: stratified estimate: %s", e->phase, why);
        e->phi_hat[r] = fmax(0, st.total);
        e->q_max[r] = qmax;
        linear &= qmax <= LLC_PROFILE_PROBE_Q_LINEAR;
        events = m / c->ways < events ? m / c->ways : events;
    }
    /* keys in increasing order (z = -2..2); fewer distinct ones repeat the last */
    if (sel->strata.count == 0)
        return llc_errf(err, errlen, -EINVAL, "phase %d: the selection has no strata", e->phase);
    for (size_t g = 0; g < LLC_PROFILE_KEYS; g++) {
        const size_t s = g < sel->strata.count ? g : sel->strata.count - 1;
        e->keys[g] = sel->strata.key[s];
    }
    for (size_t g = 0; g < sel->strata.count && g < LLC_PROFILE_KEYS; g++) {
        size_t cnt = 0;
        for (size_t i = 0; i < n; i++)
            cnt += sel->stratum[i] == g;
        if (!cnt)
            continue;
        if (!(e->sets[g] = malloc(cnt * sizeof(uint32_t))))
            return llc_errf(err, errlen, -ENOMEM, "out of memory");
        for (size_t i = 0; i < n; i++)
            if (sel->stratum[i] == g)
                e->sets[g][e->n_sets[g]++] = ph->units[i];
    }
    char buf[256] = "";
    size_t worst = 0;
    for (size_t r = 1; r < c->n_rates; r++)
        worst = e->q_max[r] > e->q_max[worst] ? r : worst;
    if (!linear)
        snprintf(
            buf, sizeof(buf),
            "not every rate in the linear regime: largest probe miss ratio %.3g at %.3g accesses/s "
            "per set (the method wants <= %.2g)",
            e->q_max[worst], e->rates[worst], LLC_PROFILE_PROBE_Q_LINEAR);
    else if (events < LLC_PROFILE_PROBE_MIN_EVENTS)
        snprintf(buf, sizeof(buf), "few foreign insertions read: %llu at the sparsest rate (noisy)",
                 (unsigned long long)events);
    if (buf[0] && !(e->note = strdup(buf)))
        return llc_errf(err, errlen, -ENOMEM, "out of memory");
    return 0;
}

static void free_ctx(struct pctx *c)
{
    for (size_t j = 0; c->ph && j < c->p->n_phases; j++) {
        free(c->ph[j].miss);
        free(c->ph[j].acc);
        llc_fit_selection_destroy(c->ph[j].sel);
        free(c->ph[j].units);
        free(c->ph[j].rmiss);
        free(c->ph[j].racc);
    }
    free(c->ph);
    free(c->map);
    free(c->excluded);
    free(c->miss);
    free(c->acc);
}

int llc_profile_probe_sim(const struct llc_sim_config *cfg, const struct llc_profile_probe_run *run,
                          const struct llc_profile_probe_config *pc, struct llc_profile *p,
                          char *err, size_t errlen)
{
    if (!run->workload == !run->trace)
        return llc_errf(err, errlen, -EINVAL,
                        "probe readings: the target is a workload or a trace (one)");
    if (pc->n_rates > LLC_PROFILE_MAX_RATES || pc->n_rates == 1)
        return llc_errf(err, errlen, -EINVAL, "probe readings: %zu rates (2..%d)", pc->n_rates,
                        LLC_PROFILE_MAX_RATES);
    struct pctx c = {.cfg = cfg, .pc = pc, .run = run, .p = p};
    llc_map_sim_options_default(&c.opt);
    c.opt.workload = run->workload;
    c.opt.trace = run->trace;
    c.opt.continue_group = true;
    c.opt.stop = pc->stop;
    c.units = (uint32_t)llc_sim_geometry_sets(&cfg->llc);
    c.ways = cfg->llc.ways;
    c.n_rates = pc->n_rates ? pc->n_rates : 3;
    int rc = choose_map(&c, err, errlen);
    if (rc < 0)
        goto out;
    c.ph = calloc(p->n_phases, sizeof(*c.ph));
    c.excluded = calloc(c.n_map, 1);
    c.miss = calloc(c.units, sizeof(*c.miss));
    c.acc = calloc(c.units, sizeof(*c.acc));
    if (!c.ph || !c.excluded || !c.miss || !c.acc) {
        rc = llc_errf(err, errlen, -ENOMEM, "out of memory");
        goto out;
    }
    for (size_t k = 0; k < run->n_windows; k++) {
        const long j = phase_of(&c, k);
        if (j >= 0 && usable_window(&c, k)) {
            c.ph[j].seconds += run->seconds[k];
            c.ph[j].windows++;
            c.ph[j].insertions += run->insertions[k];
        }
    }
    /* The map's rate: insertions per set per second lambda at q = 1 -
     * exp(-lambda W / r) = Q_MAP for a set of average traffic. */
    for (size_t j = 0; j < p->n_phases; j++) {
        struct pphase *ph = &c.ph[j];
        const double lambda = ph->seconds > 0 ? ph->insertions / ph->seconds / c.units : 0;
        ph->map_rate = clamp_rate(lambda * c.ways / -log1p(-Q_MAP));
        ph->miss = calloc(c.n_map, sizeof(*ph->miss));
        ph->acc = calloc(c.n_map, sizeof(*ph->acc));
        if (!ph->miss || !ph->acc) {
            rc = llc_errf(err, errlen, -ENOMEM, "out of memory");
            goto out;
        }
    }
    note(&c,
         "probe map: %zu of %u sets, up to %.0f foreign insertions per set per phase, %zu phases",
         c.n_map, c.units, pc->map_events, p->n_phases);
    if ((rc = pass_map(&c, err, errlen)) < 0)
        goto out;
    for (size_t j = 0; j < p->n_phases && rc == 0; j++)
        rc = select_phase(&c, j, err, errlen);
    if (rc < 0)
        goto out;
    note(&c, "probe readings: 25 sets per phase at %zu rates", c.n_rates);
    if ((rc = pass_readings(&c, err, errlen)) < 0)
        goto out;
    if ((rc = llc_profile_alloc_probe(p, p->n_phases, err, errlen)) < 0)
        goto out;
    for (size_t j = 0; j < p->n_phases && rc == 0; j++)
        rc = fill_entry(&c, j, &p->probe.per_phase[j], err, errlen);
    if (rc == 0) {
        p->probe.ok = true;
        free(p->probe.reason);
        p->probe.reason = NULL;
    }
out:
    free_ctx(&c);
    return rc;
}
