/* llcprobe map with a hardware backend (auto, pmu, timing): checks what the
 * machine allows, launches or attaches the target, lets the backend build
 * and self-test, maps, and always leaves no child and no hugepage behind. */
#include <errno.h>
#include <libgen.h>
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
static int check_program(const char *prog)
{
    if (strchr(prog, '/'))
        return access(prog, X_OK) == 0 ? 0 : llc_cli_fail("map", "%s: %s", prog, strerror(errno));
    const char *path = getenv("PATH");
    char dir[4096];
    for (const char *p = path ? path : "/usr/bin:/bin"; *p;) {
        const size_t n = strcspn(p, ":");
        snprintf(dir, sizeof(dir), "%.*s/%s", (int)n, p, prog);
        if (access(dir, X_OK) == 0)
            return 0;
        p += n + (p[n] == ':');
    }
    return llc_cli_fail("map", "%s: not found in PATH", prog);
}

static bool target_running(void *ctx)
{
    struct llc_target_status st;
    char err[LLC_ERRLEN];
    return llc_target_poll(ctx, &st, err, sizeof(err)) == 0 &&
           (st.state == LLC_TARGET_RUNNING || st.state == LLC_TARGET_READY);
}

/* Which hardware backend: the one asked for, or auto's choice. */
static int choose_backend(const struct map_opts *o, const struct llc_sysinfo *si, const char **name)
{
    if (strcmp(o->backend, "auto") != 0) {
        *name = o->backend;
        return 0;
    }
    if (si->backend.backend == LLC_BACKEND_NONE)
        return llc_cli_fail("map", "no hardware backend can run here: %s", si->backend.reason);
    *name = llc_backend_name(si->backend.backend);
    if (!o->quiet)
        fprintf(stderr, "llcprobe: map: backend auto chose %s: %s\n", *name, si->backend.reason);
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

int llc_map_cmd_hw(const struct map_opts *o, volatile sig_atomic_t *stop)
{
    char err[LLC_ERRLEN], prefix[256], machine[256], target_text[4200];
    struct llc_sysinfo *si = calloc(1, sizeof(*si));
    struct llc_target *t = NULL;
    struct llc_map_backend *b = NULL;
    int status = LLC_EXIT_FAIL;
    if (!si)
        return llc_cli_fail("map", "out of memory");
    if (o->argv && check_program(o->argv[0]) != 0)
        goto out;
    const struct llc_sysinfo_options so = {.live = true};
    if (llc_sysinfo_collect(&so, si, err, sizeof(err)) < 0) {
        llc_cli_fail("map", "%s", err);
        goto out;
    }
    if (!si->geometry_ok) {
        llc_cli_fail("map", "the LLC geometry is unknown, so no set can be targeted: %s (try --backend sim)",
                     si->geometry_reason);
        goto out;
    }
    const char *backend = NULL;
    if (choose_backend(o, si, &backend) != 0)
        goto out;
    if (o->mode == LLC_MAP_GLOBAL && strcmp(backend, "pmu") == 0) {
        status = llc_cli_usage("map", "--mode global needs per-access attribution (timing or sim), not pmu");
        goto out;
    }

    struct llc_target_options to;
    llc_target_options_init(&to);
    to.as_root = o->as_root;
    to.output_path = o->target_output;
    to.die_with_parent = true;
    const int rc = o->attach_pid > 0 ? llc_target_attach(o->attach_pid, &to, &t, err, sizeof(err))
                                     : llc_target_launch(o->argv, &to, &t, err, sizeof(err));
    if (rc < 0) {
        llc_cli_fail("map", "%s", err);
        goto out;
    }
    struct llc_map_hw_options ho = {
        .probe_cpu = -1,
        .small_pages_ok = o->small_pages_ok,
        .reserve = o->reserve,
        .delay_nops = o->delay_nops,
        .rate = o->rate,
        .event = o->event,
        .seed = o->seed,
        .target_alive = target_running,
        .target_ctx = t,
        .stop = stop,
    };
    geometry_from(&si->geometry, &ho.geo);
    struct llc_map_selftest st;
    const int brc = strcmp(backend, "pmu") == 0 ? llc_map_backend_pmu(&ho, &b, &st, err, sizeof(err))
                                                 : llc_map_backend_timing(&ho, &b, &st, err, sizeof(err));
    if (brc < 0) {
        llc_cli_fail("map", "%s", err);
        goto out;
    }
    if (!o->quiet)
        fprintf(stderr, "llcprobe: map: %s; %s; %s\n", st.text, b->walk_check, b->calibration);
    if (!o->attach_pid || o->attach_pid < 0) {
        if (llc_target_start(t, err, sizeof(err)) < 0) {
            llc_cli_fail("map", "%s", err);
            goto out;
        }
    }
    struct map_opts run = *o;
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
    status = llc_map_cmd_finish(&run, b, machine, target_text, o->rate, stop, false);
out:
    llc_map_backend_release(b);
    llc_target_destroy(t);
    free(si);
    return status;
}
