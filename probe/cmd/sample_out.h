/* `llcprobe sample`: the run state shared by its option parser (sample.c)
 * and its stage on a ready backend (sample_stage.c). */
#ifndef LLC_CMD_SAMPLE_OUT_H
#define LLC_CMD_SAMPLE_OUT_H

#include "cmd/fit_cmd.h"
#include "cmd/map_opts.h"
#include "llcprobe/common.h"
#include "llcprobe/mapfile.h"

enum sample_method { SAMPLE_GAUSSIAN = 0, SAMPLE_RANDOM, SAMPLE_CONTINUOUS, SAMPLE_GLOBAL, SAMPLE_SETS };

struct sample_run {
    enum sample_method method;
    struct fit_cmd_opts fit;      /* in-run fit (prefix set by the stage) */
    struct llc_fitfile *fitfile;  /* --fit, or NULL */
    uint32_t count, start;        /* --random / --continuous */
    uint32_t *sets;               /* --sets */
    size_t n_sets;
    double interval;
    unsigned intervals;
    bool have_calib;
    const char *calib_path;
    struct llc_calib calib;
    char err[LLC_ERRLEN];
};

int llc_sample_stage(const struct map_opts *o, struct llc_map_backend *b, const char *machine, const char *target,
                     double rate, volatile sig_atomic_t *stop, bool want_truth,
                     int (*restart)(void *ctx, char *err, size_t errlen), void *restart_ctx);

#endif
