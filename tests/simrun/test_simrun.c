/* The simulation driver: shared-clock order and fairness, trace replay,
 * determinism, time series, page sizes, set-shaped workloads through the
 * simulator, and its errors. */
#include <errno.h>
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
#include "llcprobe/sim.h"
#include "llcprobe/simrun.h"
#include "llcprobe/trace.h"

static void preset(const char *name, struct llc_sim_config *c)
{
    char err[LLC_ERRLEN];
    if (llc_sim_preset(name, c, err, sizeof(err)) != 0)
        fail_msg("%s", err);
}

static struct llc_simrun *make(const struct llc_sim_config *c, const struct llc_simrun_agent *a,
                               unsigned n)
{
    char err[LLC_ERRLEN] = "";
    struct llc_simrun *r = NULL;
    if (llc_simrun_create(c, a, n, &r, err, sizeof(err)) != 0)
        fail_msg("create: %s", err);
    return r;
}

static int run(struct llc_simrun *r, uint64_t duration, uint64_t interval)
{
    char err[LLC_ERRLEN] = "";
    const struct llc_simrun_limits lim = {.duration = duration, .interval = interval};
    const int rc = llc_simrun_run(r, &lim, err, sizeof(err));
    if (rc < 0)
        fail_msg("run: %s", err);
    return rc;
}

/* --- clock ------------------------------------------------------------- */

struct order_log {
    unsigned who[64];
    size_t n;
};

struct cb_agent {
    struct order_log *log;
    unsigned id;
    uint64_t next_addr;
    uint64_t last_addr;
    unsigned calls;
    bool prev_ok;
};

static int cb_next(void *ctx, const struct llc_sim_result *prev, uint64_t *addr, bool *is_write,
                   char *err, size_t errlen)
{
    (void)err;
    (void)errlen;
    struct cb_agent *a = ctx;
    /* The outcome of the previous access is there before the next one. */
    if (a->calls == 0)
        a->prev_ok = prev == NULL;
    else
        a->prev_ok &=
            prev != NULL && prev->paddr == a->last_addr && prev->level == LLC_SIM_HIT_DRAM;
    if (a->log->n == LLC_ARRAY_LEN(a->log->who))
        return 0;
    a->log->who[a->log->n++] = a->id;
    *addr = a->next_addr;
    a->last_addr = a->next_addr;
    a->next_addr += 64; /* always new lines: every access misses */
    *is_write = a->calls % 2;
    a->calls++;
    return 1;
}

static void clock_order_and_callbacks(void **state)
{
    (void)state;
    struct llc_sim_config c;
    preset("intel8", &c);
    struct order_log log = {.n = 0};
    struct cb_agent a0 = {.log = &log, .id = 0, .next_addr = (uint64_t)1 << 41};
    struct cb_agent a1 = {.log = &log, .id = 1, .next_addr = (uint64_t)1 << 42};
    const struct llc_simrun_agent agents[] = {
        {.role = LLC_SIMRUN_PROBE,
         .source = LLC_SIMRUN_CALLBACK,
         .next = cb_next,
         .ctx = &a0,
         .physical = true,
         .rate = 1},
        {.role = LLC_SIMRUN_PROBE,
         .source = LLC_SIMRUN_CALLBACK,
         .next = cb_next,
         .ctx = &a1,
         .physical = true,
         .rate = 2},
    };
    struct llc_simrun *r = make(&c, agents, 2);
    /* No targets: every access counts; the callbacks end after 64. */
    assert_int_equal(run(r, 0, 0), 1);
    /* Times: agent 0 at 0,1,2..., agent 1 at 0,.5,1,...; ties to agent 0. */
    for (size_t i = 0; i < log.n; i++) {
        static const unsigned pattern[] = {0, 1, 1};
        if (log.who[i] != pattern[i % 3])
            fail_msg("access %zu by agent %u", i, log.who[i]);
    }
    assert_true(a0.prev_ok);
    assert_true(a1.prev_ok);
    struct llc_simrun_agent_state st;
    assert_int_equal(llc_simrun_agent_state(r, 1, &st), 0);
    assert_int_equal(st.accesses, a1.calls);
    assert_int_equal(st.writes, a1.calls / 2);
    assert_true(st.ended);
    assert_string_equal(llc_simrun_agent_name(r, 1), "probe1");
    llc_simrun_destroy(r);
}

static void clock_fairness(void **state)
{
    (void)state;
    struct llc_sim_config c;
    preset("intel8", &c);
    const struct llc_simrun_agent agents[] = {
        {.role = LLC_SIMRUN_TARGET,
         .source = LLC_SIMRUN_WORKLOAD,
         .spec = "stream:size=1M",
         .rate = 1},
        {.role = LLC_SIMRUN_NOISE,
         .source = LLC_SIMRUN_WORKLOAD,
         .spec = "uniform:size=4M",
         .rate = 2},
        {.role = LLC_SIMRUN_NOISE,
         .source = LLC_SIMRUN_WORKLOAD,
         .spec = "uniform:size=4M",
         .rate = 0.25},
    };
    struct llc_simrun *r = make(&c, agents, 3);
    const uint64_t n = 100000;
    assert_int_equal(run(r, n, 0), 0);
    struct llc_simrun_agent_state s0, s1, s2;
    llc_simrun_agent_state(r, 0, &s0);
    llc_simrun_agent_state(r, 1, &s1);
    llc_simrun_agent_state(r, 2, &s2);
    /* The run stops with the target's n-th access at time n-1: the others
     * have issued everything strictly before it (the target wins ties). */
    assert_int_equal(s0.accesses, n);
    assert_int_equal(s1.accesses, 2 * (n - 1));
    assert_int_equal(s2.accesses, (n - 1 + 3) / 4);
    assert_int_equal(llc_simrun_counted(r), n);
    assert_int_equal(llc_simrun_total(r), s0.accesses + s1.accesses + s2.accesses);
    /* The simulator saw exactly what the driver issued. */
    struct llc_sim_agent_stats st;
    llc_sim_agent_stats(llc_simrun_sim(r), 1, &st);
    assert_int_equal(st.accesses, s1.accesses);
    llc_simrun_destroy(r);
}

/* --- trace replay -------------------------------------------------------- */

static char trace_path[64];

static int trace_setup(void **state)
{
    (void)state;
    snprintf(trace_path, sizeof(trace_path), "/tmp/simrun_test_%d.trace", (int)getpid());
    return 0;
}

static int trace_teardown(void **state)
{
    (void)state;
    unlink(trace_path);
    return 0;
}

/* Writes a trace and returns the access addresses (and writes) it stands for. */
static size_t write_trace(uint64_t **addrs_out, uint8_t **writes_out, uint64_t *instr_out)
{
    char err[LLC_ERRLEN] = "";
    struct llc_trace_info info = {.page_size = 4096};
    snprintf(info.recorder, sizeof(info.recorder), "synthetic");
    snprintf(info.command, sizeof(info.command), "test_simrun");
    struct llc_trace_writer *w = NULL;
    if (llc_trace_writer_open(trace_path, &info, &w, err, sizeof(err)) != 0)
        fail_msg("%s", err);
    const size_t records = 60000;
    uint64_t *addrs = malloc((2 * records + 2) * sizeof(*addrs));
    uint8_t *writes = malloc(2 * records + 2);
    size_t n = 0;
    uint64_t instr = 0, x = 12345, pc = 0x400000;
    for (size_t i = 0; i < records; i++) {
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        struct llc_trace_rec rec = {.pc = 0};
        const unsigned kind = (unsigned)(x >> 60) % 4;
        if (kind == LLC_TRACE_INSTR) {
            rec = (struct llc_trace_rec){.addr = pc, .size = 4, .kind = LLC_TRACE_INSTR};
            pc += 4;
            instr++;
        } else {
            /* 12 MiB of data, some accesses straddling a line boundary. */
            const uint64_t a = 0x10000000 + ((x >> 8) % (12u << 20));
            rec = (struct llc_trace_rec){.addr = a, .size = 8, .kind = (uint8_t)kind};
            const bool wr = kind != LLC_TRACE_LOAD;
            addrs[n] = a;
            writes[n++] = wr;
            if ((a & 63) > 56) {
                addrs[n] = (a | 63) + 1;
                writes[n++] = wr;
            }
        }
        if (llc_trace_writer_put(w, &rec) != 0)
            fail_msg("trace put failed");
    }
    /* A load straddling the top of the address space: two lines, the
     * second one wrapping to 0, not 2^58 lines. */
    const struct llc_trace_rec top = {.addr = UINT64_MAX - 31, .size = 64, .kind = LLC_TRACE_LOAD};
    if (llc_trace_writer_put(w, &top) != 0)
        fail_msg("trace put failed");
    addrs[n] = top.addr;
    writes[n++] = 0;
    addrs[n] = 0;
    writes[n++] = 0;
    if (llc_trace_writer_close(w, 0, err, sizeof(err)) != 0)
        fail_msg("%s", err);
    *addrs_out = addrs;
    *writes_out = writes;
    *instr_out = instr;
    return n;
}

static void trace_replay_equals_direct(void **state)
{
    (void)state;
    uint64_t *addrs;
    uint8_t *writes;
    uint64_t instr;
    const size_t n = write_trace(&addrs, &writes, &instr);
    struct llc_sim_config c;
    preset("intel8", &c);
    const struct llc_simrun_agent agent = {
        .role = LLC_SIMRUN_TARGET, .source = LLC_SIMRUN_TRACE, .trace_path = trace_path, .rate = 1};
    struct llc_simrun *r = make(&c, &agent, 1);
    assert_int_equal(run(r, 0, 0), 1); /* the trace ended */

    char err[LLC_ERRLEN];
    struct llc_sim *direct = NULL;
    c.agents = 1;
    assert_int_equal(llc_sim_create(&c, &direct, err, sizeof(err)), 0);
    size_t nwrites = 0;
    for (size_t i = 0; i < n; i++) {
        assert_true(llc_sim_access(direct, 0, addrs[i], NULL) >= 0);
        nwrites += writes[i];
    }
    struct llc_simrun_agent_state st;
    llc_simrun_agent_state(r, 0, &st);
    assert_int_equal(st.accesses, n);
    assert_int_equal(st.writes, nwrites);
    assert_int_equal(st.instructions, instr);
    assert_true(st.ended);

    struct llc_sim_agent_stats a, b;
    llc_sim_agent_stats(llc_simrun_sim(r), 0, &a);
    llc_sim_agent_stats(direct, 0, &b);
    assert_memory_equal(&a, &b, sizeof(a));
    assert_true(a.llc_misses > 1000 && a.llc_hits > 1000); /* a non-trivial mix */
    const uint32_t sets = llc_sim_sets(direct);
    struct llc_sim_set_stats *sa = calloc(sets, sizeof(*sa)), *sb = calloc(sets, sizeof(*sb));
    llc_sim_set_stats(llc_simrun_sim(r), 0, sa, sets);
    llc_sim_set_stats(direct, 0, sb, sets);
    assert_memory_equal(sa, sb, sets * sizeof(*sa));
    free(sa);
    free(sb);
    llc_sim_destroy(direct);
    llc_simrun_destroy(r);
    free(addrs);
    free(writes);
}

static void trace_errors(void **state)
{
    (void)state;
    uint64_t *addrs;
    uint8_t *writes;
    uint64_t instr;
    write_trace(&addrs, &writes, &instr);
    free(addrs);
    free(writes);
    struct llc_sim_config c;
    preset("intel8", &c);
    /* Corrupt a byte in the middle: refused at open or during the run, with
     * the reader's message naming the file, never a crash. */
    FILE *f = fopen(trace_path, "r+b");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    const long size = ftell(f);
    for (long off = size / 2; off < size / 2 + 16; off++) {
        fseek(f, off, SEEK_SET);
        fputc(0xA5 ^ (int)off, f);
    }
    fclose(f);
    const struct llc_simrun_agent agent = {
        .role = LLC_SIMRUN_TARGET, .source = LLC_SIMRUN_TRACE, .trace_path = trace_path, .rate = 1};
    char err[LLC_ERRLEN] = "";
    struct llc_simrun *r = NULL;
    int rc = llc_simrun_create(&c, &agent, 1, &r, err, sizeof(err));
    if (rc == 0) {
        const struct llc_simrun_limits lim = {0};
        rc = llc_simrun_run(r, &lim, err, sizeof(err));
        llc_simrun_destroy(r);
    }
    assert_true(rc < 0);
    assert_non_null(strstr(err, trace_path));
    assert_null(strchr(err, '\n'));

    /* Missing file. */
    unlink(trace_path);
    err[0] = '\0';
    assert_true(llc_simrun_create(&c, &agent, 1, &r, err, sizeof(err)) < 0);
    assert_non_null(strstr(err, trace_path));
}

/* --- determinism, time series, batching ------------------------------- */

static const struct llc_simrun_agent mixed[] = {
    {.role = LLC_SIMRUN_TARGET,
     .source = LLC_SIMRUN_WORKLOAD,
     .spec = "phased:zipf:size=8M,alpha=0.9@20000;stream:size=16M@10000",
     .rate = 1},
    {.role = LLC_SIMRUN_NOISE,
     .source = LLC_SIMRUN_WORKLOAD,
     .spec = "gaussian:size=8M,cv=0.3,write=0.2",
     .rate = 1.5},
};

static void compare_runs(struct llc_simrun *a, struct llc_simrun *b, bool expect_equal)
{
    const uint32_t sets = llc_sim_sets(llc_simrun_sim(a));
    struct llc_sim_set_stats *sa = calloc(sets, sizeof(*sa)), *sb = calloc(sets, sizeof(*sb));
    bool equal = true;
    for (unsigned i = 0; i < llc_simrun_agents(a); i++) {
        llc_sim_set_stats(llc_simrun_sim(a), (int)i, sa, sets);
        llc_sim_set_stats(llc_simrun_sim(b), (int)i, sb, sets);
        equal &= memcmp(sa, sb, sets * sizeof(*sa)) == 0;
        struct llc_simrun_agent_state x, y;
        llc_simrun_agent_state(a, i, &x);
        llc_simrun_agent_state(b, i, &y);
        equal &= x.accesses == y.accesses && x.writes == y.writes;
    }
    assert_true(equal == expect_equal);
    free(sa);
    free(sb);
}

static void determinism_and_time_series(void **state)
{
    (void)state;
    struct llc_sim_config c;
    preset("amd32", &c);
    c.seed = 99;
    struct llc_simrun *a = make(&c, mixed, 2), *b = make(&c, mixed, 2);
    assert_int_equal(run(a, 100000, 25000), 0);
    /* b in uneven pieces: the grid of frames and the result carry over. */
    assert_int_equal(run(b, 30001, 25000), 0);
    assert_int_equal(run(b, 69999, 25000), 0);
    compare_runs(a, b, true);
    assert_int_equal(llc_simrun_frame_count(a), 4);
    assert_int_equal(llc_simrun_frame_count(b), 4);
    const uint32_t sets = llc_sim_sets(llc_simrun_sim(a));
    for (size_t f = 0; f < 4; f++) {
        const struct llc_simrun_frame *fa = llc_simrun_frame_at(a, f);
        const struct llc_simrun_frame *fb = llc_simrun_frame_at(b, f);
        assert_int_equal(fa->counted, 25000 * (f + 1));
        assert_int_equal(fa->total, fb->total);
        assert_int_equal(fa->nsets, sets);
        assert_memory_equal(fa->sets, fb->sets, 2 * sets * sizeof(*fa->sets));
    }
    /* The last frame is the final state. */
    struct llc_sim_set_stats *now = calloc(sets, sizeof(*now));
    llc_sim_set_stats(llc_simrun_sim(a), 1, now, sets);
    assert_memory_equal(now, llc_simrun_frame_at(a, 3)->sets + sets, sets * sizeof(*now));
    free(now);
    assert_null(llc_simrun_frame_at(a, 4));

    /* Another seed, another run. */
    c.seed = 100;
    struct llc_simrun *d = make(&c, mixed, 2);
    run(d, 100000, 0);
    compare_runs(a, d, false);
    llc_simrun_destroy(a);
    llc_simrun_destroy(b);
    llc_simrun_destroy(d);
}

/* --- set shapes through the simulator ------------------------------------ */

static void gaussian_shape_in_the_llc(void **state)
{
    (void)state;
    struct llc_sim_config c;
    preset("intel8", &c);
    c.l2_sets = 0; /* every access is an LLC lookup */
    const struct llc_simrun_agent agents[] = {
        {.role = LLC_SIMRUN_TARGET,
         .source = LLC_SIMRUN_WORKLOAD,
         .spec = "gaussian:size=16M,cv=0.3",
         .rate = 1},
        {.role = LLC_SIMRUN_NOISE,
         .source = LLC_SIMRUN_WORKLOAD,
         .spec = "uniform:size=16M",
         .rate = 1},
    };
    struct llc_simrun *r = make(&c, agents, 2);
    const uint32_t sets = llc_sim_sets(llc_simrun_sim(r));
    run(r, (uint64_t)sets * 300, 0);
    struct llc_sim_set_stats *s = calloc(sets, sizeof(*s));
    llc_sim_set_stats(llc_simrun_sim(r), 0, s, sets);
    double sum = 0, sq = 0;
    for (uint32_t k = 0; k < sets; k++) {
        const double v = (double)(s[k].hits + s[k].misses);
        sum += v;
        sq += v * v;
    }
    const double mean = sum / sets, var = sq / sets - mean * mean - mean; /* less Poisson */
    const double cv = sqrt(var) / mean;
    print_message("gaussian cv 0.3 in the simulated LLC: %.4f\n", cv);
    assert_true(fabs(cv - 0.3) < 0.02);
    /* Physical regions keep agents apart: the target never hits the noise's
     * lines, so its hits come from its own 16 MiB only. */
    assert_true(llc_simrun_phys_base(r, 0) >= 2 * c.phys_mem_bytes);
    struct llc_simrun_agent_state st;
    llc_simrun_agent_state(r, 0, &st);
    assert_true(st.physical);
    llc_simrun_agent_state(r, 1, &st);
    assert_false(st.physical);
    free(s);
    llc_simrun_destroy(r);
}

/* A 2 MiB-page agent in a 4 KiB-page simulator: its 2 MiB buffer is one
 * aligned frame, which fills every set of the intel8 LLC with exactly 4
 * lines; with 4 KiB pages the frames scatter and the counts spread. */
static void page_size_per_agent(void **state)
{
    (void)state;
    struct llc_sim_config c;
    preset("intel8", &c);
    c.l2_sets = 0;
    struct llc_simrun_agent agent = {.role = LLC_SIMRUN_TARGET,
                                     .source = LLC_SIMRUN_WORKLOAD,
                                     .spec = "stream:size=2M",
                                     .rate = 1,
                                     .page_size = 2u << 20};
    const uint32_t sets = 8192;
    struct llc_sim_set_stats *s = calloc(sets, sizeof(*s));
    for (int pass = 0; pass < 2; pass++) {
        struct llc_simrun *r = make(&c, &agent, 1);
        run(r, 32768, 0);
        llc_sim_set_stats(llc_simrun_sim(r), 0, s, sets);
        uint32_t lo = UINT32_MAX, hi = 0;
        for (uint32_t k = 0; k < sets; k++) {
            lo = s[k].occupancy < lo ? s[k].occupancy : lo;
            hi = s[k].occupancy > hi ? s[k].occupancy : hi;
        }
        if (pass == 0) {
            assert_int_equal(lo, 4);
            assert_int_equal(hi, 4);
        } else {
            assert_true(hi > 4 && lo < 4);
        }
        llc_simrun_destroy(r);
        agent.page_size = 4096;
    }
    free(s);
}

/* --- errors ------------------------------------------------------------ */

static void bad_input(void **state)
{
    (void)state;
    struct llc_sim_config c;
    preset("intel8", &c);
    char err[LLC_ERRLEN];
    struct llc_simrun *r = NULL;
    struct llc_simrun_agent a = {.role = LLC_SIMRUN_TARGET,
                                 .source = LLC_SIMRUN_WORKLOAD,
                                 .spec = "zipf:size=1M",
                                 .rate = 1};
    assert_int_equal(llc_simrun_create(&c, &a, 1, &r, err, sizeof(err)), -EINVAL);
    assert_non_null(strstr(err, "target0: zipf: missing alpha"));
    assert_null(r);
    a.spec = "uniform:size=1M";
    a.rate = 0;
    assert_int_equal(llc_simrun_create(&c, &a, 1, &r, err, sizeof(err)), -EINVAL);
    assert_non_null(strstr(err, "rate"));
    a.rate = 1;
    a.page_size = 8192;
    assert_int_equal(llc_simrun_create(&c, &a, 1, &r, err, sizeof(err)), -EINVAL);
    assert_non_null(strstr(err, "page size"));
    a.page_size = 0;
    assert_int_equal(llc_simrun_create(&c, &a, 0, &r, err, sizeof(err)), -EINVAL);

    /* A synthetic target never ends: a duration is required. */
    r = make(&c, &a, 1);
    const struct llc_simrun_limits forever = {0};
    assert_int_equal(llc_simrun_run(r, &forever, err, sizeof(err)), -EINVAL);
    assert_non_null(strstr(err, "never ends"));
    llc_simrun_destroy(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(clock_order_and_callbacks),
        cmocka_unit_test(clock_fairness),
        cmocka_unit_test_setup_teardown(trace_replay_equals_direct, trace_setup, trace_teardown),
        cmocka_unit_test_setup_teardown(trace_errors, trace_setup, trace_teardown),
        cmocka_unit_test(determinism_and_time_series),
        cmocka_unit_test(gaussian_shape_in_the_llc),
        cmocka_unit_test(page_size_per_agent),
        cmocka_unit_test(bad_input),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
