/* llcprobe-profile files: write -> read round trip, and one damaged field
 * at a time, each refused with a message naming the file and the field;
 * the same for the optional per-stratum reuse, absent from older files. */
#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "llcprobe/common.h"
#include "llcprobe/profile.h"
#include "profile_synth.h"
#include "util/version.h"

static const struct psyn_mix mixes[3] = {
    {.n = 2, .p = {0.6, 0.3}, .lines = {500, 20000}},
    {.n = 1, .p = {0.9}, .lines = {150000}},
    {.n = 3, .p = {0.5, 0.2, 0.2}, .lines = {100, 5000, 400000}},
};
static const double api[3] = {0.4, 0.3, 0.5}, cpi0[3] = {0.8, 1.1, 0.9};

static void make(struct llc_profile *p, int with_probe)
{
    char err[LLC_ERRLEN];
    const struct psyn_profile_spec s = {.name = "synth",
                                        .preset = "intel8",
                                        .n_phases = 3,
                                        .mixes = mixes,
                                        .api = api,
                                        .cpi0 = cpi0,
                                        .windows_per_phase = 4,
                                        .n_cycles = 2,
                                        .window_instructions = 1000000,
                                        .samples = 20000,
                                        .with_probe = with_probe,
                                        .probe_cv = 0.2};
    int rc = psyn_profile(&s, p, err, sizeof err);
    if (rc)
        fail_msg("psyn_profile: %s", err);
}

/* Every file of the tests goes in one directory, made before the group
 * and removed after it, also when a test fails half way (cmocka leaves a
 * failed test without running the rest of it). */
static char tmp_dir[4096];

static int tmp_dir_make(void **state)
{
    (void)state;
    const char *dir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    snprintf(tmp_dir, sizeof(tmp_dir), "%s/llcprobe-profile-test-XXXXXX", dir);
    return mkdtemp(tmp_dir) ? 0 : -1;
}

static int tmp_dir_remove(void **state)
{
    (void)state;
    DIR *d = opendir(tmp_dir);
    if (d) {
        const struct dirent *e;
        while ((e = readdir(d)))
            if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
                char f[8192];
                snprintf(f, sizeof(f), "%s/%s", tmp_dir, e->d_name);
                unlink(f);
            }
        closedir(d);
    }
    return rmdir(tmp_dir);
}

static char *tmp_path(const char *tag)
{
    char *path = malloc(4200);
    snprintf(path, 4200, "%s/%s.profile.json", tmp_dir, tag);
    return path;
}

static char *hist_text(const struct llc_statmodel_hist *h)
{
    char err[LLC_ERRLEN];
    const int n = llc_statmodel_hist_format(h, NULL, 0, err, sizeof err);
    assert_true(n > 0);
    char *s = malloc((size_t)n + 1);
    assert_int_equal(llc_statmodel_hist_format(h, s, (size_t)n + 1, err, sizeof err), n);
    return s;
}

/* A histogram of h's samples, its finite ones all at distance 5 (as if
 * each phase's own references were few): what rdhist_own must match. */
static struct llc_statmodel_hist *own_of(const struct llc_statmodel_hist *h)
{
    char err[LLC_ERRLEN];
    struct llc_statmodel_hist *o = NULL;
    assert_int_equal(llc_statmodel_hist_create(&o, err, sizeof err), 0);
    assert_int_equal(llc_statmodel_hist_add(o, 5, llc_statmodel_hist_finite(h), err, sizeof err),
                     0);
    if (llc_statmodel_hist_dangling(h) > 0)
        assert_int_equal(
            llc_statmodel_hist_add_dangling(o, llc_statmodel_hist_dangling(h), err, sizeof err), 0);
    return o;
}

static void same_hist(const struct llc_statmodel_hist *x, const struct llc_statmodel_hist *y)
{
    assert_true(!x == !y);
    if (!x)
        return;
    char *hx = hist_text(x), *hy = hist_text(y);
    assert_string_equal(hx, hy);
    free(hx);
    free(hy);
}

/* Phase i gets 2 bins of measured spans: own distance 3 (none met
 * another phase) and 4000 (60% did: 2,500 references of the next phase,
 * 120 unclassified). */
static void add_spans(struct llc_profile *p, size_t i)
{
    char err[LLC_ERRLEN];
    struct llc_profile_phase *ph = &p->phases[i];
    assert_int_equal(llc_profile_alloc_spans(p, ph, 2, err, sizeof err), 0);
    const size_t stride = p->n_phases + 1;
    ph->spans.distance[0] = 3;
    ph->spans.distance[1] = 4000;
    ph->spans.samples[0] = 10;
    ph->spans.samples[1] = 25;
    ph->spans.share[1] = 0.6;
    ph->spans.refs[stride + (i + 1) % p->n_phases] = 2500;
    ph->spans.refs[stride + p->n_phases] = 120;
}

static void same_spans(const struct llc_profile *a, const struct llc_profile_spans *x,
                       const struct llc_profile_spans *y)
{
    assert_int_equal(x->n, y->n);
    for (size_t k = 0; k < x->n; k++) {
        assert_true(x->distance[k] == y->distance[k] && x->samples[k] == y->samples[k]);
        assert_true(x->share[k] == y->share[k]);
        for (size_t h = 0; h <= a->n_phases; h++)
            assert_true(x->refs[k * (a->n_phases + 1) + h] == y->refs[k * (a->n_phases + 1) + h]);
    }
}

static void same_profile(const struct llc_profile *a, const struct llc_profile *b)
{
    assert_string_equal(a->program.name, b->program.name);
    assert_string_equal(a->machine.preset, b->machine.preset);
    assert_int_equal(a->machine.llc.lines, b->machine.llc.lines);
    assert_true(a->timing.miss_penalty_cycles == b->timing.miss_penalty_cycles);
    assert_int_equal(a->windows.count, b->windows.count);
    for (size_t i = 0; i < a->windows.count; i++) {
        assert_int_equal(a->windows.phase_of[i], b->windows.phase_of[i]);
        assert_true(a->windows.references[i] == b->windows.references[i]);
    }
    assert_true(!a->windows.first_touches == !b->windows.first_touches);
    for (size_t i = 0; a->windows.first_touches && i < a->windows.count; i++)
        assert_true(a->windows.first_touches[i] == b->windows.first_touches[i]);
    assert_int_equal(a->n_phases, b->n_phases);
    for (size_t k = 0; k < a->n_phases; k++) {
        const struct llc_profile_phase *x = &a->phases[k], *y = &b->phases[k];
        assert_int_equal(x->id, y->id);
        assert_true(x->refs_per_instruction == y->refs_per_instruction);
        assert_true(x->samples == y->samples);
        assert_true(x->solo.cpi == y->solo.cpi && x->cpi0 == y->cpi0);
        assert_true(x->solo.llc_miss_ratio == y->solo.llc_miss_ratio);
        assert_true(isnan(y->solo.occupancy_lines));
        assert_true(x->set_dispersion == y->set_dispersion ||
                    (isnan(x->set_dispersion) && isnan(y->set_dispersion)));
        same_hist(x->rdhist, y->rdhist);
        same_hist(x->rdhist_own, y->rdhist_own);
        same_spans(a, &x->spans, &y->spans);
    }
    assert_int_equal(a->probe.ok, b->probe.ok);
    assert_int_equal(a->probe.n_phases, b->probe.n_phases);
    for (size_t k = 0; k < a->probe.n_phases; k++) {
        const struct llc_profile_probe_phase *x = &a->probe.per_phase[k],
                                             *y = &b->probe.per_phase[k];
        assert_int_equal(x->n_rates, y->n_rates);
        for (size_t j = 0; j < x->n_rates; j++)
            assert_true(x->phi_hat[j] == y->phi_hat[j] && x->tau_s[j] == y->tau_s[j]);
        assert_true(x->cv == y->cv);
        assert_int_equal(x->n_sets[4], y->n_sets[4]);
        assert_int_equal(x->sets[4][2], y->sets[4][2]);
    }
}

static void round_trip(void **state)
{
    (void)state;
    char err[LLC_ERRLEN];
    for (int with_probe = 0; with_probe < 2; with_probe++) {
        struct llc_profile p, q;
        make(&p, with_probe);
        if (with_probe) { /* and the optional first touches per window */
            assert_int_equal(llc_profile_alloc_first_touches(&p, err, sizeof err), 0);
            for (size_t i = 0; i < p.windows.count; i++)
                p.windows.first_touches[i] = (double)(3 * i);
            p.phases[1].set_dispersion = 0.25;                   /* and one phase's lines per set */
            p.phases[2].rdhist_own = own_of(p.phases[2].rdhist); /* and own distances */
            add_spans(&p, 1);
        }
        char *path = tmp_path("rt");
        assert_int_equal(llc_profile_write(path, &p, err, sizeof err), 0);
        if (llc_profile_read(path, &q, err, sizeof err))
            fail_msg("read back: %s", err);
        same_profile(&p, &q);
        assert_int_equal(llc_profile_check_predictable(&q, path, err, sizeof err), 0);
        /* The CSV beside it: header + one line per window. */
        char *csv = llc_profile_csv_path(path);
        assert_true(strstr(csv, ".profile.csv") != NULL);
        FILE *f = fopen(csv, "r");
        assert_non_null(f);
        int lines = 0, c;
        while ((c = fgetc(f)) != EOF)
            lines += c == '\n';
        fclose(f);
        assert_int_equal(lines, (int)p.windows.count + 1);
        /* Written twice, read twice: identical files. */
        assert_int_equal(llc_profile_write(path, &q, err, sizeof err), 0);
        struct llc_profile r;
        assert_int_equal(llc_profile_read(path, &r, err, sizeof err), 0);
        same_profile(&q, &r);
        unlink(csv);
        unlink(path);
        free(csv);
        free(path);
        llc_profile_free(&p);
        llc_profile_free(&q);
        llc_profile_free(&r);
    }
}

/* ---- damaged files ------------------------------------------------------ */

static json_t *at(json_t *doc, const char *a, const char *b)
{
    json_t *o = json_object_get(doc, a);
    return b ? json_object_get(o, b) : o;
}

static json_t *phase(json_t *doc, size_t i)
{
    return json_array_get(json_object_get(doc, "phases"), i);
}

static void d_rdhist(json_t *d)
{
    json_object_set_new(phase(d, 1), "rdhist", json_string("rdhist 1 inf=x"));
}
static void d_rdhist_type(json_t *d)
{
    json_object_set_new(phase(d, 2), "rdhist", json_integer(3));
}
static void d_samples(json_t *d)
{
    json_object_set_new(phase(d, 0), "samples", json_real(5));
}
static void d_phase_of_len(json_t *d)
{
    json_array_remove(at(d, "windows", "phase_of"), 0);
}
static void d_phase_of_id(json_t *d)
{
    json_array_set_new(at(d, "windows", "phase_of"), 3, json_integer(7));
}
static void d_sets(json_t *d)
{
    json_object_set_new(at(d, "machine", "llc"), "sets", json_integer(1000));
}
static void d_format(json_t *d)
{
    json_object_set_new(d, "format", json_string("llcprobe-map"));
}
static void d_version(json_t *d)
{
    json_object_set_new(d, "version", json_integer(2));
}
static void d_mr(json_t *d)
{
    json_object_set_new(json_object_get(phase(d, 0), "solo"), "llc_miss_ratio", json_real(1.5));
}
static void d_cpi0(json_t *d)
{
    json_object_set_new(phase(d, 2), "cpi0", json_real(99));
}
static void d_qmax(json_t *d)
{
    json_t *e = json_array_get(at(d, "probe", "per_phase"), 1);
    json_array_set_new(json_object_get(e, "q_max"), 1, json_real(2));
}
static void d_probe_phase(json_t *d)
{
    json_object_set_new(json_array_get(at(d, "probe", "per_phase"), 2), "phase", json_integer(0));
}
static void d_sha(json_t *d)
{
    json_object_set_new(at(d, "program", NULL), "sha256", json_string("xyz"));
}
static void d_mlp(json_t *d)
{
    json_object_del(at(d, "timing", NULL), "mlp");
}
static void d_id(json_t *d)
{
    json_object_set_new(phase(d, 1), "id", json_integer(0));
}
static void d_rpi(json_t *d)
{
    json_object_set_new(phase(d, 1), "refs_per_instruction", json_real(0.9));
}
static void d_policy(json_t *d)
{
    json_object_set_new(at(d, "machine", "llc"), "policy", json_string("fifo"));
}
static void d_win(json_t *d)
{
    json_object_set_new(phase(d, 0), "windows", json_integer(3));
}
static void d_status(json_t *d)
{
    json_object_set_new(at(d, "probe", NULL), "status", json_string("maybe"));
}
static void d_first_len(json_t *d)
{
    json_t *a = json_array();
    for (int i = 0; i < 23; i++)
        json_array_append_new(a, json_real(1));
    json_object_set_new(at(d, "windows", NULL), "first_touches", a);
}
static void d_first_neg(json_t *d)
{
    json_t *a = json_array();
    for (int i = 0; i < 24; i++)
        json_array_append_new(a, json_real(i == 5 ? -1 : 1));
    json_object_set_new(at(d, "windows", NULL), "first_touches", a);
}
static void d_dispersion(json_t *d)
{
    json_object_set_new(phase(d, 2), "set_dispersion", json_real(-0.5));
}
static void d_nan_ins(json_t *d)
{
    json_array_set_new(at(d, "windows", "instructions"), 2, json_integer(-4));
}

static void d_own_total(json_t *d)
{
    json_object_set_new(phase(d, 0), "rdhist_own", json_string("rdhist 1 inf=0 5:3"));
}
static void d_own_type(json_t *d)
{
    json_object_set_new(phase(d, 1), "rdhist_own", json_integer(3));
}
static json_t *spans(json_t *d)
{
    return json_object_get(phase(d, 1), "cross_spans");
}
static void d_span_share(json_t *d)
{
    json_array_set_new(json_object_get(spans(d), "share"), 1, json_real(1.5));
}
static void d_span_order(json_t *d)
{
    json_array_set_new(json_object_get(spans(d), "distances"), 1, json_real(2));
}
static void d_span_row(json_t *d)
{
    json_array_remove(json_array_get(json_object_get(spans(d), "refs"), 0), 0);
}
static void d_span_own(json_t *d)
{
    json_array_set_new(json_array_get(json_object_get(spans(d), "refs"), 1), 1, json_real(7));
}
static void d_span_len(json_t *d)
{
    json_array_remove(json_object_get(spans(d), "samples"), 0);
}

static const struct damage {
    void (*apply)(json_t *doc);
    const char *expect; /* substring of the message after "<path>: " */
} damages[] = {
    {d_rdhist, "phases[1].rdhist: "},
    {d_rdhist_type, "phases[2].rdhist: not a string"},
    {d_samples, "phases[0].samples: 5 is not the histogram's sample count"},
    {d_phase_of_len, "windows.phase_of: 23 entries, expected windows.count = 24"},
    {d_phase_of_id, "windows.phase_of[3]: 7 is neither -1 nor a phase id"},
    {d_sets, "machine.llc.sets: 1000 sets x 16 ways is not 131072 lines"},
    {d_format, "format: 'llcprobe-map' is not llcprobe-profile"},
    {d_version, "version: 2 is not supported"},
    {d_mr, "phases[0].solo.llc_miss_ratio: 1.5 is outside [0, 1]"},
    {d_cpi0, "phases[2].cpi0: 99 is not a positive number <= solo.cpi"},
    {d_qmax, "probe.per_phase[1].q_max: entry 1 is outside [0, 1]"},
    {d_probe_phase, "probe.per_phase[2].phase: 0 repeats probe.per_phase[0].phase"},
    {d_sha, "program.sha256: 'xyz' is not 64 lower-case hex digits"},
    {d_mlp, "timing.mlp: missing"},
    {d_id, "phases[1].id: 0 repeats phases[0].id"},
    {d_rpi, "phases[1].refs_per_instruction: 0.9 is not references / instructions"},
    {d_policy, "machine.llc.policy: 'fifo' is not lru"},
    {d_win, "phases[0].windows: 3, but windows.phase_of names it 8 times"},
    {d_status, "probe.status: 'maybe' is not ok or missing"},
    {d_nan_ins, "windows.instructions: entry 2 is not a non-negative number"},
    {d_first_len, "windows.first_touches: 23 entries, expected windows.count = 24"},
    {d_first_neg, "windows.first_touches: entry 5 is not a non-negative number"},
    {d_dispersion, "phases[2].set_dispersion: -0.5 is not a non-negative number"},
    {d_own_total, "phases[0].rdhist_own: 3 samples, but rdhist has"},
    {d_own_type, "phases[1].rdhist_own: not a string"},
    {d_span_share, "phases[1].cross_spans.share: entry 1 is outside [0, 1]"},
    {d_span_order, "phases[1].cross_spans.distances: entry 1 is not above the one before"},
    {d_span_row, "phases[1].cross_spans.refs[0]: 3 entries, expected 4"},
    {d_span_own, "phases[1].cross_spans.refs: entry [1][1] is not a non-negative number (the "
                 "phase's own: 0)"},
    {d_span_len, "phases[1].cross_spans.samples: 1 entries, expected 2"},
};

static void damaged_fields(void **state)
{
    (void)state;
    char err[LLC_ERRLEN], want[LLC_ERRLEN + 300];
    struct llc_profile p, q;
    make(&p, 1);
    add_spans(&p, 1);
    char *path = tmp_path("good"), *bad = tmp_path("bad");
    assert_int_equal(llc_profile_write(path, &p, err, sizeof err), 0);
    for (size_t i = 0; i < LLC_ARRAY_LEN(damages); i++) {
        json_t *doc = json_load_file(path, 0, NULL);
        assert_non_null(doc);
        damages[i].apply(doc);
        assert_int_equal(json_dump_file(doc, bad, JSON_INDENT(1)), 0);
        json_decref(doc);
        err[0] = 0;
        const int rc = llc_profile_read(bad, &q, err, sizeof err);
        snprintf(want, sizeof want, "%s: %s", bad, damages[i].expect);
        if (rc >= 0 || strncmp(err, want, strlen(want)) != 0)
            fail_msg("damage %zu: rc %d, message '%s', expected it to start with '%s'", i, rc, err,
                     want);
        assert_null(q.phases); /* left init'd */
    }
    /* Not JSON at all. */
    FILE *f = fopen(bad, "w");
    fputs("{\"format\": \"llcprobe-profile\",", f);
    fclose(f);
    assert_true(llc_profile_read(bad, &q, err, sizeof err) < 0);
    assert_non_null(strstr(err, "not JSON"));
    unlink(bad);
    assert_true(llc_profile_read(bad, &q, err, sizeof err) < 0);
    char *csv = llc_profile_csv_path(path);
    unlink(csv);
    unlink(path);
    free(csv);
    free(path);
    free(bad);
    llc_profile_free(&p);
}

static void writer_checks_and_predictable(void **state)
{
    (void)state;
    char err[LLC_ERRLEN];
    struct llc_profile p;
    make(&p, 0);
    assert_int_equal(llc_profile_stamp(&p, err, sizeof err), 0);
    assert_int_equal(strlen(p.created), 20);
    assert_true(p.created[4] == '-' && p.created[10] == 'T' && p.created[19] == 'Z');
    assert_string_equal(p.llcprobe_version, LLCPROBE_VERSION_STRING);
    char *path = tmp_path("w");
    /* The writer refuses what the reader would. */
    p.phases[1].samples += 1;
    assert_int_equal(llc_profile_write(path, &p, err, sizeof err), -EINVAL);
    assert_non_null(strstr(err, "phases[1].samples"));
    assert_int_equal(access(path, F_OK), -1);
    p.phases[1].samples -= 1;
    /* A phase without references or samples is readable, not predictable. */
    p.phases[2].references = 0;
    p.phases[2].refs_per_instruction = 0;
    assert_int_equal(llc_profile_check(&p, "x", err, sizeof err), 0);
    assert_int_equal(llc_profile_check_predictable(&p, "x", err, sizeof err), -ENODATA);
    assert_string_equal(err, "x: phases[2].references: phase 2 has no references");
    p.phases[2].references = 1;
    p.phases[2].refs_per_instruction = 1.0 / p.phases[2].instructions;
    llc_statmodel_hist_clear(p.phases[0].rdhist);
    p.phases[0].samples = 0;
    assert_int_equal(llc_profile_check(&p, "x", err, sizeof err), 0);
    assert_int_equal(llc_profile_check_predictable(&p, "x", err, sizeof err), -ENODATA);
    assert_string_equal(err, "x: phases[0].samples: phase 0 has no reuse samples");
    free(path);
    llc_profile_free(&p);
    llc_profile_free(&p); /* twice is fine */
}

/* ---- per-stratum reuse (phases[].strata, docs/METHODS.md §12.6) ------- */

/* Phase 0 gets 3 strata (hot, middle, cold sets); the others none. */
static void add_strata(struct llc_profile *p)
{
    char err[LLC_ERRLEN];
    struct llc_profile_phase *ph = &p->phases[0];
    assert_int_equal(llc_profile_alloc_strata(ph, 3, err, sizeof err), 0);
    const double sets[3] = {0.625, 0.25, 0.125}, refs[3] = {0.25, 0.25, 0.5};
    for (size_t g = 0; g < 3; g++) {
        struct llc_profile_stratum *x = &ph->strata[g];
        x->sets = sets[g];
        x->refs = refs[g];
        x->rate_lo = 10.0 * (double)(g + 1);
        x->rate_hi = 10.0 * (double)(g + 1) + 4.5;
        assert_int_equal(llc_statmodel_hist_add(x->rdhist, 7 + 100 * g, 30, err, sizeof err), 0);
        assert_int_equal(llc_statmodel_hist_add(x->rdhist, 40000, 5, err, sizeof err), 0);
        assert_int_equal(llc_statmodel_hist_add_dangling(x->rdhist, 2 + (double)g, err, sizeof err),
                         0);
        x->samples = llc_statmodel_hist_total(x->rdhist);
    }
    ph->strata[1].rdhist_own = own_of(ph->strata[1].rdhist);
}

static void unlink_both(const char *path)
{
    char *csv = llc_profile_csv_path(path);
    unlink(csv);
    unlink(path);
    free(csv);
}

static void strata_round_trip(void **state)
{
    (void)state;
    char err[LLC_ERRLEN];
    struct llc_profile p, q;
    make(&p, 0);
    add_strata(&p);
    char *path = tmp_path("srt");
    assert_int_equal(llc_profile_write(path, &p, err, sizeof err), 0);
    if (llc_profile_read(path, &q, err, sizeof err))
        fail_msg("read back: %s", err);
    assert_int_equal(q.phases[0].n_strata, 3);
    assert_int_equal(q.phases[1].n_strata, 0);
    for (size_t g = 0; g < 3; g++) {
        const struct llc_profile_stratum *x = &p.phases[0].strata[g], *y = &q.phases[0].strata[g];
        assert_true(x->sets == y->sets && x->refs == y->refs);
        assert_true(x->rate_lo == y->rate_lo && x->rate_hi == y->rate_hi);
        assert_true(x->samples == y->samples);
        same_hist(x->rdhist, y->rdhist);
        same_hist(x->rdhist_own, y->rdhist_own);
    }
    assert_non_null(q.phases[0].strata[1].rdhist_own);
    assert_int_equal(llc_profile_check_predictable(&q, path, err, sizeof err), 0);
    unlink_both(path);
    free(path);
    llc_profile_free(&p);
    llc_profile_free(&q);
}

/* A file without "strata" (as written before them) reads, with none. */
static void strata_absent(void **state)
{
    (void)state;
    char err[LLC_ERRLEN];
    struct llc_profile p, q;
    make(&p, 0);
    char *path = tmp_path("sold");
    assert_int_equal(llc_profile_write(path, &p, err, sizeof err), 0);
    json_t *doc = json_load_file(path, 0, NULL);
    assert_non_null(doc);
    assert_null(json_object_get(json_array_get(json_object_get(doc, "phases"), 0), "strata"));
    json_decref(doc);
    assert_int_equal(llc_profile_read(path, &q, err, sizeof err), 0);
    assert_int_equal(q.phases[0].n_strata, 0);
    assert_null(q.phases[0].strata);
    unlink_both(path);
    free(path);
    llc_profile_free(&p);
    llc_profile_free(&q);
}

static json_t *stratum_of(json_t *d, size_t g)
{
    json_t *ph = json_array_get(json_object_get(d, "phases"), 0);
    return json_array_get(json_object_get(ph, "strata"), g);
}
static void ds_sets(json_t *d)
{
    json_object_set_new(stratum_of(d, 1), "sets", json_real(0.3));
}
static void ds_refs(json_t *d)
{
    json_object_set_new(stratum_of(d, 2), "refs", json_real(-0.5));
}
static void ds_rdhist(json_t *d)
{
    json_object_set_new(stratum_of(d, 0), "rdhist", json_string("rdhist 1 inf=x"));
}
static void ds_samples(json_t *d)
{
    json_object_set_new(stratum_of(d, 1), "samples", json_integer(3));
}
static void ds_rate(json_t *d)
{
    json_object_set_new(stratum_of(d, 0), "rate", json_pack("[f]", 1.0));
}
static void ds_empty(json_t *d)
{
    json_object_set_new(json_array_get(json_object_get(d, "phases"), 0), "strata", json_array());
}
static void ds_not_object(json_t *d)
{
    json_array_set_new(json_object_get(json_array_get(json_object_get(d, "phases"), 0), "strata"),
                       1, json_integer(4));
}

static void ds_own(json_t *d)
{
    json_object_set_new(stratum_of(d, 1), "rdhist_own", json_string("rdhist 1 inf=1 5:1"));
}

static const struct damage strata_damages[] = {
    {ds_sets, "phases[0].strata: set shares add up to 1.05"},
    {ds_refs, "phases[0].strata[2].refs: -0.5 is outside [0, 1]"},
    {ds_rdhist, "phases[0].strata[0].rdhist: "},
    {ds_samples, "phases[0].strata[1].samples: 3 is not the histogram's sample count"},
    {ds_rate, "phases[0].strata[0].rate: 1 entries, expected [lowest, highest]"},
    {ds_empty, "phases[0].strata: 0 entries (1..8)"},
    {ds_not_object, "phases[0].strata[1]: not an object"},
    {ds_own, "phases[0].strata[1].rdhist_own: 2 samples, but rdhist has 38"},
};

static void strata_damaged(void **state)
{
    (void)state;
    char err[LLC_ERRLEN], want[LLC_ERRLEN + 300];
    struct llc_profile p, q;
    make(&p, 0);
    add_strata(&p);
    char *path = tmp_path("sgood"), *bad = tmp_path("sbad");
    assert_int_equal(llc_profile_write(path, &p, err, sizeof err), 0);
    for (size_t i = 0; i < LLC_ARRAY_LEN(strata_damages); i++) {
        json_t *doc = json_load_file(path, 0, NULL);
        assert_non_null(doc);
        strata_damages[i].apply(doc);
        assert_int_equal(json_dump_file(doc, bad, JSON_INDENT(1)), 0);
        json_decref(doc);
        err[0] = 0;
        const int rc = llc_profile_read(bad, &q, err, sizeof err);
        snprintf(want, sizeof want, "%s: %s", bad, strata_damages[i].expect);
        if (rc >= 0 || strncmp(err, want, strlen(want)) != 0)
            fail_msg("damage %zu: rc %d, message '%s', expected it to start with '%s'", i, rc, err,
                     want);
        assert_null(q.phases);
    }
    /* The writer refuses what the reader would. */
    p.phases[0].strata[0].refs = 0.5;
    assert_int_equal(llc_profile_write(bad, &p, err, sizeof err), -EINVAL);
    assert_non_null(strstr(err, "phases[0].strata: "));
    unlink_both(path);
    unlink(bad);
    free(path);
    free(bad);
    llc_profile_free(&p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(round_trip),
        cmocka_unit_test(damaged_fields),
        cmocka_unit_test(writer_checks_and_predictable),
        cmocka_unit_test(strata_round_trip),
        cmocka_unit_test(strata_absent),
        cmocka_unit_test(strata_damaged),
    };
    return cmocka_run_group_tests(tests, tmp_dir_make, tmp_dir_remove);
}
