/* Window bookkeeping of llc_mrc_sample_trace_phases: which window a record's
 * references and samples belong to, in instruction and reference windows. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <cmocka.h>

#include "llcprobe/common.h"
#include "llcprobe/trace.h"
#include "mrc/mrc.h"

static char path[64];

static struct llc_trace_writer *open_trace(void)
{
    snprintf(path, sizeof path, "/tmp/llc-mrc-phwin-%d.trace", (int)getpid());
    struct llc_trace_info info = {.page_size = 4096, .exit_status = 0};
    snprintf(info.recorder, sizeof info.recorder, "synthetic");
    struct llc_trace_writer *w = NULL;
    char err[LLC_ERRLEN];
    assert_int_equal(llc_trace_writer_open(path, &info, &w, err, sizeof err), 0);
    return w;
}

static void put(struct llc_trace_writer *w, uint8_t kind, uint64_t addr, uint32_t size, uint64_t pc)
{
    const struct llc_trace_rec r = {.addr = addr, .size = size, .kind = kind, .pc = pc};
    assert_int_equal(llc_trace_writer_put(w, &r), 0);
}

static void run(enum llc_mrc_window_unit unit, uint64_t window, struct llc_mrc_phase_run *out)
{
    struct llc_mrc_phase_config cfg;
    llc_mrc_phase_config_default(&cfg);
    cfg.sampler.rate = 1;
    cfg.unit = unit;
    cfg.window = window;
    char err[LLC_ERRLEN];
    const int rc = llc_mrc_sample_trace_phases(path, &cfg, out, err, sizeof err);
    if (rc < 0)
        fail_msg("%s", err);
}

/* Two loads before the first instruction, then 3500 instructions with a
 * load each: windows of 1000 instructions hold 1002, 1000, 1000, 500
 * references (data records go with the instruction before them). */
static void instruction_windows(void **state)
{
    (void)state;
    struct llc_trace_writer *w = open_trace();
    put(w, LLC_TRACE_LOAD, 0x9000000, 8, 0);
    put(w, LLC_TRACE_LOAD, 0x9000040, 8, 0);
    for (uint64_t i = 0; i < 3500; i++) {
        put(w, LLC_TRACE_INSTR, 0x400000 + (i % 50) * 64, 4, 0);
        put(w, LLC_TRACE_LOAD, 0x10000000 + (i % 100) * 64, 8, 0);
    }
    char err[LLC_ERRLEN];
    assert_int_equal(llc_trace_writer_close(w, 0, err, sizeof err), 0);
    struct llc_mrc_phase_run r;
    run(LLC_MRC_WINDOW_AUTO, 1000, &r);
    unlink(path);
    assert_int_equal(r.unit, LLC_MRC_WINDOW_INSTRUCTIONS);
    assert_int_equal(r.n_windows, 4);
    const double refs[] = {1002, 1000, 1000, 500};
    for (size_t i = 0; i < 4; i++) {
        assert_true(r.windows[i].refs == refs[i]);
        assert_true(r.windows[i].samples == refs[i]); /* rate 1 */
    }
    /* One loop throughout: one phase (the last window has 200 sampled
     * addresses, enough to classify). */
    assert_int_equal(r.summary.phases, 1);
    assert_int_equal(llc_mrc_phase_windows_of(&r, 0), 4);
    assert_true(llc_statmodel_groups_refs(r.phases, 0) == 3502);
    assert_int_equal(r.pooled_groups, 0);
    assert_true(llc_statmodel_hist_total(r.pooled) == 3502);
    llc_mrc_phase_run_free(&r);
}

/* Reference windows of 1000 on a trace whose loads straddle two lines
 * (2 references each): a record is never split, so windows end at the
 * first record that starts at or past the boundary: 1000 references each.
 * Then 10 references with no pc: too few code addresses, unclassified,
 * modelled with all samples. */
static void reference_windows(void **state)
{
    (void)state;
    struct llc_trace_writer *w = open_trace();
    for (uint64_t i = 0; i < 1500; i++) /* 3000 references */
        put(w, LLC_TRACE_LOAD, 0x10000000 + (i % 100) * 64 + 60, 8, 0x401000 + (i % 8) * 64);
    for (uint64_t i = 0; i < 10; i++)
        put(w, LLC_TRACE_STORE, 0x20000000 + i * 64, 8, 0);
    char err[LLC_ERRLEN];
    assert_int_equal(llc_trace_writer_close(w, 0, err, sizeof err), 0);
    struct llc_mrc_phase_run r;
    run(LLC_MRC_WINDOW_AUTO, 1000, &r);
    unlink(path);
    assert_int_equal(r.unit, LLC_MRC_WINDOW_REFERENCES);
    assert_int_equal(r.n_windows, 4);
    const double refs[] = {1000, 1000, 1000, 10};
    for (size_t i = 0; i < 4; i++)
        assert_true(r.windows[i].refs == refs[i]);
    assert_int_equal(r.windows[3].phase, LLC_PHASE_UNCLASSIFIED);
    assert_int_equal(r.windows[0].phase, 0);
    assert_int_equal(r.windows[2].phase, 0);
    assert_int_equal(r.pooled_groups, 1);
    assert_true(llc_statmodel_groups_refs(r.phases, LLC_PHASE_UNCLASSIFIED) == 10);
    assert_true(llc_statmodel_hist_total(
                    llc_statmodel_groups_hist(r.phases, LLC_PHASE_UNCLASSIFIED)) == 3010);
    llc_mrc_phase_run_free(&r);
    /* Instruction windows on a trace without instruction records. */
    w = open_trace();
    put(w, LLC_TRACE_LOAD, 0x10000000, 8, 0x401000);
    assert_int_equal(llc_trace_writer_close(w, 0, err, sizeof err), 0);
    struct llc_mrc_phase_config cfg;
    llc_mrc_phase_config_default(&cfg);
    cfg.unit = LLC_MRC_WINDOW_INSTRUCTIONS;
    assert_int_equal(llc_mrc_sample_trace_phases(path, &cfg, &r, err, sizeof err), -EINVAL);
    unlink(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(instruction_windows),
        cmocka_unit_test(reference_windows),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
