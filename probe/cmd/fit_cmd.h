/* The fit stage as `fit` runs it on a map file and `sample` runs it in-run
 * on a fresh map: report, selection, PREFIX.fit.json, plots, summary. */
#ifndef LLC_CMD_FIT_CMD_H
#define LLC_CMD_FIT_CMD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "llcprobe/fit.h"
#include "llcprobe/map.h"

struct fit_cmd_opts {
    struct llc_fit_select_config select; /* mode, points, per_point, seed */
    bool bin_integrated, plots, quiet;
    const char *prefix; /* PREFIX.fit.json, PREFIX.fit-hist.png, PREFIX.fit-map.png */
};

struct fit_cmd_input {
    const double *x;         /* per-unit statistic */
    const uint8_t *excluded; /* unmeasured units, and the map's exclusion mask unless included */
    /* Sets the map's exclusion mask names (baseline sweep, docs/METHODS.md §1.2):
     * -1 = no mask to speak of (an in-run map), else how many; whether
     * they were kept (--include-excluded) or left out. */
    long masked;
    bool masked_kept;
    size_t n;
    const double *sweep1, *sweep2; /* for the test-retest r; NULL if one sweep */
    bool raw_counts;
    const struct llc_map_geometry *geo;
    const char *source, *target, *machine, *page_size;
    uint64_t map_seed; /* the map's --seed (the simulator's page placement) */
};

/* Returns 0 with *sel (caller frees) or an exit status (1 fail) with the
 * error printed as `llcprobe: <cmd>: ...`. */
int llc_fit_cmd_run(const char *cmd, const struct fit_cmd_opts *o, const struct fit_cmd_input *in,
                    struct llc_fit_selection **sel);

/* --mode sigma2|range|quantile; -1 for anything else. */
int llc_fit_parse_key_mode(const char *s, enum llc_fit_key_mode *out);

#endif
