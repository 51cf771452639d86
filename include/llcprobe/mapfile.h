/* Reading llcprobe's own files back: per-set maps (format "llcprobe-map",
 * written by llc_map_write_json) and fits with their set selection
 * (format "llcprobe-fit", written by llc_fitfile_write), so that every
 * stage can run alone on a file the previous stage wrote.
 *
 * Readers validate everything they use and fail with one line that names
 * the file and the field: "a.map.json: llc.ways: missing",
 * "x.json: format: 'foo' is not llcprobe-map". Arrays must have exactly
 * the length the geometry says. Fields a reader does not use are ignored,
 * so later minor additions do not break old readers; a different major
 * "version" is refused.
 */
#ifndef LLCPROBE_MAPFILE_H
#define LLCPROBE_MAPFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "llcprobe/fit.h"
#include "llcprobe/map.h"

#define LLC_MAPFILE_FORMAT "llcprobe-map"
#define LLC_MAPFILE_VERSION 1
#define LLC_FITFILE_FORMAT "llcprobe-fit"
#define LLC_FITFILE_VERSION 1

/* ---- maps ---------------------------------------------------------------- */

struct llc_mapfile {
    char *path;
    char *machine, *target;
    char *page_size; /* the target's pages: "4K", "2M", "unknown" (also when not recorded) */
    char *backend;   /* "sim", "timing", "pmu" */
    char *policy;    /* LLC policy (sim), NULL if not recorded */
    struct llc_map_geometry geo;
    uint32_t units; /* slices * sets_per_slice (checked against llc.sets) */
    unsigned walk;
    double rate;   /* probe accesses per second */
    char mode[16]; /* "sweep", "global", "sets" */
    uint64_t seed;
    bool complete;
    unsigned sweeps;                     /* sweeps recorded */
    bool *measured;                      /* [units] */
    double *misses, *accesses, *dwell_s; /* [units] */
    double *sweep_misses;                /* [sweeps * units] */
    double *truth_occupancy;             /* [units] simulator ground truth, NULL if absent */
};

int llc_mapfile_read(const char *path, struct llc_mapfile **out, char *err, size_t errlen);
void llc_mapfile_free(struct llc_mapfile *m);

/* The per-unit statistic a fit uses (docs/METHODS.md §1.5, §2.1): raw misses when
 * every measured unit had the same dwell (integers: integer-aware bins and
 * the dispersion check apply), else misses per second of dwell. x gets
 * units values; excluded[u] = 1 for units not measured. Returns true when
 * the statistic is raw counts. */
bool llc_mapfile_statistic(const struct llc_mapfile *m, double *x, uint8_t *excluded);

/* ---- fits ---------------------------------------------------------------- */

/* What a fit file records besides the selection (llc_fitfile_write). */
struct llc_fitfile_meta {
    const char *source; /* the map file (or "in-run map") */
    const char *target, *machine;
    const struct llc_map_geometry *geo;
    bool raw_counts;       /* statistic: misses (true) or misses/s */
    double retest_r;       /* NaN if one sweep */
    const char *page_size; /* page size the target ran with, "unknown" if not known */
    long masked;           /* sets the map's exclusion mask names, -1 = no mask (in-run map) */
    bool masked_kept;      /* kept in the fit (--include-excluded) rather than left out */
    bool map_seed_known;   /* map_seed is the profile map's --seed (the simulator's placement) */
    uint64_t map_seed;
};

struct llc_fitfile {
    char *path;
    char *target, *machine, *page_size;
    struct llc_map_geometry geo;
    uint32_t units;
    bool raw_counts;
    bool map_seed_known;           /* false in files written before it was recorded */
    uint64_t map_seed;             /* the profile map's --seed */
    struct llc_fit_selection *sel; /* owned: free with llc_fitfile_free */
};

/* Writes the report and the selection as JSON (format llcprobe-fit v1). */
int llc_fitfile_write(const char *path, const struct llc_fit_report *rep,
                      const struct llc_fit_selection *sel, const struct llc_fitfile_meta *meta,
                      char *err, size_t errlen);
/* Reads back what `sample` needs: geometry and the selection (units,
 * labels, profile values, strata, mu/sigma, profile total). */
int llc_fitfile_read(const char *path, struct llc_fitfile **out, char *err, size_t errlen);
void llc_fitfile_free(struct llc_fitfile *f);

/* ---- calibrations (llcprobe calibrate) ------------------------------------ */

#define LLC_CALIBFILE_FORMAT "llcprobe-calibration"
#define LLC_CALIBFILE_VERSION 2
#define LLC_CALIB_MAX_K 65

/* A co-runner holds k congruent lines in every probed set, k = 0..ways.
 * Two curves against k: the fast probe's misses per set per second (at
 * `rate` over `probed` sets; it grows with how often lines enter a set,
 * so it is kept as data, not inverted), and the mean raw estimate of the
 * walk-length occupancy search (ways - longest walk that still hits),
 * measured with the search parameters recorded here, which `sample`
 * inverts into lines. */
struct llc_calib {
    char machine[256];
    unsigned ways, line_size;
    uint32_t units;    /* sets of the LLC */
    double rate;       /* probe accesses per second, all probed sets */
    uint32_t probed;   /* sets probed together */
    double touch_rate; /* co-runner touches per held line per second */
    size_t nk;         /* k = 0..nk-1 */
    double misses_per_set_s[LLC_CALIB_MAX_K];
    /* the walk-length search */
    double search_cycle_s;                   /* seconds between visits of a probe line */
    unsigned search_cycles;                  /* measured walks per step */
    double search_threshold;                 /* miss ratio above which a walk does not fit */
    double search_estimate[LLC_CALIB_MAX_K]; /* mean raw estimate at k */
};

int llc_calib_write(const char *path, const struct llc_calib *c, char *err, size_t errlen);
int llc_calib_read(const char *path, struct llc_calib *c, char *err, size_t errlen);
/* Lines held in a set whose walk-length search gave the raw estimate e, by
 * linear interpolation of the search_estimate curve made monotone (running
 * maximum); clamped to 0..nk-1. */
double llc_calib_lines(const struct llc_calib *c, double e);

#endif
