/* Target launcher: exit statuses, errors before any child exists, stopping a
 * whole process group, output redirection, pinning, dropping root for the
 * sudo user, attaching, and the emergency stop. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "llcprobe/common.h"
#include "llcprobe/target.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static char tmpdir[] = "/tmp/llc-target-XXXXXX";

static struct llc_target_options plain(void)
{
    struct llc_target_options o;
    llc_target_options_init(&o);
    o.cpu = LLC_TARGET_CPU_NONE;
    o.grace_ms = 300;
    return o;
}

static void assert_no_children(void)
{
    errno = 0;
    assert_int_equal(waitpid(-1, NULL, WNOHANG), -1);
    assert_int_equal(errno, ECHILD);
}

/* Launches, starts and waits; returns the final status. */
static struct llc_target_status run(char *const argv[], const struct llc_target_options *o)
{
    struct llc_target *t = NULL;
    char err[LLC_ERRLEN] = "";
    if (llc_target_launch(argv, o, &t, err, sizeof(err)) != 0)
        fail_msg("launch %s: %s", argv[0], err);
    struct llc_target_status st;
    assert_int_equal(llc_target_poll(t, &st, err, sizeof(err)), 0);
    assert_int_equal(st.state, LLC_TARGET_READY);
    if (llc_target_start(t, err, sizeof(err)) != 0)
        fail_msg("start %s: %s", argv[0], err);
    assert_int_equal(llc_target_wait(t, 10000, &st, err, sizeof(err)), 1);
    llc_target_destroy(t);
    assert_no_children();
    return st;
}

static char *slurp(const char *path)
{
    static char buf[4096];
    buf[0] = '\0';
    FILE *f = fopen(path, "r");
    if (!f)
        return buf;
    const size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

static void test_exit_codes(void **state)
{
    (void)state;
    const struct llc_target_options o = plain();
    char *t_true[] = {"true", NULL};
    struct llc_target_status st = run(t_true, &o);
    assert_int_equal(st.state, LLC_TARGET_EXITED);
    assert_int_equal(st.exit_code, 0);
    assert_true(st.runtime_s >= 0.0 && st.runtime_s < 2.0);
    char *t_three[] = {"/bin/sh", "-c", "exit 3", NULL};
    st = run(t_three, &o);
    assert_int_equal(st.state, LLC_TARGET_EXITED);
    assert_int_equal(st.exit_code, 3);
    char *t_sig[] = {"sh", "-c", "kill -USR1 $$", NULL};
    st = run(t_sig, &o);
    assert_int_equal(st.state, LLC_TARGET_SIGNALLED);
    assert_int_equal(st.signal, SIGUSR1);
    /* A run that lasts is told apart from one that exits at once. */
    char *t_sleep[] = {"sleep", "0.3", NULL};
    st = run(t_sleep, &o);
    assert_int_equal(st.exit_code, 0);
    assert_true(st.runtime_s >= 0.29 && st.runtime_s < 5.0);
}

static void expect_launch_error(char *const argv[], int code, const char *text)
{
    const struct llc_target_options o = plain();
    struct llc_target *t = (struct llc_target *)1;
    char err[LLC_ERRLEN] = "";
    assert_int_equal(llc_target_launch(argv, &o, &t, err, sizeof(err)), code);
    assert_null(t);
    if (!strstr(err, text))
        fail_msg("message \"%s\" lacks \"%s\"", err, text);
    assert_null(strchr(err, '\n'));
    assert_no_children();
}

static void test_errors_before_any_child(void **state)
{
    (void)state;
    char *missing_path[] = {"/nonexistent/llc-prog", NULL};
    expect_launch_error(missing_path, -ENOENT, "/nonexistent/llc-prog: No such file");
    char *missing[] = {"llc-no-such-program-xyz", "arg", NULL};
    expect_launch_error(missing, -ENOENT, "no such program (not found in PATH)");
    char plain_file[256];
    snprintf(plain_file, sizeof(plain_file), "%s/data.txt", tmpdir);
    FILE *f = fopen(plain_file, "w");
    assert_non_null(f);
    fclose(f);
    assert_int_equal(chmod(plain_file, 0644), 0);
    char *not_exec[] = {plain_file, NULL};
    /* Even root needs an x bit somewhere. */
    expect_launch_error(not_exec, -EACCES, "not executable");
    char *dir[] = {"/tmp", NULL};
    expect_launch_error(dir, -EACCES, "is a directory");
    char *empty[] = {NULL};
    expect_launch_error(empty, -EINVAL, "no program");
}

static void test_exec_failure_reported_by_start(void **state)
{
    (void)state;
    /* Executable bit but no valid format: only execve can tell. */
    char path[256];
    snprintf(path, sizeof(path), "%s/garbage", tmpdir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("\177ELF not really\n", f);
    fclose(f);
    assert_int_equal(chmod(path, 0755), 0);
    const struct llc_target_options o = plain();
    char *argv[] = {path, NULL};
    struct llc_target *t = NULL;
    char err[LLC_ERRLEN] = "";
    assert_int_equal(llc_target_launch(argv, &o, &t, err, sizeof(err)), 0);
    assert_int_equal(llc_target_start(t, err, sizeof(err)), -ENOEXEC);
    assert_non_null(strstr(err, "executing it failed: Exec format error"));
    struct llc_target_status st;
    assert_int_equal(llc_target_poll(t, &st, err, sizeof(err)), 0);
    assert_int_equal(st.state, LLC_TARGET_EXITED);
    assert_int_equal(st.exit_code, 127);
    llc_target_destroy(t);
    assert_no_children();
}

static void test_held_until_started(void **state)
{
    (void)state;
    const struct llc_target_options o = plain();
    char *argv[] = {"sleep", "30", NULL};
    struct llc_target *t = NULL;
    char err[LLC_ERRLEN] = "";
    assert_int_equal(llc_target_launch(argv, &o, &t, err, sizeof(err)), 0);
    const pid_t pid = llc_target_info(t)->pid;
    /* Still our own code: the image is the test binary, not sleep. */
    char exe[64], link[4096] = "", self[4096] = "";
    snprintf(exe, sizeof(exe), "/proc/%d/exe", (int)pid);
    assert_true(readlink(exe, link, sizeof(link) - 1) > 0);
    assert_true(readlink("/proc/self/exe", self, sizeof(self) - 1) > 0);
    assert_string_equal(link, self);
    struct llc_target_status st;
    assert_int_equal(llc_target_wait(t, 10, &st, err, sizeof(err)), -EINVAL);
    llc_target_destroy(t);
    assert_no_children();
}

static pid_t read_pid_file(const char *path)
{
    for (int i = 0; i < 400; i++) {
        const long v = strtol(slurp(path), NULL, 10);
        if (v > 0)
            return (pid_t)v;
        const struct timespec ms5 = {0, 5000000};
        nanosleep(&ms5, NULL);
    }
    fail_msg("no pid in %s", path);
    return -1;
}

static void test_stop_kills_group(void **state)
{
    (void)state;
    /* The grandchild is reparented to us when its parent dies, so we can
     * reap it and see how it ended. */
    assert_int_equal(prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
    char pidfile[256], script[1024];
    snprintf(pidfile, sizeof(pidfile), "%s/grandchild.pid", tmpdir);
    unlink(pidfile);
    /* The grandchild ignores SIGTERM: only the group SIGKILL ends it. It
     * writes its pid itself, after the trap, so the test cannot signal it
     * before the trap holds (that happened on a loaded machine). */
    snprintf(script, sizeof(script),
             "sh -c 'trap \"\" TERM; echo $$ > %s.tmp; mv %s.tmp %s; exec sleep 30' & wait",
             pidfile, pidfile, pidfile);
    char *argv[] = {"sh", "-c", script, NULL};
    const struct llc_target_options o = plain();
    struct llc_target *t = NULL;
    char err[LLC_ERRLEN] = "";
    assert_int_equal(llc_target_launch(argv, &o, &t, err, sizeof(err)), 0);
    assert_int_equal(llc_target_info(t)->pgid, llc_target_info(t)->pid);
    assert_int_equal(getpgid(llc_target_info(t)->pid), llc_target_info(t)->pid);
    assert_int_equal(llc_target_start(t, err, sizeof(err)), 0);
    const pid_t grandchild = read_pid_file(pidfile);
    assert_int_equal(getpgid(grandchild), llc_target_info(t)->pid);
    struct llc_target_status st;
    assert_int_equal(llc_target_poll(t, &st, err, sizeof(err)), 0);
    assert_int_equal(st.state, LLC_TARGET_RUNNING);
    assert_int_equal(llc_target_stop(t, &st, err, sizeof(err)), 0);
    assert_int_equal(st.state, LLC_TARGET_SIGNALLED);
    assert_int_equal(st.signal, SIGTERM);
    int gst;
    assert_int_equal(waitpid(grandchild, &gst, 0), grandchild);
    assert_true(WIFSIGNALED(gst));
    assert_int_equal(WTERMSIG(gst), SIGKILL);
    llc_target_destroy(t);
    /* On a loaded machine the script's short-lived helpers (mv) can still
     * be alive when the group is signalled; as subreaper we inherit them
     * too. Each must have been ended by the group signal. */
    pid_t other;
    while ((other = waitpid(-1, &gst, 0)) > 0) { /* all were SIGKILLed: this ends */
        assert_true(WIFSIGNALED(gst));
        assert_true(WTERMSIG(gst) == SIGTERM || WTERMSIG(gst) == SIGKILL);
    }
    assert_no_children();
    prctl(PR_SET_CHILD_SUBREAPER, 0);
}

static void test_emergency_stop(void **state)
{
    (void)state;
    const struct llc_target_options o = plain();
    char *argv[] = {"sleep", "30", NULL};
    struct llc_target *t = NULL;
    char err[LLC_ERRLEN] = "";
    assert_int_equal(llc_target_launch(argv, &o, &t, err, sizeof(err)), 0);
    assert_int_equal(llc_target_start(t, err, sizeof(err)), 0);
    llc_target_emergency_stop(SIGKILL);
    struct llc_target_status st;
    assert_int_equal(llc_target_wait(t, 5000, &st, err, sizeof(err)), 1);
    assert_int_equal(st.state, LLC_TARGET_SIGNALLED);
    assert_int_equal(st.signal, SIGKILL);
    llc_target_destroy(t);
    assert_no_children();
}

static void test_output_to_file(void **state)
{
    (void)state;
    char path[256];
    snprintf(path, sizeof(path), "%s/out.txt", tmpdir);
    struct llc_target_options o = plain();
    o.output_path = path;
    char *argv[] = {"sh", "-c", "echo out; echo err >&2", NULL};
    struct llc_target_status st = run(argv, &o);
    assert_int_equal(st.exit_code, 0);
    assert_string_equal(slurp(path), "out\nerr\n");
    o.output_append = true;
    st = run(argv, &o);
    assert_string_equal(slurp(path), "out\nerr\nout\nerr\n");
    o.output_path = "/nonexistent-dir/out.txt";
    struct llc_target *t = NULL;
    char err[LLC_ERRLEN] = "";
    assert_int_equal(llc_target_launch(argv, &o, &t, err, sizeof(err)), -ENOENT);
    assert_non_null(strstr(err, "target output /nonexistent-dir/out.txt"));
    assert_no_children();
    /* A symlink is refused, and what it points to is left alone. */
    char victim[256], link[256];
    snprintf(victim, sizeof(victim), "%s/victim.txt", tmpdir);
    snprintf(link, sizeof(link), "%s/link.txt", tmpdir);
    FILE *v = fopen(victim, "w");
    fputs("precious\n", v);
    fclose(v);
    assert_int_equal(symlink(victim, link), 0);
    o.output_path = link;
    o.output_append = false;
    assert_int_equal(llc_target_launch(argv, &o, &t, err, sizeof(err)), -ELOOP);
    assert_non_null(strstr(err, "is a symlink"));
    assert_string_equal(slurp(victim), "precious\n");
    /* A run refused between launch and start truncates nothing, and a
     * file it created is gone again. */
    o.output_path = victim;
    assert_int_equal(llc_target_launch(argv, &o, &t, err, sizeof(err)), 0);
    llc_target_destroy(t);
    assert_string_equal(slurp(victim), "precious\n");
    char fresh[256];
    snprintf(fresh, sizeof(fresh), "%s/fresh.txt", tmpdir);
    o.output_path = fresh;
    assert_int_equal(llc_target_launch(argv, &o, &t, err, sizeof(err)), 0);
    assert_int_equal(access(fresh, F_OK), 0);
    llc_target_destroy(t);
    assert_int_not_equal(access(fresh, F_OK), 0);
    assert_no_children();
}

/* An attached process's threads get their CPU masks back at destroy. */
static void test_attach_restores_affinity(void **state)
{
    (void)state;
    cpu_set_t mine;
    assert_int_equal(sched_getaffinity(0, sizeof(mine), &mine), 0);
    if (CPU_COUNT(&mine) < 2) {
        print_message("skipped: one CPU, pinning changes nothing\n");
        skip();
    }
    const pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        pause();
        _exit(0);
    }
    struct llc_target_options o = plain();
    o.cpu = 1;
    struct llc_target *t = NULL;
    char err[LLC_ERRLEN] = "";
    assert_int_equal(llc_target_attach(pid, &o, &t, err, sizeof(err)), 0);
    cpu_set_t theirs;
    assert_int_equal(sched_getaffinity(pid, sizeof(theirs), &theirs), 0);
    assert_int_equal(CPU_COUNT(&theirs), 1);
    llc_target_destroy(t);
    const int got = sched_getaffinity(pid, sizeof(theirs), &theirs);
    kill(pid, SIGKILL);
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_int_equal(got, 0);
    assert_true(CPU_EQUAL(&theirs, &mine));
}

static char *allowed_list_of_target(int cpu)
{
    char path[256];
    snprintf(path, sizeof(path), "%s/cpus.txt", tmpdir);
    struct llc_target_options o = plain();
    o.cpu = cpu;
    o.output_path = path;
    char *argv[] = {"grep", "Cpus_allowed_list", "/proc/self/status", NULL};
    const struct llc_target_status st = run(argv, &o);
    assert_int_equal(st.exit_code, 0);
    return slurp(path);
}

static void test_pinning(void **state)
{
    (void)state;
    cpu_set_t mine;
    assert_int_equal(sched_getaffinity(0, sizeof(mine), &mine), 0);
    int last = -1;
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &mine))
            last = c;
    char want[64];
    snprintf(want, sizeof(want), "Cpus_allowed_list:\t%d\n", last);
    assert_string_equal(allowed_list_of_target(last), want);

    /* Auto: another core under the LLC of the CPU this thread is pinned to. */
    const int first = sched_getcpu();
    char err[LLC_ERRLEN] = "", note[LLC_TARGET_TEXT_LEN] = "";
    assert_int_equal(llc_target_pin_thread(first, err, sizeof(err)), 0);
    int picked = -1;
    const int rc = llc_target_pick_cpu(-1, &picked, note, sizeof(note), err, sizeof(err));
    if (rc == 0) {
        assert_true(picked != first);
        assert_true(CPU_ISSET(picked, &mine));
        assert_non_null(strstr(note, "another core"));
        snprintf(want, sizeof(want), "Cpus_allowed_list:\t%d\n", picked);
        assert_string_equal(allowed_list_of_target(LLC_TARGET_CPU_AUTO), want);
    } else {
        assert_int_equal(rc, -ENODEV);
        print_message("auto pinning not testable here: %s\n", err);
    }
    assert_int_equal(sched_setaffinity(0, sizeof(mine), &mine), 0);
    assert_int_equal(llc_target_pin_thread(-3, err, sizeof(err)), -EINVAL);
}

static int child_check_sudo_drop(void)
{
    setenv("SUDO_UID", "65534", 1);
    setenv("SUDO_GID", "65534", 1);
    char path[300], userdir[256];
    /* The output goes where the user may write: a directory of theirs. */
    snprintf(userdir, sizeof(userdir), "%s/user", tmpdir);
    if (chmod(tmpdir, 0711) != 0 || (mkdir(userdir, 0700) != 0 && errno != EEXIST) ||
        chown(userdir, 65534, 65534) != 0)
        return 9;
    snprintf(path, sizeof(path), "%s/ids.txt", tmpdir);
    struct llc_target_options o = plain();
    o.output_path = path;
    char *argv[] = {"sh", "-c", "id -u; id -g; id -G", NULL};
    struct llc_target *t = NULL;
    char err[LLC_ERRLEN] = "";
    /* root's directory: the user may not create files there. */
    if (llc_target_launch(argv, &o, &t, err, sizeof(err)) != -EACCES || access(path, F_OK) == 0)
        return 19;
    snprintf(path, sizeof(path), "%s/ids.txt", userdir);
    unlink(path);
    if (llc_target_launch(argv, &o, &t, err, sizeof(err)) != 0)
        return 10;
    if (!llc_target_info(t)->dropped_root || !strstr(llc_target_info(t)->user_note, "65534"))
        return 11;
    struct llc_target_status st;
    if (llc_target_start(t, err, sizeof(err)) != 0 ||
        llc_target_wait(t, 10000, &st, err, sizeof(err)) != 1 || st.exit_code != 0)
        return 12;
    llc_target_destroy(t);
    if (strcmp(slurp(path), "65534\n65534\n65534\n") != 0)
        return 13;
    struct stat sb;
    if (stat(path, &sb) != 0 || sb.st_uid != 65534)
        return 14; /* the output file belongs to the user */
    o.as_root = true;
    unlink(path);
    if (llc_target_launch(argv, &o, &t, err, sizeof(err)) != 0 || llc_target_info(t)->dropped_root)
        return 15;
    if (llc_target_start(t, err, sizeof(err)) != 0 ||
        llc_target_wait(t, 10000, &st, err, sizeof(err)) != 1)
        return 16;
    llc_target_destroy(t);
    if (strncmp(slurp(path), "0\n0\n", 4) != 0)
        return 17;
    /* Attaching: only to the user's own processes; root's is refused
     * before anything is changed. */
    o.as_root = false;
    o.output_path = NULL;
    o.cpu = 0;
    cpu_set_t before, after;
    if (sched_getaffinity(getppid(), sizeof(before), &before) != 0)
        return 20;
    if (llc_target_attach(getppid(), &o, &t, err, sizeof(err)) != -EPERM ||
        !strstr(err, "does not belong to uid 65534"))
        return 21;
    if (sched_getaffinity(getppid(), sizeof(after), &after) != 0 || !CPU_EQUAL(&before, &after))
        return 22;
    const pid_t mine = fork();
    if (mine == 0) {
        if (setgid(65534) || setuid(65534))
            _exit(2);
        pause();
        _exit(0);
    }
    usleep(100 * 1000);
    if (llc_target_attach(mine, &o, &t, err, sizeof(err)) != 0)
        return 23;
    llc_target_destroy(t);
    kill(mine, SIGKILL);
    waitpid(mine, NULL, 0);
    setenv("SUDO_UID", "bogus", 1);
    o.output_path = path;
    if (llc_target_launch(argv, &o, &t, err, sizeof(err)) != -EINVAL || !strstr(err, "SUDO_UID"))
        return 18;
    return 0;
}

static void test_sudo_user(void **state)
{
    (void)state;
    if (geteuid() != 0) {
        print_message("skipped: dropping to SUDO_UID needs root\n");
        skip();
    }
    /* The fake sudo environment stays inside a forked child. */
    const pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0)
        _exit(child_check_sudo_drop());
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    if (WEXITSTATUS(status) != 0)
        fail_msg("sudo drop check failed at step %d", WEXITSTATUS(status));
}

static void test_attach(void **state)
{
    (void)state;
    char err[LLC_ERRLEN] = "";
    struct llc_target *t = NULL;
    assert_int_equal(llc_target_attach(0x3ffffff0, NULL, &t, err, sizeof(err)), -ESRCH);
    assert_non_null(strstr(err, "no process with pid"));
    assert_null(t);
    const pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        pause();
        _exit(0);
    }
    cpu_set_t mine;
    assert_int_equal(sched_getaffinity(0, sizeof(mine), &mine), 0);
    const int cpu = CPU_COUNT(&mine) > 1 ? 1 : 0;
    struct llc_target_options o = plain();
    o.cpu = cpu;
    assert_int_equal(llc_target_attach(pid, &o, &t, err, sizeof(err)), 0);
    const struct llc_target_info *in = llc_target_info(t);
    assert_true(in->attached);
    assert_int_equal(in->cpu, cpu);
    assert_true(in->may_ptrace); /* our own child */
    cpu_set_t theirs;
    assert_int_equal(sched_getaffinity(pid, sizeof(theirs), &theirs), 0);
    assert_int_equal(CPU_COUNT(&theirs), 1);
    assert_true(CPU_ISSET(cpu, &theirs));
    struct llc_target_status st;
    assert_int_equal(llc_target_poll(t, &st, err, sizeof(err)), 0);
    assert_int_equal(st.state, LLC_TARGET_RUNNING);
    /* stop() never signals an attached process. */
    assert_int_equal(llc_target_stop(t, &st, err, sizeof(err)), 0);
    assert_int_equal(kill(pid, 0), 0);
    kill(pid, SIGKILL);
    assert_int_equal(llc_target_wait(t, 5000, &st, err, sizeof(err)), 1);
    assert_int_equal(st.state, LLC_TARGET_EXITED);
    llc_target_destroy(t);
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    if (geteuid() == 0) {
        /* As nobody, root's processes cannot be signalled. */
        const pid_t c = fork();
        assert_true(c >= 0);
        if (c == 0) {
            struct llc_target *u = NULL;
            char e[LLC_ERRLEN] = "";
            if (setgid(65534) || setuid(65534))
                _exit(2);
            const int rc = llc_target_attach(getppid(), NULL, &u, e, sizeof(e));
            _exit(rc == -EPERM && strstr(e, "not permitted") ? 0 : 1);
        }
        assert_int_equal(waitpid(c, &status, 0), c);
        assert_true(WIFEXITED(status));
        assert_int_equal(WEXITSTATUS(status), 0);
    }
}

static void test_inherit_fds_and_shared_group(void **state)
{
    (void)state;
    int p[2];
    assert_int_equal(pipe2(p, O_CLOEXEC), 0);
    char script[64];
    snprintf(script, sizeof(script), "echo through >&%d", p[1]);
    struct llc_target_options o = plain();
    o.inherit_fds = &p[1];
    o.n_inherit_fds = 1;
    o.share_pgroup = true;
    char *argv[] = {"sh", "-c", script, NULL};
    struct llc_target *t = NULL;
    char err[LLC_ERRLEN] = "";
    assert_int_equal(llc_target_launch(argv, &o, &t, err, sizeof(err)), 0);
    assert_int_equal(llc_target_info(t)->pgid, getpgrp());
    assert_int_equal(getpgid(llc_target_info(t)->pid), getpgrp());
    assert_int_equal(llc_target_start(t, err, sizeof(err)), 0);
    struct llc_target_status st;
    assert_int_equal(llc_target_wait(t, 5000, &st, err, sizeof(err)), 1);
    assert_int_equal(st.exit_code, 0);
    llc_target_destroy(t);
    close(p[1]);
    char buf[32] = "";
    assert_int_equal(read(p[0], buf, sizeof(buf) - 1), 8);
    assert_string_equal(buf, "through\n");
    close(p[0]);
    /* The descriptor stays close-on-exec in the launcher itself. */
    assert_no_children();
}

static void test_die_with_parent(void **state)
{
    (void)state;
    assert_int_equal(prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
    int p[2];
    assert_int_equal(pipe(p), 0);
    const pid_t launcher = fork();
    assert_true(launcher >= 0);
    if (launcher == 0) {
        /* Launches and dies without stopping its target. */
        struct llc_target_options o = plain();
        o.die_with_parent = true;
        char *argv[] = {"sleep", "30", NULL};
        struct llc_target *t = NULL;
        char err[LLC_ERRLEN];
        if (llc_target_launch(argv, &o, &t, err, sizeof(err)) != 0 ||
            llc_target_start(t, err, sizeof(err)) != 0)
            _exit(1);
        const pid_t pid = llc_target_info(t)->pid;
        (void)!write(p[1], &pid, sizeof(pid));
        _exit(0);
    }
    close(p[1]);
    pid_t target = -1;
    assert_int_equal(read(p[0], &target, sizeof(target)), sizeof(target));
    close(p[0]);
    int status;
    assert_int_equal(waitpid(launcher, &status, 0), launcher);
    assert_int_equal(waitpid(target, &status, 0), target);
    assert_true(WIFSIGNALED(status));
    assert_int_equal(WTERMSIG(status), SIGKILL);
    assert_no_children();
    prctl(PR_SET_CHILD_SUBREAPER, 0);
}

static int setup(void **state)
{
    (void)state;
    return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
    return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_exit_codes),
        cmocka_unit_test(test_errors_before_any_child),
        cmocka_unit_test(test_exec_failure_reported_by_start),
        cmocka_unit_test(test_held_until_started),
        cmocka_unit_test(test_stop_kills_group),
        cmocka_unit_test(test_emergency_stop),
        cmocka_unit_test(test_output_to_file),
        cmocka_unit_test(test_pinning),
        cmocka_unit_test(test_sudo_user),
        cmocka_unit_test(test_attach),
        cmocka_unit_test(test_attach_restores_affinity),
        cmocka_unit_test(test_inherit_fds_and_shared_group),
        cmocka_unit_test(test_die_with_parent),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
