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

/* The walk-length occupancy search (sample_occ.c). */
#define LLC_OCC_DEFAULT_CYCLE 0.1     /* seconds for W probe accesses in a set */
#define LLC_OCC_DEFAULT_CYCLES 2      /* measured cycles per step, after 2 warm ones */
#define LLC_OCC_DEFAULT_THRESHOLD 0.1 /* miss ratio above which a walk no longer fits */
struct llc_occ_params {
    double cycle_s;
    unsigned cycles;
    double threshold;
};
void llc_occ_params_default(struct llc_occ_params *p);
/* For units[0..n): held[i] = ways - the longest LLC walk of unit i whose
 * miss ratio stays at or below the threshold, the probe paced at
 * ways / cycle_s accesses per set per second through the backend's
 * probe_set (-ENOTSUP with the reason in err where it has none; a
 * hardware backend refuses a pace its slow idle-walk check did not pass).
 * Restores the full walk at the backend's own pace afterwards. */
int llc_occ_search(struct llc_map_backend *b, const uint32_t *units, size_t n, const struct llc_occ_params *p,
                   volatile sig_atomic_t *stop, double *held, char *err, size_t errlen);

int llc_sample_stage(const struct map_opts *o, struct llc_map_backend *b, const char *machine, const char *target,
                     double rate, volatile sig_atomic_t *stop, bool want_truth,
                     int (*restart)(void *ctx, char *err, size_t errlen), void *restart_ctx);

/* The sets of `--sets FILE|LIST` (sample.c): *out malloc'd. 0, or the exit
 * code after printing the one-line error. Also what tests/fuzz feeds. */
int llc_sample_read_sets(const char *arg, uint32_t **out, size_t *n);

#endif
