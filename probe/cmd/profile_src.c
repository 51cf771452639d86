/* Where `llcprobe profile` gets a program's references: a synthetic trace
 * written from a workload (for the reuse and phase samplers; the timed run
 * replays the workload itself), and a live program traced under lackey and
 * timed natively. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cmd/profile_cmd.h"
#include "llcprobe/common.h"
#include "llcprobe/corun.h"
#include "llcprobe/sim.h"
#include "llcprobe/trace.h"
#include "llcprobe/workload.h"

/* Code addresses of the synthetic program: one region per workload phase,
 * so ScarPhase tells the phases apart by their code as in a real program. */
#define SYN_CODE_BASE 0x400000ULL
#define SYN_CODE_REGION 0x10000ULL
#define SYN_CODE_LOOP 64u

int llc_profile_tmp_path(const char *suffix, char *buf, size_t len, char *err, size_t errlen)
{
    const char *dir = getenv("TMPDIR");
    snprintf(buf, len, "%s/llcprobe-profile-XXXXXX%s", dir && *dir ? dir : "/tmp", suffix);
    const int fd = mkstemps(buf, (int)strlen(suffix));
    if (fd < 0)
        return llc_errf(err, errlen, -errno, "temporary file in %s: %s", dir ? dir : "/tmp",
                        strerror(errno));
    close(fd);
    return 0;
}

int llc_profile_workload_trace(const struct llc_sim_config *cfg, const char *spec, double ipa,
                               uint64_t instructions, const char *path, volatile sig_atomic_t *stop,
                               char *err, size_t errlen)
{
    struct llc_workload *w = NULL;
    struct llc_trace_writer *tw = NULL;
    char sub[LLC_ERRLEN];
    const struct llc_workload_target t = {.geometry = &cfg->llc};
    int rc =
        llc_workload_create(spec, &t, llc_corun_stream_seed(cfg->seed, 0), &w, sub, sizeof(sub));
    if (rc < 0) {
        llc_errf(err, errlen, rc, "--workload: %s", sub);
        goto out;
    }
    struct llc_trace_info info = {.page_size = cfg->page_size, .exit_status = 0};
    snprintf(info.recorder, sizeof(info.recorder), "synthetic");
    snprintf(info.command, sizeof(info.command), "workload %s", spec);
    rc = llc_trace_writer_open(path, &info, &tw, err, errlen);
    if (rc < 0)
        goto out;
    uint64_t done = 0, k = 0;
    uint64_t addr[256];
    uint8_t wr[256];
    while (done < instructions) {
        if (stop && *stop) {
            rc = llc_errf(err, errlen, -EINTR, "interrupted");
            goto out;
        }
        const unsigned phase = llc_workload_phase(w);
        const size_t n = llc_workload_fill(w, addr, wr, 256);
        const uint64_t base = SYN_CODE_BASE + phase * SYN_CODE_REGION;
        for (size_t j = 0; j < n && done < instructions; j++, k++) {
            const uint32_t ni = llc_corun_ipa_instr(ipa, k);
            uint64_t pc = base;
            for (uint32_t m = 0; m < ni; m++) {
                pc = base + ((done + m) % SYN_CODE_LOOP) * 4;
                const struct llc_trace_rec ir = {.addr = pc, .size = 4, .kind = LLC_TRACE_INSTR};
                if ((rc = llc_trace_writer_put(tw, &ir)) < 0)
                    goto werr;
            }
            done += ni;
            const struct llc_trace_rec dr = {.addr = addr[j],
                                             .pc = pc,
                                             .size = 8,
                                             .kind = wr[j] ? LLC_TRACE_STORE : LLC_TRACE_LOAD};
            if ((rc = llc_trace_writer_put(tw, &dr)) < 0)
                goto werr;
        }
    }
    rc = llc_trace_writer_close(tw, 0, err, errlen);
    tw = NULL;
    goto out;
werr:
    llc_errf(err, errlen, rc, "%s: cannot write the synthetic trace", path);
out:
    llc_trace_writer_abort(tw);
    llc_workload_destroy(w);
    return rc;
}

int llc_profile_time_native(char *const *argv, double *cpu_s, int *status, char *err, size_t errlen)
{
    const pid_t pid = fork();
    if (pid < 0)
        return llc_errf(err, errlen, -errno, "fork: %s", strerror(errno));
    if (pid == 0) {
        execvp(argv[0], argv);
        _exit(127);
    }
    int ws = 0;
    struct rusage ru;
    while (wait4(pid, &ws, 0, &ru) < 0) {
        if (errno != EINTR)
            return llc_errf(err, errlen, -errno, "wait: %s", strerror(errno));
    }
    *status = WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
    if (WIFEXITED(ws) && WEXITSTATUS(ws) == 127)
        return llc_errf(err, errlen, -ENOENT, "%s: could not be run natively (exit 127)", argv[0]);
    *cpu_s = (double)ru.ru_utime.tv_sec + 1e-6 * (double)ru.ru_utime.tv_usec +
             (double)ru.ru_stime.tv_sec + 1e-6 * (double)ru.ru_stime.tv_usec;
    return 0;
}
