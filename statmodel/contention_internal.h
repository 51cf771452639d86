/* Private to statmodel/contention*.c. */
#ifndef LLC_STATMODEL_CONTENTION_INTERNAL_H
#define LLC_STATMODEL_CONTENTION_INTERNAL_H

#include "llcprobe/contention.h"

/* llc_contention_equilibrium with a guess of the random model's miss rate
 * (the previous fixed-point step's; 0 = none), which saves Newton steps
 * (the LRU model ignores it), and the ways of a set-associative LRU cache
 * (0 = fully associative; docs/METHODS.md §12.2). */
int sm_contention_equilibrium(const struct llc_contention_party *p, size_t n, double capacity,
                              enum llc_contention_policy base, double mu_hint, unsigned ways,
                              struct llc_contention_share *out, struct llc_contention_info *info,
                              char *err, size_t errlen);

/* A young phase's first touches per reference over its ages [a, a + r)
 * less those at the middle age, which is where one segment of them would
 * price them (alone, the first touches are what a cache of any size misses
 * at those ages): the error of not cutting [a, a + r) into age classes. */
double sm_contention_first_touch_error(const struct llc_contention_phase *ph, double a, double r);

/* shift_lines of party p for its model at its shift (a stratum's party
 * keeps its program's shift: one private cache for all its sets). */
void sm_contention_party_reshift(struct llc_contention_party *p);

/* Age class of a phase whose own references so far are `age` (the
 * timeline's memo key): -1 once warm (past its longest finite reuse, and
 * none new, or its lines all touched, or 4 C of them), else floor(2 log2(1 + age)), the
 * key of its class at level 0 (sm_contention_class_key). docs/METHODS.md §12.2. */
int sm_contention_age_class(const struct llc_contention_phase *ph, double age, double capacity);

/* The age from which sm_contention_age_class says warm (0: warm from the
 * start; INFINITY: never). */
double sm_contention_warm_age(const struct llc_contention_phase *ph, double capacity);

/* Age classes finer than sm_contention_age_class's, for the young ages at
 * which a phase's first touches change too fast for it (a stream's last
 * ones): level L has 2^(L + 1) classes per octave of age, and key
 * L x SM_CONTENTION_CLASS_STRIDE + floor(2^(L + 1) log2(1 + age)) (level
 * 0: sm_contention_age_class's own; -1 past 2^(STRIDE / 2^(L + 1))).
 * docs/METHODS.md §12.2. */
#define SM_CONTENTION_CLASS_STRIDE 4096
#define SM_CONTENTION_CLASS_LEVELS 5
int sm_contention_class_key(double age, unsigned level);

/* The age at which class `key` ends, and its middle (in log(1 + age)). */
double sm_contention_class_end(int key);
double sm_contention_class_mid(int key);

/* The age a young phase in class `key` is priced at: the class's middle
 * (in log(1 + age)), or, for the class in which the phase turns warm at
 * warm_age, the middle of the class's ages before warm_age (the class's
 * own middle would price its young references as warm ones). */
double sm_contention_priced_age(int key, double warm_age);

/* The random model's R at x = mu / (gamma a) for capacity C (c_log =
 * -ln(1 - 1/C)): the mean miss probability of the model's reuses, cold
 * ones and those at or past `age` (INFINITY: none) missing; *dr = dR/dx
 * (dr NULL: not needed, which makes x = 0 a search, not a sum).
 * docs/METHODS.md §12.3. */
double sm_contention_random_r(const struct llc_statmodel_model *m, double x, double c_log,
                              double age, double *dr);

/* sm_contention_random_r of a party whose reuses spend `shift` own
 * references in its private cache first (exclusive hierarchies,
 * docs/METHODS.md §12.2): a reuse at distance d <= shift hits there, one
 * past it is at risk for d - shift; shift 0 is sm_contention_random_r. */
double sm_contention_random_r_shifted(const struct llc_statmodel_model *m, double x, double c_log,
                                      double age, double shift, double *dr);

/* What the misses of a phase's other phases (ex, docs/METHODS.md §12.7)
 * add to sm_contention_random_r_shifted; *dr (may be NULL) its derivative
 * in x. 0 without ex or its misses. contention_excess.c. */
double sm_contention_random_r_excess(const struct llc_statmodel_model *m,
                                     const struct llc_contention_excess *ex, double x, double c_log,
                                     double age, double shift, double *dr);

/* The terms of sm_contention_random_r_excess that do not depend on x:
 * per bucket at risk its distance past the private cache u and mass (1 -
 * e^(-c_log E)); _r sums them at x, the same to rounding (a table's
 * nodes each need one: an exp per distinct gap, not two per bucket).
 * contention_excess.c. */
struct sm_excess_terms {
    size_t n;
    double *u, *w;
};
int sm_excess_terms_make(const struct llc_statmodel_model *m,
                         const struct llc_contention_excess *ex, double c_log, double age,
                         double shift, struct sm_excess_terms *out);
void sm_excess_terms_free(struct sm_excess_terms *t);
double sm_excess_terms_r(const struct sm_excess_terms *t, double x, double c_log, double *dr);

/* sm_contention_random_r_shifted plus sm_contention_random_r_excess (ex
 * NULL: none) from the tables t (NULL: the exact sums): interpolated on
 * the (model, c_log, age, shift, ex) table, filled node by node as
 * queries need them. Queries the table does not cover (x = 0, or outside
 * the range where R varies) take the exact sums. contention_rtab.c. */
double sm_contention_random_r_tab(struct llc_contention_tables *t,
                                  const struct llc_statmodel_model *m,
                                  const struct llc_contention_excess *ex, double x, double c_log,
                                  double age, double shift, double *dr);

/* The same through a table found once for many queries: a table of
 * (m, ex, c_log, age, shift) made if new (_make: every table an
 * equilibrium needs, first, since making one may move the others), then
 * found without making any (_find: NULL where no table exists or can
 * serve), whose pointer holds until the next table is made. _r answers as
 * sm_contention_random_r_tab does (tab NULL: the exact sums). */
struct sm_rtab;
struct sm_rtab *sm_contention_rtab_make(struct llc_contention_tables *t,
                                        const struct llc_statmodel_model *m,
                                        const struct llc_contention_excess *ex, double c_log,
                                        double age, double shift);
struct sm_rtab *sm_contention_rtab_find(struct llc_contention_tables *t,
                                        const struct llc_statmodel_model *m,
                                        const struct llc_contention_excess *ex, double c_log,
                                        double age, double shift);
double sm_contention_rtab_r(struct llc_contention_tables *t, struct sm_rtab *tab,
                            const struct llc_statmodel_model *m,
                            const struct llc_contention_excess *ex, double x, double c_log,
                            double age, double shift, double *dr);

/* llc_contention_corun with the coupling started from guess[i] (NULL, or a
 * rate <= 0: the solo rate) instead of the solo rates: a nearby solution
 * (the timeline's previous tuple) saves steps; the result meets the same
 * tolerance (docs/METHODS.md §12.5). Without coupling the guess is unused. */
int sm_contention_corun_guess(const struct llc_contention_phase *const *ph, const double *freq,
                              size_t n, const struct llc_contention_config *cfg,
                              const struct llc_contention_share *solo, const double *guess,
                              struct llc_contention_share *out, struct llc_contention_info *info,
                              char *err, size_t errlen);

/* P(Pois(x) < w) exact (contention_pois.c; 1 for x <= 0 or NaN). */
double sm_contention_pois_hit(double x, unsigned w);

/* P(Pois(x) < w) tabulated on [0, x_end): c[j] the cubic in u = x / h - j
 * on node interval j (contention_pois.c states its error). */
#define LLC_CONTENTION_POIS_WAYS 64
struct sm_pois_table {
    double inv_h, x_end;
    const double (*c)[4];
};
/* NULL when out of memory or w is outside 1..LLC_CONTENTION_POIS_WAYS. */
struct sm_pois_table *sm_pois_table_new(unsigned w);
void sm_pois_table_free(struct sm_pois_table *t);

/* The table of w in t, made the first time it is asked for (NULL: t is
 * NULL, no table for w, or out of memory; the exact sum answers).
 * contention_rtab.c. */
const struct sm_pois_table *sm_contention_pois_table(struct llc_contention_tables *t, unsigned w);

/* P(Pois(x) < w) from table pt where it covers x, else exact. */
static inline double sm_pois_hit_tab(const struct sm_pois_table *pt, double x, unsigned w)
{
    if (!pt || !(x >= 0 && x < pt->x_end))
        return sm_contention_pois_hit(x, w);
    const double s = x * pt->inv_h;
    const size_t j = (size_t)s;
    const double u = s - (double)j, *c = pt->c[j];
    return c[0] + u * (c[1] + u * (c[2] + u * c[3]));
}

#endif
