#include "profile_synth.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "llcprobe/common.h"

int psyn_hist(const struct psyn_mix *mix, double samples, struct llc_statmodel_hist *h, char *err,
              size_t errlen)
{
    double reuse = 0;
    for (size_t c = 0; c < mix->n; c++)
        reuse += mix->p[c];
    if (reuse > 1 + 1e-12)
        return llc_errf(err, errlen, -EINVAL, "mix probabilities add up to %g", reuse);
    llc_statmodel_hist_clear(h);
    for (size_t b = 0; b < LLC_STATMODEL_BUCKETS; b++) {
        const double lo = (double)llc_statmodel_bucket_lo(b);
        const double hi = lo + (double)llc_statmodel_bucket_width(b);
        double mass = 0, left = 0;
        for (size_t c = 0; c < mix->n; c++) {
            const double l1r = log1p(-mix->p[c] / mix->lines[c]);
            mass += mix->p[c] * (exp(lo * l1r) - exp(hi * l1r));
            left += mix->p[c] * exp(hi * l1r);
        }
        if (mass * samples > 0) {
            int rc =
                llc_statmodel_hist_add(h, llc_statmodel_bucket_lo(b), mass * samples, err, errlen);
            if (rc < 0)
                return rc;
        }
        if (left * samples < 1e-9)
            break;
    }
    const double dangling = (1 - reuse) * samples;
    return dangling > 0 ? llc_statmodel_hist_add_dangling(h, dangling, err, errlen) : 0;
}

static char *psyn_dup(const char *s)
{
    return s ? strdup(s) : NULL;
}

static int machine(const char *preset, struct llc_profile *p, char *err, size_t errlen)
{
    struct llc_profile_llc *l = &p->machine.llc;
    if (strcmp(preset, "intel8") == 0) {
        l->sets = 8192;
        l->slices = 4;
        l->inclusion = psyn_dup("inclusive");
    } else if (strcmp(preset, "amd32") == 0) {
        l->sets = 32768;
        l->slices = 8;
        l->inclusion = psyn_dup("exclusive");
    } else {
        return llc_errf(err, errlen, -EINVAL, "unknown preset %s", preset);
    }
    l->ways = 16;
    l->lines = l->sets * l->ways;
    l->bytes = l->lines * 64;
    l->policy = psyn_dup("lru");
    p->machine.kind = psyn_dup("preset");
    p->machine.preset = psyn_dup(preset);
    return 0;
}

static int probe(const struct psyn_profile_spec *s, struct llc_profile *p, char *err, size_t errlen)
{
    p->probe.ok = true;
    int rc = llc_profile_alloc_probe(p, s->n_phases, err, errlen);
    const double gamma = s->probe_gamma > 0 ? s->probe_gamma : 1;
    const double ns = (double)p->machine.llc.sets, ways = p->machine.llc.ways;
    for (size_t k = 0; rc == 0 && k < s->n_phases; k++) {
        struct llc_profile_probe_phase *e = &p->probe.per_phase[k];
        struct llc_statmodel_model *m = NULL;
        if ((rc = llc_statmodel_prepare(p->phases[k].rdhist, &m, err, errlen)) < 0)
            break;
        const double a = s->api[k] * p->timing.freq_hz / p->phases[k].solo.cpi;
        /* Largest tau in the linear regime: F(a tau) = 0.1 Ns (q about 0.1). */
        double lo = 0, hi = 1e-9;
        while (llc_statmodel_footprint(m, gamma * a * hi) < 0.1 * ns && hi < 1e6)
            hi *= 2;
        for (int it = 0; it < 100; it++) {
            const double mid = 0.5 * (lo + hi);
            *(llc_statmodel_footprint(m, gamma * a * mid) < 0.1 * ns ? &lo : &hi) = mid;
        }
        e->phase = p->phases[k].id;
        e->n_rates = 3;
        const double scale[3] = {0.1, 0.316227766, 1};
        for (size_t j = 0; j < 3; j++) {
            e->tau_s[j] = hi * scale[j];
            e->rates[j] = ways / e->tau_s[j];
            e->phi_hat[j] = llc_statmodel_footprint(m, gamma * a * e->tau_s[j]);
            e->q_max[j] = 1 - exp(-e->phi_hat[j] / ns * (1 + 2 * s->probe_cv));
        }
        e->cv = s->probe_cv;
        for (size_t g = 0; g < LLC_PROFILE_KEYS; g++) {
            e->keys[g] = 100 * (1 + ((double)g - 2) * s->probe_cv);
            e->sets[g] = malloc(5 * sizeof(uint32_t));
            if (!e->sets[g]) {
                rc = -ENOMEM;
                break;
            }
            e->n_sets[g] = 5;
            for (uint32_t j = 0; j < 5; j++)
                e->sets[g][j] = (uint32_t)((g * 5 + j) * 97 % p->machine.llc.sets);
        }
        llc_statmodel_release(m);
    }
    return rc;
}

int psyn_profile(const struct psyn_profile_spec *s, struct llc_profile *p, char *err, size_t errlen)
{
    llc_profile_init(p);
    p->llcprobe_version = psyn_dup("0.1.0");
    p->created = psyn_dup("2026-11-25T20:00:00Z");
    p->program.name = psyn_dup(s->name);
    p->program.source = psyn_dup("workload");
    p->program.workload = psyn_dup("synthetic");
    p->sampler.kind = psyn_dup("trace");
    p->sampler.rate = 1e-3;
    p->sampler.seed = 1;
    p->timing = (struct llc_profile_timing){.freq_hz = 3e9,
                                            .base_cpi = 1,
                                            .mlp = 2,
                                            .lat_l1 = 4,
                                            .lat_l2 = 14,
                                            .lat_llc = 40,
                                            .lat_mem = 200,
                                            .miss_penalty_cycles = 80};
    p->windows.unit = psyn_dup("instructions");
    p->windows.length = s->window_instructions;
    p->probe.reason = s->with_probe ? NULL : psyn_dup("synthetic profile without probe readings");
    int rc = machine(s->preset, p, err, errlen);
    const size_t nwin = (size_t)s->n_phases * s->windows_per_phase * s->n_cycles;
    if (rc == 0)
        rc = llc_profile_alloc_windows(p, nwin, err, errlen);
    if (rc == 0)
        rc = llc_profile_alloc_phases(p, s->n_phases, err, errlen);
    for (size_t w = 0; rc == 0 && w < nwin; w++) {
        const size_t k = (w / s->windows_per_phase) % s->n_phases;
        p->windows.phase_of[w] = (int)k;
        p->windows.instructions[w] = (double)s->window_instructions;
        p->windows.references[w] = round(s->api[k] * (double)s->window_instructions);
    }
    for (size_t k = 0; rc == 0 && k < s->n_phases; k++) {
        struct llc_profile_phase *ph = &p->phases[k];
        struct llc_statmodel_model *m = NULL;
        struct llc_statmodel_point pt;
        ph->windows = (uint64_t)s->windows_per_phase * s->n_cycles;
        ph->instructions = (double)ph->windows * (double)s->window_instructions;
        ph->references = (double)ph->windows * round(s->api[k] * (double)s->window_instructions);
        ph->refs_per_instruction = ph->references / ph->instructions;
        if ((rc = psyn_hist(&s->mixes[k], s->samples, ph->rdhist, err, errlen)) < 0)
            break;
        ph->samples = llc_statmodel_hist_total(ph->rdhist);
        if ((rc = llc_statmodel_prepare(ph->rdhist, &m, err, errlen)) < 0)
            break;
        rc = llc_statmodel_statstack(m, (double)p->machine.llc.lines, &pt, err, errlen);
        llc_statmodel_release(m);
        ph->cpi0 = s->cpi0[k];
        ph->solo.cpi = s->cpi0[k] + s->api[k] * pt.r_total * p->timing.miss_penalty_cycles;
        ph->solo.llc_miss_ratio = pt.r_total;
    }
    if (rc == 0 && s->with_probe)
        rc = probe(s, p, err, errlen);
    if (rc < 0)
        llc_profile_free(p);
    return rc;
}
