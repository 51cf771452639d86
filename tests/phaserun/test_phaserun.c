/* llc_phaserun on a synthetic trace of phases A B A B (two disjoint code
 * loops, written here with the trace writer) and its exp-bbv file: two
 * phases that agree with the reference, the files it writes, and an
 * exp-bbv file of another run refused. */
#include <errno.h>
#include <jansson.h>
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
#include "llcprobe/phaserun.h"
#include "llcprobe/trace.h"

#define WINDOW 20000
#define RUN 6
#define RUNS 4

static char dir[64], trace_path[128], bbv_path[128];

static void path(char *out, size_t cap, const char *name)
{
    snprintf(out, cap, "%s/%s", dir, name);
}

/* RUNS runs of RUN windows: A (64 instructions at 0x401000) and B (48 at
 * 0x7f0000), one load each; the BBV file has bbv_windows intervals. */
static void write_inputs(size_t bbv_windows)
{
    const char *t = trace_path, *b = bbv_path;
    char err[LLC_ERRLEN];
    struct llc_trace_info info = {
        .recorder = "synthetic", .command = "two phases", .page_size = 4096};
    struct llc_trace_writer *w = NULL;
    assert_int_equal(llc_trace_writer_open(t, &info, &w, err, sizeof(err)), 0);
    FILE *bb = fopen(b, "w");
    assert_non_null(bb);
    uint64_t x = 12345;
    size_t written = 0;
    for (int r = 0; r < RUNS; r++)
        for (int k = 0; k < RUN; k++) {
            const uint64_t base = r % 2 ? 0x7f0000 : 0x401000, loop = r % 2 ? 48 : 64;
            for (uint64_t i = 0; i < WINDOW; i++) {
                x = x * 6364136223846793005ULL + 1442695040888963407ULL;
                const struct llc_trace_rec ins = {
                    .kind = LLC_TRACE_INSTR, .size = 4, .addr = base + (i % loop) * 4};
                const struct llc_trace_rec ld = {.kind = LLC_TRACE_LOAD,
                                                 .size = 8,
                                                 .addr = 0x10000000 + ((x >> 20) & 0xfffffc0),
                                                 .pc = ins.addr};
                assert_int_equal(llc_trace_writer_put(w, &ins), 0);
                assert_int_equal(llc_trace_writer_put(w, &ld), 0);
            }
            if (written++ < bbv_windows)
                fprintf(bb, r % 2 ? "T:2:%d :3:%d\n" : "T:1:%d\n", r % 2 ? WINDOW / 2 : WINDOW,
                        WINDOW / 2);
        }
    assert_int_equal(fclose(bb), 0);
    assert_int_equal(llc_trace_writer_close(w, 0, err, sizeof(err)), 0);
}

static void config(struct llc_phaserun_config *cfg, const char *trace, const char *bbv)
{
    memset(cfg, 0, sizeof(*cfg));
    llc_sampling_config_default(&cfg->samp);
    llc_phase_config_default(&cfg->det);
    cfg->samp.max_multiplier = cfg->det.max_multiplier;
    cfg->samp.samples_per_window = 400;
    cfg->trace = trace;
    cfg->bbv = bbv;
    cfg->trace_window = WINDOW;
    cfg->seed = 1;
    cfg->bbv_tolerance = LLC_PHASERUN_BBV_TOLERANCE_DEFAULT;
}

static void test_trace_and_bbv(void **state)
{
    (void)state;
    write_inputs(RUN * RUNS);
    char json[128], csv[128], err[LLC_ERRLEN];
    path(json, sizeof(json), "t.phase.json");
    path(csv, sizeof(csv), "t.phase.csv");
    struct llc_phaserun_config cfg;
    config(&cfg, trace_path, bbv_path);
    struct llc_phaserun r;
    llc_phaserun_init(&r, false);
    assert_int_equal(llc_phaserun_run(&cfg, NULL, &r, err, sizeof(err)), 0);
    assert_int_equal(r.n, RUN * RUNS);
    assert_int_equal(r.summary.phases, 2);
    assert_int_equal(r.nphases, 2);
    /* runs of 6 alternate and recur (a run's first window may be sampled
     * at a lowered rate, so compare the second of each) */
    const int a = r.rows[1].p.phase, bph = r.rows[RUN + 1].p.phase;
    assert_true(a >= 0 && bph >= 0 && a != bph);
    assert_int_equal(r.rows[2 * RUN + 1].p.phase, a);
    assert_int_equal(r.rows[3 * RUN + 1].p.phase, bph);
    assert_int_equal(r.compared, RUN * RUNS);
    assert_true(r.ari > 0.85);
    assert_int_equal(r.align.total_a, r.align.total_b);
    assert_true(r.coverage > 0.8 && r.coverage <= 1.0);

    assert_int_equal(llc_phaserun_write_json(json, &cfg, &r, err, sizeof(err)), 0);
    assert_int_equal(llc_phaserun_write_csv(csv, &r, err, sizeof(err)), 0);
    json_error_t je;
    json_t *doc = json_load_file(json, 0, &je);
    assert_non_null(doc);
    assert_string_equal(json_string_value(json_object_get(doc, "format")), "llcprobe-phase");
    assert_string_equal(json_string_value(json_object_get(doc, "mode")), "trace");
    assert_int_equal(json_array_size(json_object_get(doc, "windows")), RUN * RUNS);
    assert_int_equal(json_integer_value(json_object_get(json_object_get(doc, "summary"), "phases")),
                     2);
    assert_true(json_real_value(json_object_get(json_object_get(doc, "bbv"), "ari")) > 0.85);
    json_decref(doc);
    FILE *f = fopen(csv, "r");
    assert_non_null(f);
    char line[512];
    size_t lines = 0;
    assert_non_null(fgets(line, sizeof(line), f));
    assert_int_equal(strncmp(line, "window,x_start,x_end,", 21), 0);
    while (fgets(line, sizeof(line), f))
        lines++;
    fclose(f);
    assert_int_equal(lines, RUN * RUNS);
    llc_phaserun_free(&r);
    unlink(json);
    unlink(csv);
}

/* An exp-bbv file of half the run: its instruction total is 50% short,
 * far beyond one interval and the 2% tolerance. */
static void test_other_run_refused(void **state)
{
    (void)state;
    write_inputs(RUN * RUNS / 2);
    char err[LLC_ERRLEN];
    struct llc_phaserun_config cfg;
    config(&cfg, trace_path, bbv_path);
    struct llc_phaserun r;
    llc_phaserun_init(&r, false);
    assert_int_equal(llc_phaserun_run(&cfg, NULL, &r, err, sizeof(err)), -EPROTO);
    assert_non_null(strstr(err, "--bbv-tolerance"));
    llc_phaserun_free(&r);
}

static void test_missing_trace(void **state)
{
    (void)state;
    char t[128], err[LLC_ERRLEN];
    path(t, sizeof(t), "none.trace");
    struct llc_phaserun_config cfg;
    config(&cfg, t, NULL);
    struct llc_phaserun r;
    llc_phaserun_init(&r, false);
    assert_true(llc_phaserun_run(&cfg, NULL, &r, err, sizeof(err)) < 0);
    assert_non_null(strstr(err, "none.trace"));
    assert_int_equal(r.n, 0);
    llc_phaserun_free(&r);
}

int main(void)
{
    snprintf(dir, sizeof(dir), "/tmp/llc_phaserun_XXXXXX");
    if (!mkdtemp(dir))
        return 1;
    path(trace_path, sizeof(trace_path), "t.trace");
    path(bbv_path, sizeof(bbv_path), "t.bb");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_trace_and_bbv),
        cmocka_unit_test(test_other_run_refused),
        cmocka_unit_test(test_missing_trace),
    };
    const int rc = cmocka_run_group_tests(tests, NULL, NULL);
    unlink(trace_path);
    unlink(bbv_path);
    rmdir(dir);
    return rc;
}
