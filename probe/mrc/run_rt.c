/* Runs a program linked with libllcprobe-rt and collects its profile. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "llcprobe/common.h"
#include "llcprobe/target.h"
#include "mrc/mrc.h"
#include "util/atomic_file.h"
#include "util/identity.h"

/* execvp's search, so that the marker check looks at the file that runs. */
static int resolve(const char *argv0, char *buf, size_t len)
{
    if (strchr(argv0, '/')) {
        snprintf(buf, len, "%s", argv0);
        return access(buf, X_OK) == 0 ? 0 : -errno;
    }
    const char *path = getenv("PATH");
    if (!path)
        path = "/usr/bin:/bin";
    for (const char *p = path; *p;) {
        const char *colon = strchr(p, ':');
        const size_t dlen = colon ? (size_t)(colon - p) : strlen(p);
        snprintf(buf, len, "%.*s/%s", (int)dlen, dlen ? p : ".", argv0);
        if (access(buf, X_OK) == 0)
            return 0;
        p += dlen + (colon ? 1 : 0);
    }
    return -ENOENT;
}

int llc_mrc_has_runtime(const char *argv0, char *err, size_t errlen)
{
    char path[4096];
    int rc = resolve(argv0, path, sizeof path);
    if (rc < 0)
        return llc_errf(err, errlen, rc, "%s: %s", argv0, strerror(-rc));
    const int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return llc_errf(err, errlen, -errno, "%s: %s", path, strerror(errno));
    struct stat st;
    void *map = MAP_FAILED;
    if (fstat(fd, &st) != 0) {
        rc = llc_errf(err, errlen, -errno, "%s: %s", path, strerror(errno));
        goto out;
    }
    if (st.st_size == 0) {
        rc = 0;
        goto out;
    }
    map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (map == MAP_FAILED) {
        rc = llc_errf(err, errlen, -errno, "%s: %s", path, strerror(errno));
        goto out;
    }
    rc = memmem(map, (size_t)st.st_size, LLC_REUSEFILE_RT_MARKER,
                strlen(LLC_REUSEFILE_RT_MARKER)) != NULL;
out:
    if (map != MAP_FAILED)
        munmap(map, (size_t)st.st_size);
    close(fd);
    return rc;
}

static int set_rt_env(const struct llc_mrc_rt_config *cfg, const char *profile)
{
    char rate_s[64], seed_s[32], window_s[32], pcs_s[32];
    snprintf(rate_s, sizeof rate_s, "%.17g", cfg->rate);
    snprintf(seed_s, sizeof seed_s, "%llu", (unsigned long long)cfg->seed);
    snprintf(window_s, sizeof window_s, "%llu", (unsigned long long)cfg->window);
    snprintf(pcs_s, sizeof pcs_s, "%u", cfg->window_pcs);
    char samples_s[32];
    snprintf(samples_s, sizeof samples_s, "%llu", (unsigned long long)cfg->samples);
    /* With a sample target the runtime starts at rate 1 and halves it
     * (LLCPROBE_RT_SAMPLES); otherwise the fixed rate. */
    if (setenv("LLCPROBE_RT_OUTPUT", profile, 1) || setenv("LLCPROBE_RT_MODE", "hist", 1) ||
        (cfg->samples ? setenv("LLCPROBE_RT_SAMPLES", samples_s, 1) || unsetenv("LLCPROBE_RT_RATE")
                      : setenv("LLCPROBE_RT_RATE", rate_s, 1) || unsetenv("LLCPROBE_RT_SAMPLES")) ||
        setenv("LLCPROBE_RT_SEED", seed_s, 1) || setenv("LLCPROBE_RT_WINDOW", window_s, 1) ||
        (cfg->window_pcs && setenv("LLCPROBE_RT_WINDOW_PCS", pcs_s, 1)))
        return -errno;
    return 0;
}

static void unset_rt_env(void)
{
    static const char *const names[] = {
        "LLCPROBE_RT_OUTPUT", "LLCPROBE_RT_MODE",       "LLCPROBE_RT_RATE",   "LLCPROBE_RT_SEED",
        "LLCPROBE_RT_WINDOW", "LLCPROBE_RT_WINDOW_PCS", "LLCPROBE_RT_SAMPLES"};
    for (size_t i = 0; i < LLC_ARRAY_LEN(names); i++)
        unsetenv(names[i]);
}

/* The program runs through the target launcher: in its own process group,
 * as the invoking user under sudo (its profile directory is theirs), and
 * stopped with its whole group when cfg->stop is raised. */
int llc_mrc_run_rt(char *const *argv, const struct llc_mrc_rt_config *cfg,
                   struct llc_statmodel_hist *h, struct llc_reusefile_info *info,
                   struct llc_reusefile_windows *w, int *exit_status, char *err, size_t errlen)
{
    char dir[4096], profile[4200];
    int rc = llc_tempdir_create("llcprobe-mrc", dir, sizeof dir, err, errlen);
    if (rc < 0)
        return rc;
    snprintf(profile, sizeof profile, "%s/profile", dir);
    struct llc_target *t = NULL;
    struct llc_target_options opt;
    llc_target_options_init(&opt);
    opt.cpu = LLC_TARGET_CPU_NONE;
    opt.die_with_parent = true;
    /* The environment is inherited at the fork inside the launcher; mrc
     * has no other threads yet. */
    rc = set_rt_env(cfg, profile);
    if (rc < 0) {
        rc = llc_errf(err, errlen, rc, "setenv: %s", strerror(-rc));
        goto out;
    }
    rc = llc_target_launch(argv, &opt, &t, err, errlen);
    unset_rt_env();
    if (rc == 0)
        rc = llc_target_start(t, err, errlen);
    if (rc < 0)
        goto out;
    struct llc_target_status st;
    for (;;) {
        if (cfg->stop && *cfg->stop) {
            llc_target_stop(t, &st, err, errlen);
            rc = llc_errf(err, errlen, -EINTR, "stopped by signal %d", (int)*cfg->stop);
            goto out;
        }
        rc = llc_target_wait(t, 50, &st, err, errlen);
        if (rc < 0)
            goto out;
        if (rc == 1)
            break;
    }
    *exit_status = st.state == LLC_TARGET_EXITED ? st.exit_code : 128 + st.signal;
    struct llc_fs_id id;
    llc_fs_as_invoker(&id);
    const bool have = access(profile, F_OK) == 0;
    llc_fs_restore(&id);
    if (!have) {
        rc = llc_errf(err, errlen, -ENOENT,
                      "%s wrote no profile (exit status %d): is it linked with libllcprobe-rt? "
                      "(build it with scripts/llcprobe-cc)",
                      argv[0], *exit_status);
        goto out;
    }
    /* The profile is the user's file: read with their permissions, so a
     * symlink they plant there reads nothing of root's. */
    llc_fs_as_invoker(&id);
    rc = llc_reusefile_read(profile, info, h, w, err, errlen);
    llc_fs_restore(&id);
out:
    llc_target_destroy(t);
    unlink(profile);
    rmdir(dir);
    return rc;
}
