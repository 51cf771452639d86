/* One phase tuple: the equilibrium at given rates (with the set skew of
 * docs/METHODS.md §12.6), and the CPI coupling of docs/METHODS.md §12.5 around it. */
#include "llcprobe/contention.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "llcprobe/common.h"
#include "contention_internal.h"
#include "contention_strata.h"

/* Programs in one tuple at most (the CLI takes 2 to 8). */
#define MAXN 64

static void parties_of(const struct llc_contention_phase *const *ph, const double *rate, size_t n,
                       const struct llc_contention_config *cfg, struct llc_contention_party *p)
{
    for (size_t i = 0; i < n; i++) {
        const bool cold = ph[i]->model && ph[i]->references > 0;
        p[i] = (struct llc_contention_party){
            .model = ph[i]->model,
            .lambda = ph[i]->lambda,
            .rate = rate[i],
            .gamma = cfg->anchor && ph[i]->gamma > 0 ? ph[i]->gamma : 1,
            .weight = 1,
            .lines_max = ph[i]->lines,
            .cold = cold,
            .steady =
                cold ? llc_contention_steady_share(ph[i]->model, ph[i]->firsts, ph[i]->references)
                     : 0,
            .age = ph[i]->age,
            .tables = cfg->tables,
            .evenness = ph[i]->evenness,
            .excess = n == 1 && ph[i]->excess_alone ? ph[i]->excess_alone : ph[i]->excess,
            .protect = llc_contention_rrip_protect(cfg->policy, cfg->private_lines > 0)};
        const bool lru = llc_contention_base_policy(cfg->policy) == LLC_CONTENTION_LRU;
        if (cfg->private_lines > 0 && (cfg->exclusive_lru || !lru || cfg->exclusive_entered)) {
            llc_contention_party_private(&p[i], cfg->private_lines);
            p[i].entered = lru && !cfg->exclusive_lru;
        }
    }
}

/* One equilibrium at fixed rates: over the cells of the stratified
 * programs' strata where some phase has them (docs/METHODS.md §12.6), else
 * the plain one. */
static int equilibrium(const struct llc_contention_phase *const *ph,
                       const struct llc_contention_party *p, size_t n, bool strata,
                       const struct llc_contention_config *cfg, double mu0,
                       struct llc_contention_share *out, struct llc_contention_info *info,
                       char *err, size_t errlen)
{
    const enum llc_contention_policy base = llc_contention_base_policy(cfg->policy);
    const unsigned ways = cfg->assoc ? cfg->ways : 0;
    return strata ? sm_contention_strata_shares(ph, p, n, cfg->capacity, base, ways, out, info, err,
                                                errlen)
                  : sm_contention_equilibrium(p, n, cfg->capacity, base, mu0, ways, out, info, err,
                                              errlen);
}

/* Most strata one program's skew takes. */
#define SKEW_STRATA LLC_CONTENTION_LAYOUT_STRATA

/* The skew's strata of a phase with set skew: its layout's, else the 5
 * key values of a measured CV, w = max(0, 1 + z CV), in *keys. */
static const struct llc_contention_layout *skew_strata(const struct llc_contention_phase *ph,
                                                       struct llc_contention_layout *keys)
{
    if (ph->layout)
        return ph->layout;
    keys->n = LLC_CONTENTION_STRATA;
    for (size_t g = 0; g < LLC_CONTENTION_STRATA; g++) {
        keys->w[g] = fmax(0, 1 + llc_contention_stratum_z[g] * ph->cv);
        keys->pi[g] = llc_contention_stratum_pi[g];
    }
    return keys;
}

/* Runs of the co-runners' count: its halves. Measured on the evaluation's
 * 260 random predictions (docs/RESULTS.md §10.18): 2, 3, 4, 8 and 16 runs
 * within 0.02 of each other in mean slowdown error and 0.5 in its maximum,
 * the model's time 2.0x, 2.8x, 3.5x, 6.3x and 11.6x that without the
 * co-runners' spread. */
#define OTHERS_STRATA 2

/* The co-runners' lines in the sets of program t (docs/METHODS.md §12.3):
 * each co-runner j with a spread of its layout (cv_j = layout_cv > 0) holds lam_j of its lines per
 * set on average, with variance (lam_j cv_j)^2, so their sum K varies with
 * V = sum (lam_j cv_j)^2 around L = sum lam_j. Strata of K (a Poisson of
 * L^2 / V, exactly the sum's for lines at random), and each co-runner's
 * weight in a set holding K = W L of them at its regression on K:
 * w_j = 1 + beta_j (W - 1), beta_j = lam_j cv_j^2 L / V (1 for every
 * co-runner when all are Poisson; 0 for a stream, which presses on every
 * set alike). Returns false when no co-runner varies. */
static bool others_strata(const struct llc_contention_phase *const *ph, const double *rate,
                          size_t n, size_t t, const struct llc_contention_config *cfg,
                          struct llc_contention_layout *st, double *beta)
{
    const double sets = cfg->capacity / cfg->ways;
    double lam[MAXN], sum = 0, var = 0;
    for (size_t j = 0; j < n; j++) {
        lam[j] = 0;
        if (j == t || !ph[j]->model || !(ph[j]->layout_cv > 0) || !(rate[j] > 0))
            continue;
        const double lines = ph[j]->lines > 0 ? fmin(ph[j]->lines, cfg->capacity) : cfg->capacity;
        lam[j] = lines / sets;
        sum += lam[j];
        var += lam[j] * lam[j] * ph[j]->layout_cv * ph[j]->layout_cv;
    }
    if (!(var > 0) || !(sum > 0))
        return false;
    for (size_t j = 0; j < n; j++)
        beta[j] = lam[j] * ph[j]->layout_cv * ph[j]->layout_cv * sum / var;
    llc_contention_layout_strata_runs(sum * sum / var, OTHERS_STRATA, st);
    return st->n > 1;
}

/* The co-runners' weights in sets holding w times the mean of their lines
 * (p[t]'s own left as it is). */
static void others_weights(struct llc_contention_party *p, size_t n, size_t t, const double *beta,
                           double w)
{
    for (size_t j = 0; j < n; j++) {
        const double wj = 1 + beta[j] * (w - 1);
        if (j != t) /* (a set with none of their lines: exactly 0, not a rounding) */
            p[j].weight = wj > 1e-9 ? wj : 0;
    }
}

/* Program t's figures over the co-runners' strata (others: one run of
 * weight 1 for their mean; beta NULL then), its own weight as p[t] has it
 * (a stratum's) or its profile's strata in the equilibrium: its
 * references fall on every set alike, so each of the co-runners' strata
 * counts by its share of the sets. *mu_mid (may be NULL): the miss rate
 * of their middle stratum's equilibrium, a start for the next. Every
 * weight is 1 again after. */
static int beside_others(const struct llc_contention_phase *const *ph,
                         struct llc_contention_party *p, size_t n, size_t t, bool strata,
                         const struct llc_contention_config *cfg,
                         const struct llc_contention_layout *others, const double *beta, double mu0,
                         struct llc_contention_share *out, double *mu_mid, char *err, size_t errlen)
{
    struct llc_contention_share tmp[MAXN];
    struct llc_contention_info ti;
    double mr = 0, occ = 0;
    int rc = 0;
    for (size_t h = 0; rc == 0 && h < others->n; h++) {
        if (beta)
            others_weights(p, n, t, beta, others->w[h]);
        rc = equilibrium(ph, p, n, strata, cfg, mu0, tmp, &ti, err, errlen);
        mr += others->pi[h] * tmp[t].miss_ratio;
        occ += others->pi[h] * tmp[t].occupancy;
        if (mu_mid && h == others->n / 2)
            *mu_mid = ti.mu;
    }
    for (size_t j = 0; j < n; j++)
        p[j].weight = 1;
    if (rc == 0) {
        out->miss_ratio = mr;
        out->miss_rate = p[t].rate * mr;
        out->occupancy = occ;
    }
    return rc;
}

/* Shares at fixed rates. With skew, a program whose sets are uneven (CV > 0)
 * and that has no strata of its own gets its figures from per-set
 * equilibria (skew_strata; each over the others' strata where they have
 * some), its footprint weighted by the stratum's set share rho_g Ns = w_g
 * and the others as in the plain one: MR = sum pi_g w_g Q(T_g) / sum
 * pi_g w_g, O = sum pi_g w_g F(T_g) / sum pi_g. Alone or beside a
 * stratified co-runner, the same description of the program. */
/* hint (NULL, or 1 + SKEW_STRATA n entries kept across the fixed point's
 * steps): the miss rates of the last step's equilibria, uniform first. */
static int shares_at(const struct llc_contention_phase *const *ph, const double *rate, size_t n,
                     const struct llc_contention_config *cfg, struct llc_contention_share *out,
                     struct llc_contention_info *info, double *hint, char *err, size_t errlen)
{
    struct llc_contention_party p[MAXN];
    parties_of(ph, rate, n, cfg, p);
    const bool strata = sm_contention_has_strata(ph, n);
    int rc = equilibrium(ph, p, n, strata, cfg, hint ? hint[0] : 0, out, info, err, errlen);
    if (rc == 0 && hint)
        hint[0] = info->mu;
    for (size_t t = 0; rc == 0 && cfg->skew && t < n; t++) {
        struct llc_contention_layout keys, others = {.n = 1, .w = {1}, .pi = {1}};
        double beta[MAXN];
        if (ph[t]->model && rate[t] > 0 && ph[t]->strata && ph[t]->strata->n > 0) {
            /* its strata supersede the CV; the co-runners' lines in its
             * sets still vary */
            if (cfg->skew_joint && others_strata(ph, rate, n, t, cfg, &others, beta))
                rc = beside_others(ph, p, n, t, strata, cfg, &others, beta, hint ? hint[0] : 0,
                                   &out[t], NULL, err, errlen);
            continue;
        }
        if (!ph[t]->model || !(ph[t]->cv > 0) || !(rate[t] > 0))
            continue;
        double num = 0, den = 0, occ = 0, pis = 0;
        const struct llc_contention_layout *st = skew_strata(ph[t], &keys);
        /* only where the layout's spread is the skew: random in sets */
        const bool joint = cfg->skew_joint && st == ph[t]->layout &&
                           others_strata(ph, rate, n, t, cfg, &others, beta);
        for (size_t g = 0; rc == 0 && g < st->n; g++) {
            const double w = st->w[g], pi = st->pi[g];
            if (!(w > 0)) { /* sets holding none of its lines (k = 0; key values: CV > 0.5) */
                pis += pi;
                continue;
            }
            /* w = 1 (z = 0) beside the co-runners' mean is the plain
             * equilibrium: its figures are out's */
            struct llc_contention_share sg = out[t];
            if (w != 1 || joint) {
                double *hg = hint ? &hint[1 + t * SKEW_STRATA + g] : NULL;
                p[t].weight = w;
                rc = beside_others(ph, p, n, t, strata, cfg, &others, joint ? beta : NULL,
                                   hg ? *hg : 0, &sg, hg, err, errlen);
            }
            num += pi * w * sg.miss_ratio;
            den += pi * w;
            occ += pi * sg.occupancy;
            pis += pi;
        }
        if (rc == 0 && den > 0) {
            out[t].miss_ratio = num / den;
            out[t].miss_rate = rate[t] * out[t].miss_ratio;
            out[t].occupancy = occ / pis;
        }
    }
    return rc;
}

static double cpi_of(const struct llc_contention_phase *ph, double mr)
{
    return ph->cpi0 + ph->api * mr * ph->penalty;
}

static int check_phases(const struct llc_contention_phase *const *ph, const double *freq, size_t n,
                        const struct llc_contention_config *cfg, char *err, size_t errlen)
{
    if (n == 0 || n > MAXN)
        return llc_errf(err, errlen, -EINVAL, "%zu programs (1..%d)", n, MAXN);
    if (!(cfg->capacity >= 1) || cfg->ways == 0)
        return llc_errf(err, errlen, -EINVAL, "cache of %g lines, %u ways", cfg->capacity,
                        cfg->ways);
    for (size_t i = 0; i < n; i++) {
        const struct llc_contention_phase *q = ph[i];
        if (!(freq[i] > 0) || !isfinite(freq[i]))
            return llc_errf(err, errlen, -EINVAL, "program %zu: clock %g Hz", i, freq[i]);
        if (q->model && (!(q->api > 0) || !(q->cpi0 > 0) || !(q->penalty >= 0) ||
                         !isfinite(q->api + q->cpi0 + q->penalty)))
            return llc_errf(err, errlen, -EINVAL, "program %zu: api %g, cpi0 %g, penalty %g", i,
                            q->api, q->cpi0, q->penalty);
    }
    return 0;
}

/* docs/METHODS.md §12.5: a <- (1 - beta) a + beta Psi(a) from the given start rates, until a
 * step moves no rate by more than LLC_CONTENTION_COUPLING_TOL of it. beta = 1 first (the plain
 * iteration: Psi is usually a strong contraction, miss ratios moving
 * little with the rates; 30 steps), then the method's 0.5, halving to 1/16,
 * each restarted from the start rates after 200 steps without convergence.
 * The undamped try is accelerated (Anderson mixing of depth 1, the secant
 * method for one program: each equilibrium costs far more than the step):
 * the next rates are Psi(a_k) - g (Psi(a_k) - Psi(a_{k-1})), g minimising
 * the linearised residual in units of the start rates. The stopping rule is
 * the plain step's, |Psi(a) - a| <= LLC_CONTENTION_COUPLING_TOL a, and the shares are those at
 * that a (one equilibrium fewer than at Psi(a): the same tolerance); the
 * mixing stops for good if a mixed step ends with a larger residual than
 * the step before it. */
static int couple(const struct llc_contention_phase *const *ph, const double *freq, size_t n,
                  const struct llc_contention_config *cfg, const double *start,
                  struct llc_contention_share *out, struct llc_contention_info *info, char *err,
                  size_t errlen)
{
    double a[MAXN], psi[MAXN], psi_prev[MAXN], f_prev[MAXN], hint[1 + MAXN * SKEW_STRATA] = {0};
    unsigned total = 0;
    for (double beta = 1; beta >= 1.0 / 16; beta /= 2) {
        for (size_t i = 0; i < n; i++)
            a[i] = start[i];
        bool have_prev = false, mix = beta == 1, mixed = false;
        double res_prev = INFINITY;
        /* The undamped try gets 30 steps: where it works it needs a few. */
        for (unsigned it = 1; it <= (beta == 1 ? 30u : 200u); it++) {
            int rc = shares_at(ph, a, n, cfg, out, info, hint, err, errlen);
            if (rc)
                return rc;
            total++;
            double worst = 0, res = 0;
            for (size_t i = 0; i < n; i++) {
                psi[i] = a[i];
                if (!ph[i]->model)
                    continue;
                psi[i] = ph[i]->api * freq[i] / cpi_of(ph[i], out[i].miss_ratio);
                const double next = (1 - beta) * a[i] + beta * psi[i];
                worst = fmax(worst, fabs(next - a[i]) / a[i]);
                const double r = (psi[i] - a[i]) / start[i];
                res += r * r;
            }
            if (worst < LLC_CONTENTION_COUPLING_TOL) { /* out holds the shares at these rates */
                info->iterations = total;
                info->beta = beta;
                info->converged = true;
                return 0;
            }
            if (mixed && res > res_prev)
                mix = false;
            double g = 0;
            bool use = false;
            if (mix && have_prev) {
                double num = 0, den = 0;
                for (size_t i = 0; i < n; i++) {
                    if (!ph[i]->model)
                        continue;
                    const double f = (psi[i] - a[i]) / start[i];
                    const double df = f - f_prev[i];
                    num += df * f;
                    den += df * df;
                }
                g = num / den;
                use = den > 0 && isfinite(g);
                for (size_t i = 0; use && i < n; i++)
                    use = !ph[i]->model || psi[i] - g * (psi[i] - psi_prev[i]) > 0;
            }
            for (size_t i = 0; i < n; i++) {
                if (!ph[i]->model)
                    continue;
                f_prev[i] = (psi[i] - a[i]) / start[i];
                a[i] =
                    use ? psi[i] - g * (psi[i] - psi_prev[i]) : (1 - beta) * a[i] + beta * psi[i];
                psi_prev[i] = psi[i];
            }
            have_prev = true;
            mixed = use;
            res_prev = res;
        }
    }
    info->iterations = total;
    info->beta = 1.0 / 16;
    info->converged = false;
    return 0;
}

/* Alone: the solo rate is the program's fixed point with itself (coupled
 * even without cfg->coupling: it is the rate the profile was taken at). */
static int solve_alone(const struct llc_contention_phase *ph, double freq,
                       const struct llc_contention_config *cfg, struct llc_contention_share *out,
                       char *err, size_t errlen)
{
    struct llc_contention_config c1 = *cfg;
    struct llc_contention_info in;
    const struct llc_contention_phase *one[1] = {ph};
    double a = ph->model ? ph->api * freq / ph->cpi0 : ph->lambda;
    c1.coupling = true;
    int rc = ph->model ? couple(one, &freq, 1, &c1, &a, out, &in, err, errlen)
                       : shares_at(one, &a, 1, &c1, out, &in, NULL, err, errlen);
    out->cpi = ph->model ? cpi_of(ph, out->miss_ratio) : NAN;
    return rc;
}

/* The co-run from the solo rates: coupled, or (without coupling) at them. */
static int solve(const struct llc_contention_phase *const *ph, const double *freq, size_t n,
                 const struct llc_contention_config *cfg, const struct llc_contention_share *solo,
                 const double *guess, struct llc_contention_share *out,
                 struct llc_contention_info *info, char *err, size_t errlen)
{
    double a[MAXN];
    struct llc_contention_info in = {0};
    int rc;
    for (size_t i = 0; i < n; i++)
        a[i] = solo[i].rate;
    if (cfg->coupling) {
        for (size_t i = 0; guess && i < n; i++)
            if (ph[i]->model && guess[i] > 0 && isfinite(guess[i]))
                a[i] = guess[i];
        rc = couple(ph, freq, n, cfg, a, out, &in, err, errlen);
    } else {
        rc = shares_at(ph, a, n, cfg, out, &in, NULL, err, errlen);
        in.converged = true;
        in.beta = 1;
    }
    for (size_t i = 0; rc == 0 && i < n; i++)
        out[i].cpi = ph[i]->model ? cpi_of(ph[i], out[i].miss_ratio) : NAN;
    if (info)
        *info = in;
    return rc;
}

int llc_contention_solo(const struct llc_contention_phase *ph, double freq,
                        const struct llc_contention_config *cfg, struct llc_contention_share *out,
                        char *err, size_t errlen)
{
    const struct llc_contention_phase *one[1] = {ph};
    int rc = check_phases(one, &freq, 1, cfg, err, errlen);
    return rc ? rc : solve_alone(ph, freq, cfg, out, err, errlen);
}

int llc_contention_corun(const struct llc_contention_phase *const *ph, const double *freq, size_t n,
                         const struct llc_contention_config *cfg,
                         const struct llc_contention_share *solo, struct llc_contention_share *out,
                         struct llc_contention_info *info, char *err, size_t errlen)
{
    int rc = check_phases(ph, freq, n, cfg, err, errlen);
    return rc ? rc : solve(ph, freq, n, cfg, solo, NULL, out, info, err, errlen);
}

int sm_contention_corun_guess(const struct llc_contention_phase *const *ph, const double *freq,
                              size_t n, const struct llc_contention_config *cfg,
                              const struct llc_contention_share *solo, const double *guess,
                              struct llc_contention_share *out, struct llc_contention_info *info,
                              char *err, size_t errlen)
{
    int rc = check_phases(ph, freq, n, cfg, err, errlen);
    return rc ? rc : solve(ph, freq, n, cfg, solo, guess, out, info, err, errlen);
}

int llc_contention_tuple(const struct llc_contention_phase *const *ph, const double *freq, size_t n,
                         const struct llc_contention_config *cfg, struct llc_contention_share *out,
                         struct llc_contention_share *solo, struct llc_contention_info *info,
                         char *err, size_t errlen)
{
    struct llc_contention_share own[MAXN];
    struct llc_contention_share *s1 = solo ? solo : own;
    int rc = check_phases(ph, freq, n, cfg, err, errlen);
    for (size_t i = 0; rc == 0 && i < n; i++)
        rc = solve_alone(ph[i], freq[i], cfg, &s1[i], err, errlen);
    if (rc == 0)
        rc = solve(ph, freq, n, cfg, s1, NULL, out, info, err, errlen);
    return rc;
}
