/* llcprobe map with a hardware backend (auto, pmu, timing): checks what the
 * machine allows, launches or attaches the target, lets the backend build
 * and self-test, maps, and always leaves no child and no hugepage behind. */
#include <errno.h>
#include <libgen.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/map_opts.h"
#include "llcprobe/common.h"
#include "llcprobe/sysinfo.h"
#include "llcprobe/target.h"
#include "util/cli.h"

/* The program must exist before anything else is looked at: that error is
 * the one the user can fix first. */
static int check_program(const char *cmd, const char *prog)
{
    if (strchr(prog, '/'))
        return access(prog, X_OK) == 0 ? 0 : llc_cli_fail(cmd, "%s: %s", prog, strerror(errno));
    const char *path = getenv("PATH");
    char dir[4096];
    for (const char *p = path ? path : "/usr/bin:/bin"; *p;) {
        const size_t n = strcspn(p, ":");
        snprintf(dir, sizeof(dir), "%.*s/%s", (int)n, p, prog);
        if (access(dir, X_OK) == 0)
            return 0;
        p += n + (p[n] == ':');
    }
    return llc_cli_fail(cmd, "%s: not found in PATH", prog);
}

/* The target as the map sees it: one run, restarted when it ends with
 * --repeat, or a fresh run per group with --per-set-runs. */
struct hw_target {
    struct llc_target *t;
    char **argv;
    struct llc_target_options opt;
    bool repeat, attached;
    unsigned runs;
    char note[LLC_ERRLEN]; /* why a restart failed */
};

static int target_run(struct hw_target *h, char *err, size_t errlen)
{
    llc_target_destroy(h->t);
    h->t = NULL;
    int rc = llc_target_launch(h->argv, &h->opt, &h->t, err, errlen);
    if (rc == 0)
        rc = llc_target_start(h->t, err, errlen);
    if (rc == 0)
        h->runs++;
    return rc;
}

static int target_restart(void *ctx, char *err, size_t errlen)
{
    return target_run(ctx, err, errlen);
}

static bool target_running(void *ctx)
{
    struct hw_target *h = ctx;
    struct llc_target_status st;
    char err[LLC_ERRLEN];
    if (!h->t || llc_target_poll(h->t, &st, err, sizeof(err)) < 0)
        return false;
    if (st.state == LLC_TARGET_RUNNING || st.state == LLC_TARGET_READY)
        return true;
    /* A run that ends at once would restart forever: repeat only runs
     * that lived a little. */
    if (!h->repeat || h->attached || st.runtime_s < 0.01)
        return false;
    if (target_run(h, h->note, sizeof(h->note)) < 0)
        return false;
    return true;
}

/* Which hardware backend: the one asked for, or auto's choice. */
static int choose_backend(const struct map_opts *o, const struct llc_sysinfo *si, const char **name)
{
    if (strcmp(o->backend, "auto") != 0) {
        *name = o->backend;
        return 0;
    }
    if (si->backend.backend == LLC_BACKEND_NONE)
        return llc_cli_fail(o->cmd, "no hardware backend can run here: %s", si->backend.reason);
    *name = llc_backend_name(si->backend.backend);
    if (!o->quiet)
        fprintf(stderr, "llcprobe: %s: backend auto chose %s: %s\n", o->cmd, *name, si->backend.reason);
    return 0;
}

static void geometry_from(const struct llc_geometry *g, struct llc_map_geometry *out)
{
    memset(out, 0, sizeof(*out));
    out->line_size = g->line_size;
    /* Unknown slices: one unit per set the kernel lists; the backend's
     * eviction tests find out which lines really are congruent. */
    out->slices = g->slices ? g->slices : 1;
    out->sets_per_slice = g->slices ? g->sets / g->slices : g->sets;
    out->llc_ways = g->ways;
    out->l2_ways = g->upper_ways;
    out->l2_sets = g->upper_sets;
    out->victim_llc = g->hierarchy == LLC_HIER_EXCLUSIVE_VICTIM;
    out->llc_bytes = g->size;
}

/* --llc: the user's ways, sets per slice and slices; the line size and the
 * level above from what the machine does report. A victim LLC on AMD
 * family 0x17 and later (Zen), as the hierarchy rule in sysinfo says. */
static int geometry_override(const struct map_opts *o, const struct llc_sysinfo *si, struct llc_map_geometry *g)
{
    memset(g, 0, sizeof(*g));
    g->llc_ways = o->llc_ways;
    g->sets_per_slice = o->llc_sets_per_slice;
    g->slices = o->llc_slices;
    g->line_size = 64;
    for (unsigned i = 0; i < si->topo.n_caches; i++) {
        const struct llc_sysfs_cache *c = &si->topo.caches[i];
        if (c->type != LLC_CACHE_UNIFIED)
            continue;
        if (c->level == 2) {
            g->l2_ways = c->ways;
            g->l2_sets = c->sets;
        }
        if (c->line_size)
            g->line_size = c->line_size;
    }
    if (g->l2_sets > g->sets_per_slice)
        return llc_cli_fail(o->cmd, "--llc: %u sets per slice is fewer than the L2's %u sets", g->sets_per_slice,
                            g->l2_sets);
    g->victim_llc = si->cpu_ok && si->cpu.vendor == LLC_VENDOR_AMD && si->cpu.family >= 0x17;
    g->llc_bytes = (uint64_t)g->llc_ways * g->sets_per_slice * g->slices * g->line_size;
    return 0;
}

int llc_map_cmd_hw(const struct map_opts *o, volatile sig_atomic_t *stop)
{
    char err[LLC_ERRLEN], prefix[256], machine[256], target_text[4200];
    struct llc_sysinfo *si = calloc(1, sizeof(*si));
    struct hw_target h = {.argv = o->argv, .repeat = o->repeat, .attached = o->attach_pid > 0};
    struct llc_map_backend *b = NULL;
    struct llc_map_prefetch_saved pf_saved = {0};
    char pf_why[LLC_MAP_TEXT_LEN] = "";
    int status = LLC_EXIT_FAIL;
    if (!si)
        return llc_cli_fail(o->cmd, "out of memory");
    if (o->argv && check_program(o->cmd, o->argv[0]) != 0)
        goto out;
    const struct llc_sysinfo_options so = {.live = true};
    if (llc_sysinfo_collect(&so, si, err, sizeof(err)) < 0) {
        llc_cli_fail(o->cmd, "%s", err);
        goto out;
    }
    struct llc_map_hw_options ho = {0};
    if (o->llc_ways) {
        if (geometry_override(o, si, &ho.geo) != 0)
            goto out;
    } else if (!si->geometry_ok) {
        llc_cli_fail(o->cmd, "the LLC geometry is unknown, so no set can be targeted: %s (give it with --llc, "
                            "or try --backend sim)",
                     si->geometry_reason);
        goto out;
    } else {
        geometry_from(&si->geometry, &ho.geo);
    }
    const char *backend = NULL;
    if (choose_backend(o, si, &backend) != 0)
        goto out;
    if (o->mode == LLC_MAP_GLOBAL && strcmp(backend, "pmu") == 0) {
        status = llc_cli_usage(o->cmd, "--mode global needs per-access attribution (timing or sim), not pmu");
        goto out;
    }

    /* The probe on the lowest CPU we may use, the target on another core
     * under the same LLC (hwloc). */
    int probe_cpu = -1;
    cpu_set_t allowed;
    if (sched_getaffinity(0, sizeof(allowed), &allowed) == 0)
        for (int c = 0; c < CPU_SETSIZE && probe_cpu < 0; c++)
            if (CPU_ISSET(c, &allowed))
                probe_cpu = c;
    llc_target_options_init(&h.opt);
    char cpu_note[LLC_ERRLEN];
    if (probe_cpu >= 0 && !h.attached &&
        llc_target_pick_cpu(probe_cpu, &h.opt.cpu, cpu_note, sizeof(cpu_note), err, sizeof(err)) < 0) {
        /* hwloc cannot confirm a shared LLC (e.g. a VM whose kernel
         * exposes no cache topology): any other CPU, said so. */
        h.opt.cpu = LLC_TARGET_CPU_NONE;
        for (int c = probe_cpu + 1; c < CPU_SETSIZE; c++)
            if (CPU_ISSET(c, &allowed)) {
                h.opt.cpu = c;
                break;
            }
        if (h.opt.cpu == LLC_TARGET_CPU_NONE) {
            llc_cli_fail(o->cmd, "the target needs a CPU of its own beside the probe's CPU %d: %s", probe_cpu, err);
            goto out;
        }
        llc_cli_warn(o->quiet, "%s; the target runs on CPU %d, LLC sharing unconfirmed", err, h.opt.cpu);
    }
    h.opt.as_root = o->as_root;
    h.opt.output_path = o->target_output;
    h.opt.output_append = o->repeat || o->per_set_runs; /* every run's output kept */
    h.opt.die_with_parent = true;
    /* Launched now and held before exec, so the backend can pick its CPU
     * against the target's and build before the program runs. */
    const int rc = h.attached ? llc_target_attach(o->attach_pid, &h.opt, &h.t, err, sizeof(err))
                              : llc_target_launch(o->argv, &h.opt, &h.t, err, sizeof(err));
    if (rc < 0) {
        llc_cli_fail(o->cmd, "%s", err);
        goto out;
    }
    const struct llc_map_geometry geo = ho.geo;
    ho = (struct llc_map_hw_options){
        .geo = geo,
        .probe_cpu = probe_cpu,
        .small_pages_ok = o->small_pages_ok,
        .reserve = o->reserve,
        .delay_nops = o->delay_nops,
        .rate = o->rate,
        .event = o->event,
        .seed = o->seed,
        .target_alive = target_running,
        .target_ctx = &h,
        .stop = stop,
        .search_cycle_s = o->search_cycle_s,
    };
    /* Prefetchers off for the probe's and the target's CPUs before the
     * backend builds and self-tests; restored on every way out (signals
     * only set the stop flag, so they come through here too). */
    struct llc_map_prefetch_facts pf;
    llc_map_prefetch_facts_probe(si->cpu_ok && si->cpu.vendor == LLC_VENDOR_INTEL, si->cpu.vendor_id,
                                 si->cpu.hypervisor, probe_cpu, NULL, &pf);
    if (llc_map_prefetch_decide(&pf, pf_why, sizeof(pf_why)) == 1) {
        int cpus[2] = {probe_cpu < 0 ? 0 : probe_cpu, 0};
        unsigned n = 1;
        if (h.opt.cpu >= 0 && h.opt.cpu != cpus[0])
            cpus[n++] = h.opt.cpu;
        if (llc_map_prefetch_disable(NULL, cpus, n, &pf_saved, err, sizeof(err)) < 0)
            snprintf(pf_why, sizeof(pf_why), "left on: %.300s", err);
    }
    if (!o->quiet)
        fprintf(stderr, "llcprobe: %s: hardware prefetchers %s\n", o->cmd, pf_why);
    struct llc_map_selftest st;
    const int brc = strcmp(backend, "pmu") == 0 ? llc_map_backend_pmu(&ho, &b, &st, err, sizeof(err))
                                                 : llc_map_backend_timing(&ho, &b, &st, err, sizeof(err));
    if (brc < 0) {
        llc_cli_fail(o->cmd, "%s", err);
        goto out;
    }
    if (b->warning[0])
        llc_cli_warn(o->quiet, "%s", b->warning);
    if (!o->quiet)
        fprintf(stderr, "llcprobe: %s: %s; %s; %s%s%s\n", o->cmd, st.text, b->walk_check, b->calibration,
                b->slow_walk_check[0] ? "; " : "", b->slow_walk_check);
    if (!h.attached && !o->per_set_runs) {
        if (llc_target_start(h.t, err, sizeof(err)) < 0) {
            llc_cli_fail(o->cmd, "%s", err);
            goto out;
        }
        h.runs = 1;
    }
    struct map_opts run = *o;
    run.prefetch = pf_why;
    if (!run.out_prefix) {
        char copy[4096];
        snprintf(copy, sizeof(copy), "%s", o->argv ? o->argv[0] : "attached");
        snprintf(prefix, sizeof(prefix), "%s", basename(copy));
        run.out_prefix = prefix;
    }
    snprintf(machine, sizeof(machine), "%s %s (%s)", si->cpu.vendor_id, si->cpu.brand,
             si->cpu.hypervisor ? "virtual machine" : "bare metal");
    if (o->argv) {
        size_t at = (size_t)snprintf(target_text, sizeof(target_text), "%s", o->argv[0]);
        for (char **a = o->argv + 1; *a && at < sizeof(target_text); a++)
            at += (size_t)snprintf(target_text + at, sizeof(target_text) - at, " %s", *a);
    } else {
        snprintf(target_text, sizeof(target_text), "pid %d", o->attach_pid);
    }
    status = (o->stage ? o->stage : llc_map_cmd_finish)(&run, b, machine, target_text, o->rate, stop, false,
                                o->per_set_runs ? target_restart : NULL, &h);
    if (!o->quiet && (o->repeat || o->per_set_runs))
        fprintf(stderr, "llcprobe: %s: the target ran %u time%s%s%s\n", o->cmd, h.runs, h.runs == 1 ? "" : "s",
                h.note[0] ? "; last restart failed: " : "", h.note);
out:
    llc_map_prefetch_restore(&pf_saved);
    llc_map_backend_release(b);
    llc_target_destroy(h.t);
    free(si);
    return status;
}
