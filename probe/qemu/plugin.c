/* libllcprobe-qemu: a QEMU user-mode TCG plugin that samples reuse
 * distances (or records the full trace) of any x86-64 binary, for
 * `llcprobe mrc --sampler qemu` and `llcprobe trace --recorder qemu`.
 *
 *   qemu-x86_64 -plugin libllcprobe-qemu.so,out=FILE[,mode=hist|trace]
 *       [,rate=R][,seed=S][,window=N][,pcs=N] PROGRAM ARGS...
 *   qemu-x86_64 -plugin libllcprobe-qemu.so,mode=floor PROGRAM ARGS...
 *
 * hist mode writes the runtime's profile (llcprobe/reusefile.h) with the same
 * sampler as libllcprobe-rt (probe/rt/core.c, linked in), so a profile
 * from either says the same thing.
 * trace mode writes llcprobe's trace format with instruction records, like
 * the lackey recorder. floor mode instruments as hist mode does, with
 * memory callbacks that return at once, and writes nothing: QEMU's own
 * cost of calling the plugin on every access, which no work inside the
 * callback can go below (scripts/bench-recorders.sh measures it).
 *
 * References follow lackey's trace as the trace sampler reads it: one per
 * 64-byte line an instruction's access touches, a load and a store of the
 * same line by one instruction (read-modify-write) being one reference, and
 * the halves of a wide access that QEMU splits being one reference per
 * line. An "instruction execution" is told apart from the next by a
 * counter every translation block adds its instruction count to inline
 * (QEMU runs each iteration of a rep-prefixed instruction as its own
 * block), so the per-access work is: the merge test, a hash and one bit of
 * the watch filter, and a countdown; everything else is the out-of-line
 * slow path, as in the runtime.
 *
 * Threads: each guest thread (QEMU vCPU) samples its own reference stream
 * (hist mode), as the runtime does. trace mode records one thread only: a
 * second thread abandons the trace with a message. Processes: a child the
 * program forks (QEMU forks itself) records nothing, so that it cannot
 * overwrite or interleave with its parent's output; a program it execs runs
 * natively, outside QEMU. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <qemu-plugin.h>

#include "llcprobe/common.h"
#include "llcprobe/trace.h"
#include "rt/rt.h"

QEMU_PLUGIN_EXPORT int qemu_plugin_version = QEMU_PLUGIN_VERSION;

#define COLD __attribute__((noinline, cold))
#define MAX_VCPUS 4096
#define NO_LINE UINT64_MAX /* above every line of a 64-bit address */

/* What the translation gives each instruction with memory accesses. */
struct insn {
    uint64_t pc;
    uint32_t size;
};

/* Per-vCPU state: the sampler's hot fields first (rt_watch_* update its
 * filter), then the merge state of the reference definition. */
struct vcpu {
    struct rt_hot hot;
    const struct insn *last_insn; /* the instruction and execution (insn_clock) */
    uint64_t last_clock;          /* of the last reference counted, and its line */
    uint64_t last_line;
    uint64_t quiet_line; /* last_line, or NO_LINE: see reference() */
    bool pending;        /* trace mode: a data record held back for a modify */
    struct llc_trace_rec rec;
} __attribute__((aligned(64)));

/* Instructions executed, added inline by every block (all vCPUs: only
 * compared for equality, so another thread's additions cost at most an
 * unmerged reference). */
static uint64_t insn_clock;

static struct vcpu *vcpus[MAX_VCPUS];

static struct {
    struct rt_core core; /* core.lock: registry, insn arena, trace writer */
    enum rt_mode mode;
    char output[4096];
    bool floor; /* mode=floor: hist's instrumentation, empty callbacks, no output */
    uint64_t trace_threads;
    unsigned live_vcpus;
    struct llc_trace_writer *writer;
    bool finished;
    struct insn *arena;
    size_t arena_left;
} g = {.core = {.name = "llcprobe-qemu", .lock = PTHREAD_MUTEX_INITIALIZER}};

#define warn(...) rt_core_warn(&g.core, __VA_ARGS__)

/* The guest's command line: QEMU's own, less "qemu-x86_64 -plugin SPEC". */
static void read_command(char *buf, size_t len)
{
    char raw[4096];
    buf[0] = '\0';
    const int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    const ssize_t n = read(fd, raw, sizeof raw - 1);
    close(fd);
    if (n <= 0)
        return;
    raw[n] = '\0';
    const char *arg[4] = {raw, NULL, NULL, NULL};
    for (int i = 1; i < 4 && arg[i - 1]; i++) {
        const char *next = arg[i - 1] + strlen(arg[i - 1]) + 1;
        arg[i] = next < raw + n ? next : NULL;
    }
    const char *s = arg[1] && arg[2] && strcmp(arg[1], "-plugin") == 0 ? arg[3] : arg[1];
    size_t used = 0;
    for (; s && s < raw + n && used < len; s += strlen(s) + 1)
        used += (size_t)snprintf(buf + used, len - used, "%s%s", used ? " " : "", s);
}

/* A vCPU's thread ended (or its index is being reused): its sampler stays
 * in the registry with its final reference count. */
static void thread_end(struct vcpu *v)
{
    rt_core_thread_end(&v->hot);
    v->hot = (struct rt_hot){.countdown = 1, .armed = 1, .filter = rt_no_filter, .shift = 63};
    v->last_insn = NULL;
    v->last_line = v->quiet_line = NO_LINE;
    v->pending = false;
}

static COLD void rare(struct vcpu *v, uint64_t line, const struct insn *in, bool hit, bool due)
{
    struct rt_hot *const h = &v->hot;
    /* The reuse first: a new sample on a watched line resolves the old one. */
    if (hit)
        rt_core_hit(&g.core, h, line);
    if (due && !g.finished && h->countdown == 0) {
        rt_core_due(&g.core, h, line, in->pc);
        /* The line may be watched now: its next reference takes the full
         * path (see reference). */
        v->quiet_line = NO_LINE;
    }
}

/* The per-reference work, inlined into the callbacks with the rare case
 * as a tail call, so the common path needs no stack frame. */
static inline void reference(struct vcpu *v, uint64_t line, const struct insn *in, uint64_t clock)
{
    struct rt_hot *const h = &v->hot;
    v->last_insn = in;
    v->last_clock = clock;
    v->last_line = v->quiet_line = line;
    rt_lines_touch(h, line);
    const bool hit = rt_filter_hit(h, line);
    const bool due = --h->countdown == 0;
    if (__builtin_expect(hit | due, 0))
        rare(v, line, in, hit, due);
}

static inline bool same_execution(const struct vcpu *v, uint64_t line, const struct insn *in,
                                  uint64_t clock)
{
    return v->last_line == line && v->last_clock == clock && v->last_insn == in;
}

/* An access that starts in the last 7 bytes of a line may reach into the
 * next one: a reference to each line, less one the instruction has
 * already made (the other half of a split access). */
static COLD void crossing(struct vcpu *v, qemu_plugin_meminfo_t info, uint64_t vaddr,
                          const struct insn *in, uint64_t clock)
{
    const uint64_t line = vaddr >> 6;
    const uint64_t last = (vaddr + (UINT64_C(1) << qemu_plugin_mem_size_shift(info)) - 1) >> 6;
    if (!same_execution(v, line, in, clock))
        reference(v, line, in, clock);
    if (last != line)
        reference(v, last, in, clock);
}

/* A reference to the line of the thread's last reference (the next field
 * of a structure, the next push; about half of all references) skips the
 * line map and the watch filter: the last reference set the line's bit,
 * and the line is not watched, since the last reference resolved any
 * watch on it, and rare() clears quiet_line when it sets one. That saves
 * the two loads from tables that grow with the data (the map, 1/512 of
 * it; the filter, 32 bits per watch), whose cache misses were much of the
 * sampler's own cost. */
static void on_mem_hist(unsigned int vcpu_index, qemu_plugin_meminfo_t info, uint64_t vaddr,
                        void *udata)
{
    struct vcpu *const v = vcpus[vcpu_index];
    const struct insn *const in = udata;
    const uint64_t clock = __atomic_load_n(&insn_clock, __ATOMIC_RELAXED);
    /* Accesses are at most 8 bytes: only those near a line's end cross. */
    if (__builtin_expect((vaddr & 63) > 56, 0)) {
        crossing(v, info, vaddr, in, clock);
        return;
    }
    const uint64_t line = vaddr >> 6;
    if (line == v->quiet_line) {
        if (v->last_clock == clock && v->last_insn == in)
            return;
        v->last_insn = in;
        v->last_clock = clock;
        if (__builtin_expect(--v->hot.countdown == 0, 0))
            rare(v, line, in, false, true);
        return;
    }
    if (same_execution(v, line, in, clock))
        return;
    reference(v, line, in, clock);
}

static void on_mem_floor(unsigned int vcpu_index, qemu_plugin_meminfo_t info, uint64_t vaddr,
                         void *udata)
{
    (void)vcpu_index;
    (void)info;
    (void)vaddr;
    (void)udata;
}

/* ---- trace mode ------------------------------------------------------- */

static COLD void trace_abandon(const char *why)
{
    if (g.writer) {
        warn("%s: the trace is abandoned", why);
        llc_trace_writer_abort(g.writer);
        g.writer = NULL;
    }
}

static void trace_put(const struct llc_trace_rec *rec)
{
    if (g.writer && llc_trace_writer_put(g.writer, rec) < 0)
        trace_abandon("trace write failed");
}

static void flush_pending(struct vcpu *v)
{
    if (v->pending) {
        v->pending = false;
        trace_put(&v->rec);
    }
}

static void on_insn_trace(unsigned int vcpu_index, void *udata)
{
    struct vcpu *const v = vcpus[vcpu_index];
    const struct insn *const in = udata;
    pthread_mutex_lock(&g.core.lock);
    flush_pending(v);
    const struct llc_trace_rec rec = {.addr = in->pc, .size = in->size, .kind = LLC_TRACE_INSTR};
    trace_put(&rec);
    pthread_mutex_unlock(&g.core.lock);
}

/* A data record is held back until the next record: a store of the same
 * bytes by the same instruction turns a load into a modify, and the halves
 * of an access QEMU splits (16-byte vector loads and stores) join into one
 * record, as lackey reports them. */
static void on_mem_trace(unsigned int vcpu_index, qemu_plugin_meminfo_t info, uint64_t vaddr,
                         void *udata)
{
    struct vcpu *const v = vcpus[vcpu_index];
    const struct insn *const in = udata;
    const uint32_t size = UINT32_C(1) << qemu_plugin_mem_size_shift(info);
    const uint8_t kind = qemu_plugin_mem_is_store(info) ? LLC_TRACE_STORE : LLC_TRACE_LOAD;
    pthread_mutex_lock(&g.core.lock);
    struct llc_trace_rec *const r = &v->rec;
    if (v->pending && r->pc == in->pc && kind == LLC_TRACE_STORE && r->kind == LLC_TRACE_LOAD &&
        r->addr == vaddr && r->size == size) {
        r->kind = LLC_TRACE_MODIFY;
    } else if (v->pending && r->pc == in->pc && kind == r->kind && r->addr + r->size == vaddr &&
               r->size == size && size == 8) {
        r->size += size;
    } else {
        flush_pending(v);
        *r = (struct llc_trace_rec){.addr = vaddr, .pc = in->pc, .size = size, .kind = kind};
        v->pending = true;
    }
    pthread_mutex_unlock(&g.core.lock);
}

/* ---- translation and vCPUs --------------------------------------------- */

static struct insn *new_insn(uint64_t pc, uint32_t size)
{
    pthread_mutex_lock(&g.core.lock);
    if (g.arena_left == 0) {
        /* Never freed: QEMU may run a block's code until the process ends. */
        g.arena = calloc(4096, sizeof *g.arena);
        g.arena_left = g.arena ? 4096 : 0;
    }
    struct insn *in = g.arena_left ? &g.arena[4096 - g.arena_left--] : NULL;
    pthread_mutex_unlock(&g.core.lock);
    if (in)
        *in = (struct insn){.pc = pc, .size = size};
    return in;
}

static void on_tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
    (void)id;
    const size_t n = qemu_plugin_tb_n_insns(tb);
    qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64, &insn_clock, n);
    for (size_t i = 0; i < n; i++) {
        struct qemu_plugin_insn *qi = qemu_plugin_tb_get_insn(tb, i);
        struct insn *in = new_insn(qemu_plugin_insn_vaddr(qi), (uint32_t)qemu_plugin_insn_size(qi));
        if (!in) {
            warn("out of memory while instrumenting: references are lost");
            return;
        }
        if (g.mode == RT_TRACE) {
            qemu_plugin_register_vcpu_insn_exec_cb(qi, on_insn_trace, QEMU_PLUGIN_CB_NO_REGS, in);
            qemu_plugin_register_vcpu_mem_cb(qi, on_mem_trace, QEMU_PLUGIN_CB_NO_REGS,
                                             QEMU_PLUGIN_MEM_RW, in);
        } else {
            qemu_plugin_register_vcpu_mem_cb(qi, g.floor ? on_mem_floor : on_mem_hist,
                                             QEMU_PLUGIN_CB_NO_REGS, QEMU_PLUGIN_MEM_RW, in);
        }
    }
}

static void on_vcpu_init(qemu_plugin_id_t id, unsigned int vcpu_index)
{
    (void)id;
    if (vcpu_index >= MAX_VCPUS) {
        /* Callbacks would index past the table: nothing sane is left. */
        warn("more than %d threads at once: not supported", MAX_VCPUS);
        abort();
    }
    pthread_mutex_lock(&g.core.lock);
    const unsigned live = ++g.live_vcpus;
    if (g.mode == RT_TRACE && (live > 1 || g.trace_threads > 0))
        trace_abandon("the program started a second thread, and a trace holds one thread's "
                      "references (use mrc --sampler qemu, which samples each thread)");
    if (g.mode == RT_TRACE)
        g.trace_threads++;
    pthread_mutex_unlock(&g.core.lock);
    struct vcpu *v = vcpus[vcpu_index];
    if (!v) {
        v = aligned_alloc(64, sizeof *v);
        if (!v) {
            warn("out of memory for a thread");
            abort();
        }
        memset(v, 0, sizeof *v);
        __atomic_store_n(&vcpus[vcpu_index], v, __ATOMIC_RELEASE);
    }
    thread_end(v); /* an index QEMU reuses for a new thread starts afresh */
    if (g.mode == RT_OFF || g.finished)
        rt_hot_idle(&v->hot);
}

static void on_vcpu_exit(qemu_plugin_id_t id, unsigned int vcpu_index)
{
    (void)id;
    struct vcpu *v = vcpu_index < MAX_VCPUS ? vcpus[vcpu_index] : NULL;
    if (!v)
        return;
    pthread_mutex_lock(&g.core.lock);
    g.live_vcpus--;
    if (g.mode == RT_TRACE)
        flush_pending(v);
    pthread_mutex_unlock(&g.core.lock);
    thread_end(v);
    rt_hot_idle(&v->hot);
}

static void on_exit_cb(qemu_plugin_id_t id, void *p)
{
    (void)id;
    (void)p;
    pthread_mutex_lock(&g.core.lock);
    if (!g.finished && g.mode == RT_HIST)
        rt_core_write_profile(&g.core, g.output, rt_lines_exact());
    if (g.mode == RT_TRACE && g.writer) {
        for (unsigned i = 0; i < MAX_VCPUS; i++)
            if (vcpus[i])
                flush_pending(vcpus[i]);
        char err[LLC_ERRLEN];
        if (g.writer && llc_trace_writer_close(g.writer, -1, err, sizeof err) < 0)
            warn("%s", err);
        g.writer = NULL;
    }
    g.finished = true;
    pthread_mutex_unlock(&g.core.lock);
}

/* QEMU runs the guest's fork() as its own: the child keeps a copy of this
 * state, and would write the profile (or into the trace) at its exit. */
static void in_forked_child(void)
{
    g.finished = true;
    g.writer = NULL; /* the parent's; its buffer is never flushed here (exit_group) */
    for (unsigned i = 0; i < MAX_VCPUS; i++)
        if (vcpus[i])
            rt_hot_idle(&vcpus[i]->hot);
}

/* ---- arguments ---------------------------------------------------------- */

static int parse_u64(const char *s, uint64_t *out)
{
    char *end;
    errno = 0;
    *out = strtoull(s, &end, 10);
    return !*s || *end || errno || *s == '-' ? -EINVAL : 0;
}

static int parse_arg(const char *arg)
{
    const char *eq = strchr(arg, '=');
    if (!eq)
        return -EINVAL;
    const size_t klen = (size_t)(eq - arg);
    const char *val = eq + 1;
    uint64_t u;
#define KEY(k) (klen == strlen(k) && strncmp(arg, k, klen) == 0)
    if (KEY("out")) {
        if (!*val || strlen(val) >= sizeof g.output)
            return -EINVAL;
        snprintf(g.output, sizeof g.output, "%s", val);
    } else if (KEY("mode")) {
        if (strcmp(val, "hist") == 0) {
            g.mode = RT_HIST;
        } else if (strcmp(val, "trace") == 0) {
            g.mode = RT_TRACE;
        } else if (strcmp(val, "floor") == 0) {
            g.mode = RT_OFF;
            g.floor = true;
        } else {
            return -EINVAL;
        }
    } else if (KEY("rate")) {
        char *end;
        g.core.rate = strtod(val, &end);
        if (*end || !(g.core.rate > 0 && g.core.rate <= 1))
            return -EINVAL;
    } else if (KEY("seed")) {
        if (parse_u64(val, &g.core.seed) < 0)
            return -EINVAL;
    } else if (KEY("window")) {
        if (parse_u64(val, &g.core.window) < 0 || g.core.window > UINT64_C(1) << 50)
            return -EINVAL;
    } else if (KEY("pcs")) {
        if (parse_u64(val, &u) < 0 || u == 0 || u > UINT32_MAX)
            return -EINVAL;
        g.core.window_pcs = (uint32_t)u;
    } else {
        return -EINVAL;
    }
#undef KEY
    return 0;
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info, int argc,
                                           char **argv)
{
    if (strcmp(info->target_name, "x86_64") != 0 || info->system_emulation) {
        warn("this plugin is for qemu-x86_64 (user mode), not %s%s", info->target_name,
             info->system_emulation ? " system emulation" : "");
        return -1;
    }
    g.mode = RT_HIST;
    rt_core_init(&g.core, "llcprobe-qemu");
    for (int i = 0; i < argc; i++) {
        if (parse_arg(argv[i]) < 0) {
            warn("bad argument '%s' (out=FILE, mode=hist|trace|floor, rate in (0,1], seed=N, "
                 "window=N up to 2^50, pcs=N from 1)",
                 argv[i]);
            return -1;
        }
    }
    if (!g.output[0] && !g.floor) {
        warn("out=FILE is missing");
        return -1;
    }
    rt_core_ready(&g.core);
    read_command(g.core.command, sizeof g.core.command);
    if (g.mode == RT_TRACE) {
        struct llc_trace_info ti = {.page_size = (uint32_t)sysconf(_SC_PAGESIZE),
                                    .exit_status = -1};
        snprintf(ti.recorder, sizeof ti.recorder, "qemu");
        snprintf(ti.command, sizeof ti.command, "%s", g.core.command);
        char err[LLC_ERRLEN];
        if (llc_trace_writer_open(g.output, &ti, &g.writer, err, sizeof err) < 0) {
            warn("%s", err);
            return -1;
        }
    }
    if (g.mode == RT_HIST)
        rt_lines_map();
    pthread_atfork(NULL, NULL, in_forked_child);
    qemu_plugin_register_vcpu_init_cb(id, on_vcpu_init);
    qemu_plugin_register_vcpu_exit_cb(id, on_vcpu_exit);
    qemu_plugin_register_vcpu_tb_trans_cb(id, on_tb_trans);
    qemu_plugin_register_atexit_cb(id, on_exit_cb, NULL);
    return 0;
}
