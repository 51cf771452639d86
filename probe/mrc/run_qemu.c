/* Runs any x86-64 program under qemu-x86_64 with libllcprobe-qemu
 * (probe/qemu/plugin.c): its reuse-sampling profile, or its full trace. */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "llcprobe/common.h"
#include "mrc/mrc.h"
#include "llcprobe/target.h"
#include "trace/spawn.h"
#include "util/atomic_file.h"
#include "util/identity.h"
#include "util/stopsig.h"

#define PLUGIN_NAME "libllcprobe-qemu.so"

int llc_mrc_qemu_find(char *qemu, size_t qlen, char *plugin, size_t plen, char *err, size_t errlen)
{
    const char *q = getenv("LLCPROBE_QEMU");
    if (llc_spawn_find_executable(q && *q ? q : "qemu-x86_64", qemu, qlen, err, errlen) < 0)
        return llc_errf(err, errlen, -ENOENT,
                        "%s (qemu-x86_64 is in Debian's qemu-user package, "
                        "which scripts/setup.sh installs; LLCPROBE_QEMU names another)",
                        err);
    const char *p = getenv("LLCPROBE_QEMU_PLUGIN");
    if (p && *p) {
        snprintf(plugin, plen, "%s", p);
        return access(plugin, R_OK) == 0
                   ? 0
                   : llc_errf(err, errlen, -errno, "LLCPROBE_QEMU_PLUGIN=%s: %s", p,
                              strerror(errno));
    }
    /* Beside the executable: the build tree's lib/, or the installed
     * PREFIX/lib/llcprobe/. */
    char exe[PATH_MAX];
    const ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0) {
        exe[n] = '\0';
        char *slash = strrchr(exe, '/');
        if (slash)
            *slash = '\0';
        static const char *const rel[] = {"lib/" PLUGIN_NAME, "../lib/llcprobe/" PLUGIN_NAME};
        for (size_t i = 0; i < LLC_ARRAY_LEN(rel); i++) {
            snprintf(plugin, plen, "%s/%s", exe, rel[i]);
            if (access(plugin, R_OK) == 0)
                return 0;
        }
    }
    return llc_errf(err, errlen, -ENOENT,
                    PLUGIN_NAME " not found beside %s (it is built when "
                                "QEMU's qemu-plugin.h is installed: run scripts/setup.sh; "
                                "LLCPROBE_QEMU_PLUGIN names it)",
                    n > 0 ? exe : "llcprobe");
}

/* QEMU's option syntax: a comma inside a value is written twice. */
static void append_escaped(char *buf, size_t len, const char *s)
{
    size_t at = strlen(buf);
    for (; *s && at + 2 < len; s++) {
        buf[at++] = *s;
        if (*s == ',')
            buf[at++] = ',';
    }
    buf[at] = '\0';
}

/* qemu-user loads ELF files only: a script would fail inside QEMU with a
 * less helpful message. */
static int check_elf(const char *path, char *err, size_t errlen)
{
    unsigned char head[4] = {0};
    const int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return llc_errf(err, errlen, -errno, "%s: %s", path, strerror(errno));
    const ssize_t n = read(fd, head, sizeof head);
    close(fd);
    if (n == 4 && memcmp(head, "\177ELF", 4) == 0)
        return 0;
    if (n >= 2 && head[0] == '#' && head[1] == '!')
        return llc_errf(err, errlen, -ENOEXEC,
                        "%s is a script, and qemu-x86_64 runs ELF "
                        "programs only: give its interpreter (-- /bin/sh %s ...)",
                        path, path);
    return llc_errf(err, errlen, -ENOEXEC, "%s is not an ELF program", path);
}

/* Runs qemu -plugin PLUGIN,ARGS,out=OUT PROGRAM ARGS... through the target
 * launcher, as llc_mrc_run_rt runs its program: own process group, the
 * invoking user's identity under sudo, the whole group stopped when *stop
 * is raised. *exit_status as in llc_mrc_run_rt. */
static int run(char *const *argv, const char *args, const char *out,
               const volatile sig_atomic_t *stop, int *exit_status, char *err, size_t errlen)
{
    char qemu[PATH_MAX], plugin[PATH_MAX], program[PATH_MAX];
    int rc = llc_mrc_qemu_find(qemu, sizeof qemu, plugin, sizeof plugin, err, errlen);
    if (rc == 0)
        rc = llc_spawn_find_executable(argv[0], program, sizeof program, err, errlen);
    if (rc == 0)
        rc = check_elf(program, err, errlen);
    if (rc < 0)
        return rc;
    char spec[3 * PATH_MAX + 256] = "";
    append_escaped(spec, sizeof spec, plugin);
    snprintf(spec + strlen(spec), sizeof spec - strlen(spec), ",%s,out=", args);
    append_escaped(spec, sizeof spec, out);
    size_t argc = 0;
    while (argv[argc])
        argc++;
    char **qargv = calloc(argc + 4, sizeof *qargv);
    if (!qargv)
        return llc_errf(err, errlen, -ENOMEM, "out of memory");
    qargv[0] = qemu;
    qargv[1] = "-plugin";
    qargv[2] = spec;
    qargv[3] = program;
    for (size_t i = 1; i < argc; i++)
        qargv[3 + i] = argv[i];
    struct llc_target *t = NULL;
    struct llc_target_options opt;
    llc_target_options_init(&opt);
    opt.cpu = LLC_TARGET_CPU_NONE;
    opt.die_with_parent = true;
    rc = llc_target_launch(qargv, &opt, &t, err, errlen);
    if (rc == 0)
        rc = llc_target_start(t, err, errlen);
    if (rc < 0)
        goto out;
    struct llc_target_status st;
    for (;;) {
        if (stop && *stop) {
            llc_target_stop(t, &st, err, errlen);
            rc = llc_errf(err, errlen, -EINTR, "stopped by signal %d", (int)*stop);
            goto out;
        }
        rc = llc_target_wait(t, 50, &st, err, errlen);
        if (rc < 0)
            goto out;
        if (rc == 1)
            break;
    }
    rc = 0;
    *exit_status = st.state == LLC_TARGET_EXITED ? st.exit_code : 128 + st.signal;
    struct llc_fs_id id;
    llc_fs_as_invoker(&id);
    const bool have = access(out, F_OK) == 0;
    llc_fs_restore(&id);
    if (!have)
        rc = llc_errf(err, errlen, -EIO,
                      "qemu-x86_64 with the plugin wrote no output (exit "
                      "status %d; its messages are above)",
                      *exit_status);
out:
    llc_target_destroy(t);
    free(qargv);
    return rc;
}

int llc_mrc_run_qemu(char *const *argv, const struct llc_mrc_rt_config *cfg,
                     struct llc_statmodel_hist *h, struct llc_reusefile_info *info,
                     struct llc_reusefile_windows *w, int *exit_status, char *err, size_t errlen)
{
    char dir[PATH_MAX], out[PATH_MAX + 16], args[256];
    int rc = llc_tempdir_create("llcprobe-qemu", dir, sizeof dir, err, errlen);
    if (rc < 0)
        return rc;
    snprintf(out, sizeof out, "%s/profile", dir);
    snprintf(args, sizeof args, "mode=hist,rate=%.17g,seed=%llu,window=%llu", cfg->rate,
             (unsigned long long)cfg->seed, (unsigned long long)cfg->window);
    if (cfg->window_pcs)
        snprintf(args + strlen(args), sizeof args - strlen(args), ",pcs=%u", cfg->window_pcs);
    rc = run(argv, args, out, cfg->stop, exit_status, err, errlen);
    if (rc == 0) {
        /* The user's file: read with their permissions (a planted symlink
         * reads nothing of root's). */
        struct llc_fs_id id;
        llc_fs_as_invoker(&id);
        rc = llc_reusefile_read(out, info, h, w, err, errlen);
        llc_fs_restore(&id);
    }
    unlink(out);
    rmdir(dir);
    return rc;
}

int llc_mrc_qemu_trace(char *const *argv, const char *output, int *exit_status, char *err,
                       size_t errlen)
{
    /* The plugin's trace writer replaces output atomically itself. */
    return run(argv, "mode=trace", output, &llc_stop_signal, exit_status, err, errlen);
}
