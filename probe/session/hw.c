/* A hardware session (auto, pmu, timing): checks what the machine allows,
 * launches or attaches the target, lets the backend build and self-test,
 * and leaves no child, no hugepage and no prefetcher change behind. */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "session/session_internal.h"
#include "util/cli.h"

/* The program must exist before anything else is looked at: that error is
 * the one the user can fix first. */
static int check_program(const char *prog, char *err, size_t errlen)
{
    if (strchr(prog, '/'))
        return access(prog, X_OK) == 0
                   ? 0
                   : llc_errf(err, errlen, -errno, "%s: %s", prog, strerror(errno));
    const char *path = getenv("PATH");
    char dir[4096];
    for (const char *p = path ? path : "/usr/bin:/bin"; *p;) {
        const size_t n = strcspn(p, ":");
        snprintf(dir, sizeof(dir), "%.*s/%s", (int)n, p, prog);
        if (access(dir, X_OK) == 0)
            return 0;
        p += n + (p[n] == ':');
    }
    return llc_errf(err, errlen, -ENOENT, "%s: not found in PATH", prog);
}

static int target_run(struct session_target *h, char *err, size_t errlen)
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

int llc_session_restart_target(void *ctx, char *err, size_t errlen)
{
    return target_run(ctx, err, errlen);
}

static bool target_running(void *ctx)
{
    struct session_target *h = ctx;
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
    return target_run(h, h->note, sizeof(h->note)) == 0;
}

/* Which hardware backend: the one asked for, or auto's choice. */
static int choose_backend(struct llc_session *s, const char **name, char *err, size_t errlen)
{
    const struct llc_sysinfo *si = s->si;
    if (strcmp(s->cfg.backend, "auto") != 0) {
        *name = s->cfg.backend;
        return 0;
    }
    if (si->backend.backend == LLC_BACKEND_NONE)
        return llc_errf(err, errlen, -ENOTSUP, "no hardware backend can run here: %s",
                        si->backend.reason);
    *name = llc_backend_name(si->backend.backend);
    llc_session_note(s, "backend auto chose %s: %s", *name, si->backend.reason);
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

/* The user's ways, sets per slice and slices; the line size and the level
 * above from what the machine does report. A victim LLC on AMD family
 * 0x17 and later (Zen), as the hierarchy rule in sysinfo says. */
static int geometry_override(const struct llc_session_config *c, const struct llc_sysinfo *si,
                             struct llc_map_geometry *g, char *err, size_t errlen)
{
    memset(g, 0, sizeof(*g));
    g->llc_ways = c->llc_ways;
    g->sets_per_slice = c->llc_sets_per_slice;
    g->slices = c->llc_slices;
    g->line_size = 64;
    for (unsigned i = 0; i < si->topo.n_caches; i++) {
        const struct llc_sysfs_cache *sc = &si->topo.caches[i];
        if (sc->type != LLC_CACHE_UNIFIED)
            continue;
        if (sc->level == 2) {
            g->l2_ways = sc->ways;
            g->l2_sets = sc->sets;
        }
        if (sc->line_size)
            g->line_size = sc->line_size;
    }
    if (g->l2_sets > g->sets_per_slice)
        return llc_errf(err, errlen, -EINVAL,
                        "--llc: %u sets per slice is fewer than the L2's %u sets",
                        g->sets_per_slice, g->l2_sets);
    g->victim_llc = si->cpu_ok && si->cpu.vendor == LLC_VENDOR_AMD && si->cpu.family >= 0x17;
    g->llc_bytes = (uint64_t)g->llc_ways * g->sets_per_slice * g->slices * g->line_size;
    return 0;
}

/* The probe on the lowest CPU we may use, the target on another core
 * under the same LLC (hwloc), or any other CPU where hwloc cannot confirm
 * a shared LLC (a VM whose kernel exposes no cache topology), said so. */
static int choose_cpus(struct llc_session *s, int *probe_cpu, char *err, size_t errlen)
{
    struct session_target *h = &s->h;
    cpu_set_t allowed;
    char why[LLC_ERRLEN], cpu_note[LLC_ERRLEN];
    *probe_cpu = -1;
    if (sched_getaffinity(0, sizeof(allowed), &allowed) == 0)
        for (int c = 0; c < CPU_SETSIZE && *probe_cpu < 0; c++)
            if (CPU_ISSET(c, &allowed))
                *probe_cpu = c;
    if (*probe_cpu < 0 || h->attached ||
        llc_target_pick_cpu(*probe_cpu, &h->opt.cpu, cpu_note, sizeof(cpu_note), why,
                            sizeof(why)) == 0)
        return 0;
    h->opt.cpu = LLC_TARGET_CPU_NONE;
    for (int c = *probe_cpu + 1; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &allowed)) {
            h->opt.cpu = c;
            break;
        }
    if (h->opt.cpu == LLC_TARGET_CPU_NONE)
        return llc_errf(err, errlen, -ENODEV,
                        "the target needs a CPU of its own beside the probe's CPU %d: %s",
                        *probe_cpu, why);
    llc_session_warn(s, "%s; the target runs on CPU %d, LLC sharing unconfirmed", why, h->opt.cpu);
    return 0;
}

/* Prefetchers off for the probe's and the target's CPUs before the
 * backend builds and self-tests; restored at close. */
static void prefetchers_off(struct llc_session *s, int probe_cpu)
{
    const struct llc_sysinfo *si = s->si;
    struct llc_map_prefetch_facts pf;
    char why[LLC_ERRLEN];
    llc_map_prefetch_facts_probe(si->cpu_ok && si->cpu.vendor == LLC_VENDOR_INTEL,
                                 si->cpu.vendor_id, si->cpu.hypervisor, probe_cpu, NULL, &pf);
    if (llc_map_prefetch_decide(&pf, s->pf_why, sizeof(s->pf_why)) == 1) {
        int cpus[2] = {probe_cpu < 0 ? 0 : probe_cpu, 0};
        unsigned n = 1;
        if (s->h.opt.cpu >= 0 && s->h.opt.cpu != cpus[0])
            cpus[n++] = s->h.opt.cpu;
        if (llc_map_prefetch_disable(NULL, cpus, n, &s->pf_saved, why, sizeof(why)) < 0)
            snprintf(s->pf_why, sizeof(s->pf_why), "left on: %.300s", why);
    }
    s->info.prefetch = s->pf_why;
    llc_session_note(s, "hardware prefetchers %s", s->pf_why);
}

int llc_session_open_hw(struct llc_session *s, char *err, size_t errlen)
{
    struct llc_session_config *c = &s->cfg;
    struct session_target *h = &s->h;
    char why[LLC_ERRLEN];
    int rc;
    h->argv = c->argv;
    h->repeat = c->repeat;
    h->attached = c->attach_pid > 0;
    if (!c->mode_given)
        c->mode = LLC_MAP_SWEEP;
    if (!(c->dwell_s > 0)) /* not given, or calibrate's "per k as parsed" */
        c->dwell_s = 0.02;
    if (!c->argv && c->attach_pid < 0)
        return llc_errf(err, errlen, LLC_SESSION_EUSAGE,
                        "no target: give -- PROGRAM [ARGS] or --attach PID");
    if (c->argv && (rc = check_program(c->argv[0], err, errlen)) < 0)
        return llc_session_fail_code(rc);
    if (!(s->si = calloc(1, sizeof(*s->si))))
        return llc_errf(err, errlen, -ENOMEM, "out of memory");
    const struct llc_sysinfo_options so = {.live = true};
    if ((rc = llc_sysinfo_collect(&so, s->si, err, errlen)) < 0)
        return llc_session_fail_code(rc);
    struct llc_map_geometry geo;
    if (c->llc_ways) {
        if ((rc = geometry_override(c, s->si, &geo, err, errlen)) < 0)
            return llc_session_fail_code(rc);
    } else if (!s->si->geometry_ok) {
        return llc_errf(err, errlen, -ENODEV,
                        "the LLC geometry is unknown, so no set can be targeted: %s (give "
                        "it with --llc, or try --backend sim)",
                        s->si->geometry_reason);
    } else {
        geometry_from(&s->si->geometry, &geo);
    }
    const char *backend = NULL;
    if ((rc = choose_backend(s, &backend, err, errlen)) < 0)
        return rc;
    /* A map's mode is the user's; sample's in-run map chooses sweep itself
     * where the backend counts one set at a time. */
    if (c->purpose == LLC_SESSION_MAP && c->mode == LLC_MAP_GLOBAL && strcmp(backend, "pmu") == 0)
        return llc_errf(err, errlen, LLC_SESSION_EUSAGE,
                        "--mode global needs per-access attribution (timing or sim), not pmu");
    llc_target_options_init(&h->opt);
    int probe_cpu;
    if ((rc = choose_cpus(s, &probe_cpu, err, errlen)) < 0)
        return rc;
    h->opt.as_root = c->as_root;
    h->opt.output_path = c->target_output;
    h->opt.output_append = c->repeat || c->per_set_runs; /* every run's output kept */
    h->opt.die_with_parent = true;
    /* Launched now and held before exec, so the backend can pick its CPU
     * against the target's and build before the program runs. */
    rc = h->attached ? llc_target_attach(c->attach_pid, &h->opt, &h->t, err, errlen)
                     : llc_target_launch(c->argv, &h->opt, &h->t, err, errlen);
    if (rc < 0)
        return llc_session_fail_code(rc);
    const struct llc_map_hw_options ho = {
        .geo = geo,
        .probe_cpu = probe_cpu,
        .small_pages_ok = c->small_pages_ok,
        .reserve = c->reserve,
        .delay_nops = c->delay_nops,
        .rate = c->rate,
        .event = c->event,
        .seed = c->seed,
        .target_alive = target_running,
        .target_ctx = h,
        .stop = c->stop,
        .search_cycle_s = c->search_cycle_s,
    };
    prefetchers_off(s, probe_cpu);
    struct llc_map_selftest st;
    rc = strcmp(backend, "pmu") == 0 ? llc_map_backend_pmu(&ho, &s->b, &st, why, sizeof(why))
                                     : llc_map_backend_timing(&ho, &s->b, &st, why, sizeof(why));
    if (rc < 0)
        return llc_errf(err, errlen, llc_session_fail_code(rc), "%s", why);
    if (s->b->warning[0])
        llc_session_warn(s, "%s", s->b->warning);
    llc_session_note(s, "%s; %s; %s%s%s", st.text, s->b->walk_check, s->b->calibration,
                     s->b->slow_walk_check[0] ? "; " : "", s->b->slow_walk_check);
    if (!h->attached && !c->per_set_runs) {
        if ((rc = llc_target_start(h->t, err, errlen)) < 0)
            return llc_session_fail_code(rc);
        h->runs = 1;
    }
    const struct llc_sysinfo *si = s->si;
    snprintf(s->machine, sizeof(s->machine), "%s %s (%s)", si->cpu.vendor_id, si->cpu.brand,
             si->cpu.hypervisor ? "virtual machine" : "bare metal");
    if (c->argv)
        llc_join_argv(c->argv, s->target, sizeof(s->target));
    else
        snprintf(s->target, sizeof(s->target), "pid %d", c->attach_pid);
    return 0;
}

void llc_session_close_hw(struct llc_session *s)
{
    if (s->b && (s->cfg.repeat || s->cfg.per_set_runs))
        llc_session_note(s, "the target ran %u time%s%s%s", s->h.runs, s->h.runs == 1 ? "" : "s",
                         s->h.note[0] ? "; last restart failed: " : "", s->h.note);
    llc_map_prefetch_restore(&s->pf_saved);
    llc_map_backend_release(s->b);
    s->b = NULL;
    llc_target_destroy(s->h.t);
    s->h.t = NULL;
    free(s->si);
    s->si = NULL;
}
