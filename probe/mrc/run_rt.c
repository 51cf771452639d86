/* Runs a program linked with libllcprobe-rt and collects its profile. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "llcprobe/common.h"
#include "mrc/mrc.h"

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
    rc = memmem(map, (size_t)st.st_size, LLC_MRC_RT_MARKER, strlen(LLC_MRC_RT_MARKER)) != NULL;
out:
    if (map != MAP_FAILED)
        munmap(map, (size_t)st.st_size);
    close(fd);
    return rc;
}

int llc_mrc_run_rt(char *const *argv, const struct llc_mrc_rt_config *cfg,
                   struct llc_statmodel_hist *h, struct llc_mrc_profile_info *info,
                   struct llc_mrc_profile_windows *w, int *exit_status, char *err, size_t errlen)
{
    const char *tmp = getenv("TMPDIR");
    char dir[4096], profile[4200];
    snprintf(dir, sizeof dir, "%s/llcprobe-mrc-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir))
        return llc_errf(err, errlen, -errno, "cannot make a temporary directory in %s: %s",
                        tmp && *tmp ? tmp : "/tmp", strerror(errno));
    snprintf(profile, sizeof profile, "%s/profile", dir);
    char rate_s[64], seed_s[32], window_s[32], pcs_s[32];
    snprintf(rate_s, sizeof rate_s, "%.17g", cfg->rate);
    snprintf(seed_s, sizeof seed_s, "%llu", (unsigned long long)cfg->seed);
    snprintf(window_s, sizeof window_s, "%llu", (unsigned long long)cfg->window);
    snprintf(pcs_s, sizeof pcs_s, "%u", cfg->window_pcs);
    int rc = 0;
    const pid_t pid = fork();
    if (pid < 0) {
        rc = llc_errf(err, errlen, -errno, "fork: %s", strerror(errno));
        goto out;
    }
    if (pid == 0) {
        setenv("LLCPROBE_RT_OUTPUT", profile, 1);
        setenv("LLCPROBE_RT_MODE", "hist", 1);
        if (cfg->samples) {
            char samples_s[32];
            snprintf(samples_s, sizeof samples_s, "%llu", (unsigned long long)cfg->samples);
            setenv("LLCPROBE_RT_SAMPLES", samples_s, 1);
            unsetenv("LLCPROBE_RT_RATE"); /* start at rate 1 */
        } else {
            setenv("LLCPROBE_RT_RATE", rate_s, 1);
            unsetenv("LLCPROBE_RT_SAMPLES");
        }
        setenv("LLCPROBE_RT_SEED", seed_s, 1);
        setenv("LLCPROBE_RT_WINDOW", window_s, 1);
        if (cfg->window_pcs)
            setenv("LLCPROBE_RT_WINDOW_PCS", pcs_s, 1);
        execvp(argv[0], argv);
        fprintf(stderr, "llcprobe: mrc: cannot run %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    int status;
    while (waitpid(pid, &status, 0) < 0) {
        if (errno != EINTR) {
            rc = llc_errf(err, errlen, -errno, "waitpid: %s", strerror(errno));
            goto out;
        }
    }
    *exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    if (WIFEXITED(status) && WEXITSTATUS(status) == 127 && access(profile, F_OK) != 0) {
        rc = llc_errf(err, errlen, -ENOENT, "%s could not be run", argv[0]);
        goto out;
    }
    if (access(profile, F_OK) != 0) {
        rc = llc_errf(err, errlen, -ENOENT,
                      "%s wrote no profile (exit status %d): is it linked with libllcprobe-rt? "
                      "(build it with scripts/llcprobe-cc)",
                      argv[0], *exit_status);
        goto out;
    }
    rc = llc_mrc_profile_read(profile, info, h, w, err, errlen);
out:
    unlink(profile);
    rmdir(dir);
    return rc;
}
