/* Synthetic workloads: seeded generators of memory access streams
 * (address, is_write), created from a one-line spec string.
 *
 * Spec grammar (strict: unknown kinds or keys, missing required keys, bad
 * numbers and out-of-range values are errors with a one-line message):
 *
 *   spec    := kind ":" key "=" value ("," key "=" value)*
 *            | "phased:" phase (";" phase)*
 *   phase   := spec "@" length          (length in accesses, e.g. 2e6)
 *
 *   uniform:size=S                   every line of S bytes equally likely
 *   stream:size=S[,stride=B]         sequential sweep, B bytes apart (default
 *                                    64), wrapping around at S
 *   zipf:size=S,alpha=A              line of popularity rank k drawn with
 *                                    probability ~ 1/k^A (A > 0); ranks are
 *                                    scattered over the footprint by a seeded
 *                                    bijection
 *   hotsets:size=S,frac=F,weight=P   a seeded random fraction F of the LLC sets
 *                                    receives a fraction P of the accesses
 *   gaussian:size=S,cv=C             each LLC set gets an intensity drawn from
 *                                    N(1, sigma^2) cut at 0 (redrawn while
 *                                    <= 0), sigma chosen so that the cut
 *                                    distribution's coefficient of variation
 *                                    is C: the per-set access counts have CV
 *                                    ~C. C in [0, 0.7] (a positive Gaussian
 *                                    tends to the half-normal, CV 0.756)
 *   phased:SPEC@N;SPEC@N;...         the phases in order, N accesses each,
 *                                    repeating from the first after the last
 *   every kind also takes write=W    probability that an access is a write
 *                                    (default 0)
 *
 * Sizes take K/M/G suffixes (binary). Line size is 64 bytes unless the cache
 * geometry given at creation says otherwise.
 *
 * Address spaces. uniform, stream and zipf emit VIRTUAL addresses of one
 * contiguous region (starting at LLC_WORKLOAD_VBASE); the simulator's page
 * allocator maps them to scattered physical frames, exactly like an OS.
 * hotsets and gaussian are shaped PER LLC SET, and with 4 KiB pages the page
 * allocator would scatter a virtual shape over the sets (and even 2 MiB pages
 * leave the slice to the frame number through the slice hash). So they are
 * PHYSICAL-mode generators: they are built against the cache geometry, pick a
 * set first (alias table over the set intensities) and then one of the
 * footprint's lines of that set, and emit physical addresses inside
 * [phys_base, phys_base + region). The driver gives each physical-mode agent a
 * private physical region outside the page allocator's memory, so its lines
 * never alias another agent's frames. The per-set shape is therefore exact
 * for any page size, replacement policy or slice hash.
 *
 * A phased workload has one address space: its phases must be all virtual or
 * all physical. Phase i gets its own region (offset i * LLC_WORKLOAD_PHASE_GAP)
 * so phases do not share data; a phase that comes round again finds its own
 * data where it left it.
 */
#ifndef LLCPROBE_WORKLOAD_H
#define LLCPROBE_WORKLOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct llc_sim_geometry; /* include/llcprobe/sim.h */

/* Start of the virtual region of a virtual-mode workload (2 MiB aligned). */
#define LLC_WORKLOAD_VBASE ((uint64_t)1 << 32)
/* Distance between the regions of consecutive phases of a phased workload. */
#define LLC_WORKLOAD_PHASE_GAP ((uint64_t)1 << 36)
/* Largest footprint of a set-shaped (physical) workload: its line table
 * costs 4 bytes per line. */
#define LLC_WORKLOAD_MAX_SET_SHAPED_BYTES ((uint64_t)1 << 30)
/* Largest footprint of any workload. */
#define LLC_WORKLOAD_MAX_BYTES ((uint64_t)1 << 36)
/* Most phases in a phased workload. */
#define LLC_WORKLOAD_MAX_PHASES 32

struct llc_workload;

/* What a generator is built against. geometry may be NULL for virtual-mode
 * workloads (line size 64); set-shaped ones fail without it. */
struct llc_workload_target {
    const struct llc_sim_geometry *geometry;
    uint64_t phys_base; /* start of this generator's physical region */
};

/* Validates a spec without building anything (no geometry needed).
 * 0 or -EINVAL with a message naming the offending part. */
int llc_workload_check(const char *spec, char *err, size_t errlen);

/* Builds a generator. 0, -EINVAL (bad spec, set-shaped without geometry) or
 * -ENOMEM, with a message. */
int llc_workload_create(const char *spec, const struct llc_workload_target *target, uint64_t seed,
                        struct llc_workload **out, char *err, size_t errlen);
void llc_workload_destroy(struct llc_workload *w);

/* Fills addrs[0..n) with the next n accesses (and is_write[0..n), 1 for a
 * write, if is_write is non-NULL). Synthetic streams never end: returns n. */
size_t llc_workload_fill(struct llc_workload *w, uint64_t *addrs, uint8_t *is_write, size_t n);

/* true if the addresses are physical (set-shaped workloads). */
bool llc_workload_is_physical(const struct llc_workload *w);
/* Bytes of distinct data the workload touches (sum over phases), and the
 * extent of its address region from its base (what a caller must reserve). */
uint64_t llc_workload_footprint(const struct llc_workload *w);
uint64_t llc_workload_extent(const struct llc_workload *w);
/* Accesses emitted so far. */
uint64_t llc_workload_emitted(const struct llc_workload *w);
/* Index of the phase the next access belongs to (0 if not phased). */
unsigned llc_workload_phase(const struct llc_workload *w);

/* Multi-line help text describing every kind (for --help / --list-workloads). */
const char *llc_workload_help(void);

#endif
