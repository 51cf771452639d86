/* Opening and closing a session; what both set-ups share. */
#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "session/session_internal.h"

void llc_session_config_default(struct llc_session_config *c)
{
    memset(c, 0, sizeof(*c));
    c->cmd = "map";
    c->backend = "auto";
    c->sweeps = 2;
    c->seed = 1;
    c->target_rate = 0.01;
    c->noise_rate = 0.01;
    c->attach_pid = -1;
}

/* `llcprobe: <cmd>: ...`, or `llcprobe: warning: ...` without a cmd. */
static void vline(FILE *f, const char *cmd, const char *fmt, va_list ap)
{
    if (!f)
        return;
    fprintf(f, "llcprobe: %s: ", cmd ? cmd : "warning");
    vfprintf(f, fmt, ap);
    fputc('\n', f);
}

void llc_session_note(const struct llc_session *s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vline(s->cfg.log, s->cfg.cmd, fmt, ap);
    va_end(ap);
}

void llc_session_warn(const struct llc_session *s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vline(s->cfg.log, NULL, fmt, ap);
    va_end(ap);
}

int llc_session_fail_code(int rc)
{
    return rc == LLC_SESSION_EUSAGE ? -EIO : rc;
}

const char *llc_session_default_prefix(const struct llc_session_config *c, char *buf, size_t len)
{
    const bool sim = c->backend && strcmp(c->backend, "sim") == 0;
    const char *src = c->argv ? c->argv[0] : sim ? c->trace : "attached";
    if (!src) {
        /* A workload spec: its kind ("gaussian:size=..." -> "gaussian"). */
        snprintf(buf, len, "%s", c->workload ? c->workload : "workload");
        buf[strcspn(buf, ":")] = '\0';
        return buf;
    }
    char copy[4096];
    snprintf(copy, sizeof(copy), "%s", src);
    snprintf(buf, len, "%s", basename(copy));
    char *dot = sim ? strstr(buf, ".trace") : NULL;
    if (dot && dot != buf)
        *dot = '\0';
    return buf;
}

int llc_session_open(const struct llc_session_config *config, struct llc_session **out, char *err,
                     size_t errlen)
{
    *out = NULL;
    struct llc_session *s = calloc(1, sizeof(*s));
    if (!s)
        return llc_errf(err, errlen, -ENOMEM, "out of memory");
    s->cfg = *config;
    if (!s->cfg.cmd)
        s->cfg.cmd = "session";
    if (!s->cfg.backend)
        s->cfg.backend = "auto";
    s->info.sim = strcmp(s->cfg.backend, "sim") == 0;
    s->info.machine = s->machine;
    s->info.target = s->target;
    const int rc =
        s->info.sim ? llc_session_open_sim(s, err, errlen) : llc_session_open_hw(s, err, errlen);
    if (rc < 0) {
        llc_session_close(s);
        return rc;
    }
    s->info.backend = s->b->name;
    s->info.mode = s->cfg.mode;
    s->info.dwell_s = s->cfg.dwell_s;
    s->info.rate = s->cfg.rate;
    s->info.delay_nops = s->cfg.delay_nops;
    s->info.seed = s->cfg.seed;
    s->info.baseline = s->baseline;
    *out = s;
    return 0;
}

void llc_session_close(struct llc_session *s)
{
    if (!s)
        return;
    if (s->info.sim)
        llc_session_close_sim(s);
    else
        llc_session_close_hw(s);
    llc_map_backend_release(s->b);
    llc_map_baseline_free(s->baseline);
    free(s);
}

const struct llc_session_info *llc_session_info(const struct llc_session *s)
{
    return &s->info;
}

struct llc_map_backend *llc_session_backend(struct llc_session *s)
{
    return s->b;
}

unsigned llc_session_target_runs(const struct llc_session *s)
{
    if (s->info.sim)
        return s->b ? llc_map_sim_target_runs(s->b) : 0;
    return s->h.runs;
}
