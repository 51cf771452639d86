/* The reuse profile file: what the instrumented runtime (libllcprobe-rt)
 * and the QEMU plugin write and `llcprobe mrc` reads -- sampled reuse
 * distances (llcprobe/statmodel.h's histogram) and, with windows, the
 * per-window code signatures of `mrc --phases`. */
#ifndef LLCPROBE_REUSEFILE_H
#define LLCPROBE_REUSEFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "llcprobe/phase.h"
#include "llcprobe/statmodel.h"

/* Text, one "key value" per line in this order, then the histogram in
 * statmodel's serialisation (llc_statmodel_hist_format), then (version 2)
 * the per-window data of `mrc --phases`:
 *
 *     llcprobe-rt-profile 2
 *     rate 0.0001
 *     seed 1
 *     refs 123456789
 *     samples 12346
 *     lines 40321                                 (optional: distinct lines, exact)
 *     threads 1
 *     command ./app arg
 *     rdhist 1 inf=17 0:3 ...
 *     windows 1000000 400 124 12346 complete      (or: windows off)
 *     w 0 1000000 398 c0 c1 ... c31               (one line per window)
 *     s 0 1234                                    (one per sample: window, distance|inf)
 *
 * windows: references per window, code addresses sampled per window for the
 * signature, window and sample lines that follow, and "truncated" if the
 * runtime's memory cap stopped the recording (then --phases refuses it).
 * A window line: thread index, references, code addresses sampled, and how
 * many fell in each llc_phase_hash_ip bucket. Windows are in the order they
 * ended; each thread's last (partial) window comes after the others.
 * Version 1 profiles (no windows line) still load. */
#define LLC_REUSEFILE_MAGIC_V1 "llcprobe-rt-profile 1"
#define LLC_REUSEFILE_MAGIC "llcprobe-rt-profile 2"

struct llc_reusefile_info {
    double rate;
    uint64_t seed;
    uint64_t refs;    /* references executed by all sampled threads */
    uint64_t samples; /* samples taken, finite + dangling */
    uint64_t lines;   /* distinct lines referenced, exact; 0: not counted */
    uint64_t threads; /* threads that were sampled */
    char command[1024];
    unsigned version; /* of the file read */
};

/* One window of references of one thread. */
struct llc_reusefile_window {
    uint32_t thread;
    uint32_t pcs;                       /* code addresses sampled in it */
    uint64_t refs;                      /* references in it */
    uint32_t counts[LLC_PHASE_BUCKETS]; /* sampled code addresses per bucket */
};

#define LLC_REUSEFILE_NEVER_REUSED UINT64_MAX
struct llc_reusefile_sample {
    uint64_t window;   /* index into windows[] of the window it was taken in */
    uint64_t distance; /* LLC_REUSEFILE_NEVER_REUSED: dangling */
};

struct llc_reusefile_windows {
    uint64_t length;         /* references per window; 0: recorded without windows */
    uint32_t pcs_per_window; /* signature samples aimed at per window */
    bool complete;           /* false: the runtime's cap stopped the recording */
    size_t n_windows, n_samples;
    struct llc_reusefile_window *windows;
    struct llc_reusefile_sample *samples;
};
void llc_reusefile_windows_free(struct llc_reusefile_windows *w);

/* Writes the profile to f (w NULL or w->length 0: "windows off"); -EIO if
 * the stream fails, -ENOMEM. */
int llc_reusefile_write(FILE *f, const struct llc_reusefile_info *info,
                        const struct llc_statmodel_hist *h, const struct llc_reusefile_windows *w,
                        char *err, size_t errlen);
/* Parses a profile; strict (every key once, in order, numbers checked,
 * samples equal to the histogram's total, windows consistent with the
 * header). h is replaced; w (may be NULL: windows checked, then dropped)
 * gets the windows, length 0 if there are none. Errors name the file and
 * the line. */
int llc_reusefile_parse(const char *text, const char *name, struct llc_reusefile_info *info,
                        struct llc_statmodel_hist *h, struct llc_reusefile_windows *w, char *err,
                        size_t errlen);
int llc_reusefile_read(const char *path, struct llc_reusefile_info *info,
                       struct llc_statmodel_hist *h, struct llc_reusefile_windows *w, char *err,
                       size_t errlen);

/* Windows of references of a profile with windows, unless the run says
 * otherwise. 100 k: on scripts/eval-mrc.sh's traces a 1 M window (phase --trace's)
 * cannot separate a short sort from the walk before it (walk+qsort 64 KiB:
 * per-phase MAE 0.0163 / 0.0184 at 1 M, 0.0145 / 0.0163 at 100 k; 1 MiB:
 * 0.0041 / 0.0040, 0.0035 / 0.0035), and the stationary xz stream is the
 * same at both (0.0099 / 0.0082, 0.0101 / 0.0086). */
#define LLC_REUSEFILE_WINDOW_DEFAULT 100000

/* Carried by every program linked with the runtime: `llcprobe mrc` looks
 * for it before running a program under the runtime. */
#define LLC_REUSEFILE_RT_MARKER "llcprobe-rt runtime marker v1"

#endif
