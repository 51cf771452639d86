/* Machine discovery: what the caches look like and what this process may
 * use to measure them.
 *
 * Everything the stress probe needs is a plain struct filled by a function:
 * cache geometry from sysfs (`<root>/devices/system/cpu/cpuN/cache/indexM`),
 * cross-checked against CPUID (leaf 4 on Intel, 0x8000001D on AMD), the
 * hierarchy kind (inclusive / exclusive victim / non-inclusive) with the
 * reason it was decided, hugepage facilities, the pagemap check, the LLC-miss
 * event libpfm4 encodes for this CPU and whether it opens, the timing clock,
 * and which counter backend `auto` picks.
 *
 * A sysfs root parameter and CPUID dumps (raw leaf values, see
 * llc_cpuid_dump_parse) let every decoding step run on fixtures. Whatever is
 * unavailable comes with a one-sentence reason, never just "no".
 */
#ifndef LLCPROBE_SYSINFO_H
#define LLCPROBE_SYSINFO_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define LLC_SYSINFO_REASON_LEN 320

/* ---- CPU sets ------------------------------------------------------------ */

#define LLC_CPUSET_MAX 1024
struct llc_cpuset {
    uint64_t bits[LLC_CPUSET_MAX / 64];
};

/* Parses a kernel CPU list ("0-3,8,10-11", may end in a newline). Empty
 * lists are valid. -EINVAL on syntax errors, -ERANGE beyond LLC_CPUSET_MAX. */
int llc_cpuset_parse(const char *list, struct llc_cpuset *out, char *err, size_t errlen);
/* Formats as a kernel CPU list ("0-3,8"); "" for an empty set. */
const char *llc_cpuset_format(const struct llc_cpuset *s, char *buf, size_t len);
unsigned llc_cpuset_count(const struct llc_cpuset *s);
bool llc_cpuset_has(const struct llc_cpuset *s, unsigned cpu);
void llc_cpuset_add(struct llc_cpuset *s, unsigned cpu);
bool llc_cpuset_equal(const struct llc_cpuset *a, const struct llc_cpuset *b);
/* Lowest CPU in the set, or -1 if empty. */
int llc_cpuset_first(const struct llc_cpuset *s);

/* ---- CPUID --------------------------------------------------------------- */

struct llc_cpuid_leaf {
    uint32_t leaf, subleaf;
    uint32_t eax, ebx, ecx, edx;
};

#define LLC_CPUID_MAX_LEAVES 256
/* Raw CPUID values: from this CPU (llc_cpuid_dump_live) or from a text dump.
 * Leaves absent from a dump read as absent, not as zero. */
struct llc_cpuid_dump {
    unsigned n;
    struct llc_cpuid_leaf leaves[LLC_CPUID_MAX_LEAVES];
};

/* Dump text format (that of `cpuid -r -1`, so real machines' dumps can be
 * pasted): one leaf per line,
 *     0x00000004 0x01: eax=0x04000122 ebx=0x01c0003f ecx=0x0000003f edx=0x00000000
 * leading blanks ignored; blank lines, lines starting with '#' and a
 * "CPU n:" header are skipped; a second "CPU n:" header ends the dump (only
 * the first CPU is read). Malformed lines are errors naming the line. */
int llc_cpuid_dump_parse(const char *text, struct llc_cpuid_dump *out, char *err, size_t errlen);
int llc_cpuid_dump_read(const char *path, struct llc_cpuid_dump *out, char *err, size_t errlen);
/* Executes CPUID for the leaves llcprobe decodes. -ENOTSUP off x86. */
int llc_cpuid_dump_live(struct llc_cpuid_dump *out, char *err, size_t errlen);
/* Writes a dump in the text format above. */
int llc_cpuid_dump_write(const struct llc_cpuid_dump *d, FILE *out);
/* The leaf, or NULL when the dump does not hold it. */
const struct llc_cpuid_leaf *llc_cpuid_get(const struct llc_cpuid_dump *d, uint32_t leaf,
                                           uint32_t subleaf);

enum llc_cpu_vendor { LLC_VENDOR_UNKNOWN = 0, LLC_VENDOR_INTEL, LLC_VENDOR_AMD };
enum llc_cache_type {
    LLC_CACHE_NULL = 0,
    LLC_CACHE_DATA,
    LLC_CACHE_INSTRUCTION,
    LLC_CACHE_UNIFIED
};

/* One cache as CPUID describes it (deterministic cache parameters). */
struct llc_cpuid_cache {
    unsigned level;
    enum llc_cache_type type;
    unsigned ways, partitions, line_size, sets;
    uint64_t size;        /* ways * partitions * line_size * sets */
    bool inclusive;       /* EDX bit 1 */
    unsigned max_sharing; /* EAX[25:14] + 1: logical processor IDs sharing it */
    uint32_t subleaf;     /* where it was found, for reasons */
};

#define LLC_SYSINFO_MAX_CACHES 8
struct llc_cpu_info {
    enum llc_cpu_vendor vendor;
    char vendor_id[13];               /* "GenuineIntel" */
    char brand[49];                   /* leaves 0x80000002-4, trimmed; "" if absent */
    unsigned family, model, stepping; /* display values (extended fields folded in) */
    bool hypervisor;                  /* leaf 1 ECX bit 31 */
    char hypervisor_id[13];           /* leaf 0x40000000 ("KVMKVMKVM"), "" if unknown */
    unsigned perfmon_version;         /* Intel leaf 0xA EAX[7:0]; 0 = none exposed */
    bool has_tsc;                     /* leaf 1 EDX bit 4 */
    bool has_rdtscp;                  /* 0x80000001 EDX bit 27 */
    /* lfence waits for every earlier instruction before later ones start:
     * always on Intel; on AMD when 0x80000021 EAX bit 2 says so (the kernel
     * sets the MSR on Zen). Lets lfence;rdtsc replace rdtscp. */
    bool lfence_serializing;
    bool invariant_tsc; /* 0x80000007 EDX bit 8 */
    uint64_t tsc_hz;    /* from leaf 0x15 or 0x40000010; 0 = not in CPUID */
    char tsc_hz_source[64];
    /* Cache leaf used: 4 (Intel), 0x8000001D (AMD), 0x80000006 (AMD's
     * legacy leaves 0x80000005/6: no sharing or inclusiveness, and ways and
     * sets 0 where the associativity is not given), 0 if none. */
    uint32_t cache_leaf;
    unsigned n_caches;
    struct llc_cpuid_cache caches[LLC_SYSINFO_MAX_CACHES];
};

/* Decodes vendor, model, features and the cache leaves. Missing leaves leave
 * fields zero; -EINVAL only when leaf 0 itself is absent. */
int llc_cpuid_decode(const struct llc_cpuid_dump *d, struct llc_cpu_info *out, char *err,
                     size_t errlen);
const char *llc_cache_type_name(enum llc_cache_type t);
const char *llc_cpu_vendor_name(enum llc_cpu_vendor v);

/* ---- Caches from sysfs --------------------------------------------------- */

#define LLC_SYSINFO_MAX_DOMAINS 64
struct llc_sysfs_cache {
    unsigned index; /* indexN in sysfs */
    unsigned level;
    enum llc_cache_type type;
    uint64_t size; /* bytes */
    unsigned ways, sets, line_size, partitions;
    /* Distinct instances over the online CPUs, each as the CPUs sharing it.
     * domains[0] holds the lowest online CPU. */
    unsigned n_domains;
    struct llc_cpuset domains[LLC_SYSINFO_MAX_DOMAINS];
};

struct llc_cache_topo {
    struct llc_cpuset online;
    unsigned n_caches; /* ordered by level, then data/instruction/unified */
    struct llc_sysfs_cache caches[LLC_SYSINFO_MAX_CACHES];
    /* Number of uncore_cbox_N / uncore_cha_N PMUs under
     * <root>/bus/event_source/devices: one per Intel LLC slice. 0 = none. */
    unsigned uncore_slice_pmus;
    char uncore_slice_kind[16]; /* "uncore_cbox", "uncore_cha" or "" */
    /* Where the cache list came from: false = sysfs; true = CPUID, because
     * this kernel exposes no cpuN/cache (some VMs); source_note says so and
     * what was assumed about sharing. */
    bool from_cpuid;
    char source_note[LLC_SYSINFO_REASON_LEN];
};

/* Reads <sysfs_root>/devices/system/cpu (sysfs_root is "/sys" on a live
 * machine). Geometry comes from the lowest online CPU; sharing domains from
 * every online CPU. Missing or malformed files are errors naming the file. */
int llc_sysfs_read_caches(const char *sysfs_root, struct llc_cache_topo *out, char *err,
                          size_t errlen);
/* Returned by llc_sysfs_read_caches when the online list was read but the
 * lowest CPU has no cache directory (the kernel exposes no cacheinfo). */
#define LLC_SYSFS_NO_CACHE_DIR (-ENODATA)

/* The cache list from CPUID when sysfs has none: every CPUID cache, L1 and
 * L2 assumed private to each online CPU and the highest level shared by all
 * (CPUID's legacy leaves say nothing of sharing; the note says so).
 * `topo->online` must already be set. -ENOENT if CPUID lists no caches. */
int llc_cache_topo_from_cpuid(const struct llc_cpu_info *cpu, struct llc_cache_topo *topo,
                              char *err, size_t errlen);

/* ---- The LLC and the hierarchy above it ---------------------------------- */

enum llc_hierarchy {
    LLC_HIER_UNKNOWN = 0,
    LLC_HIER_INCLUSIVE,        /* LLC holds every line of the levels above */
    LLC_HIER_EXCLUSIVE_VICTIM, /* LLC filled by evictions from L2 (AMD Zen L3) */
    LLC_HIER_NON_INCLUSIVE,    /* neither guaranteed (Intel Skylake-SP onward) */
};
const char *llc_hierarchy_name(enum llc_hierarchy h);

/* One disagreement between sysfs and CPUID, or an inconsistent sysfs entry
 * (size != ways * partitions * line * sets, then cpuid_value is the product). */
struct llc_geometry_mismatch {
    unsigned level;
    enum llc_cache_type type;
    char field[24];
    uint64_t sysfs_value, cpuid_value;
};

#define LLC_SYSINFO_MAX_MISMATCHES 16
struct llc_geometry {
    /* The last-level cache (highest level, unified). */
    unsigned level;
    uint64_t size;
    unsigned ways, sets, line_size, partitions;
    struct llc_cpuset shared;  /* CPUs sharing the LLC instance of the lowest CPU */
    unsigned n_domains;        /* LLC instances on the machine */
    unsigned cores_per_domain; /* distinct L2 (else L1d) instances in `shared` */
    /* The unified level just above the LLC (usually L2), 0s if none. The
     * probe's walk length depends on its ways and size. */
    unsigned upper_level, upper_ways, upper_sets;
    uint64_t upper_size;
    enum llc_hierarchy hierarchy;
    char hierarchy_reason[LLC_SYSINFO_REASON_LEN];
    unsigned slices; /* 0 = unknown */
    char slices_reason[LLC_SYSINFO_REASON_LEN];
    bool cpuid_checked;                       /* geometry compared with CPUID */
    char cpuid_check[LLC_SYSINFO_REASON_LEN]; /* what was compared, or why not */
    unsigned n_mismatches;
    struct llc_geometry_mismatch mismatches[LLC_SYSINFO_MAX_MISMATCHES];
};

/* Picks the LLC, derives the hierarchy and slices, cross-checks every level
 * with CPUID. cpu may be NULL (no CPUID: hierarchy unknown, said why).
 * -ENOENT if sysfs lists no unified cache. */
int llc_geometry_derive(const struct llc_cache_topo *topo, const struct llc_cpu_info *cpu,
                        struct llc_geometry *out, char *err, size_t errlen);

/* ---- hwloc --------------------------------------------------------------- */

struct llc_hwloc_llc {
    bool ok;
    char reason[LLC_SYSINFO_REASON_LEN]; /* why not, when !ok */
    unsigned level;                      /* cache depth of the LLC objects */
    uint64_t size;
    unsigned n_llc;        /* LLC objects in the topology */
    struct llc_cpuset pus; /* PUs (OS indexes) under the first LLC */
    unsigned cores;        /* hwloc cores under the first LLC */
};
/* Loads the live topology, or an hwloc XML export when xml_path is set. */
void llc_hwloc_llc_query(const char *xml_path, struct llc_hwloc_llc *out);

/* ---- Hugepages ----------------------------------------------------------- */

enum llc_huge_attempt {
    LLC_HUGE_NOT_TRIED = 0,
    LLC_HUGE_MAPPED, /* mmap(MAP_HUGETLB) + touch + munmap succeeded */
    LLC_HUGE_FAILED,
};

struct llc_hugepage_size {
    uint64_t size;                                       /* bytes */
    uint64_t total, free, surplus, reserved, overcommit; /* pages, from sysfs */
    bool libhugetlbfs_lists;                             /* gethugepagesizes() reports this size */
    char mount[256]; /* a hugetlbfs mount for this size, "" if none */
    enum llc_huge_attempt attempt;
    bool reserved_temporarily; /* we raised nr_hugepages for the attempt */
    bool restored;             /* nr_hugepages put back (when raised) */
    int map_errno;
    char detail[LLC_SYSINFO_REASON_LEN]; /* exactly what happened */
};

#define LLC_SYSINFO_MAX_HUGE_SIZES 4
struct llc_hugepages {
    bool live; /* libhugetlbfs queried and mapping tried */
    unsigned n;
    struct llc_hugepage_size sizes[LLC_SYSINFO_MAX_HUGE_SIZES]; /* ascending */
    char reason[LLC_SYSINFO_REASON_LEN];                        /* when n == 0 */
};

/* Reads <sysfs_root>/kernel/mm/hugepages/hugepages-NkB. With try_map (the
 * root is this machine's), asks libhugetlbfs about sizes and mounts and tries
 * to map one page of each size; if none is free and allow_reserve (and we may
 * write nr_hugepages), reserves one temporarily and restores the previous
 * value on every path. */
int llc_hugepages_query(const char *sysfs_root, bool try_map, bool allow_reserve,
                        struct llc_hugepages *out, char *err, size_t errlen);

/* ---- pagemap ------------------------------------------------------------- */

struct llc_pagemap_check {
    bool tried;
    bool readable;       /* /proc/self/pagemap opened and read */
    bool frames;         /* real (non-zero) frame numbers */
    bool guest_physical; /* frames are a VM guest's, not the host's */
    uint64_t sample_pfn;
    char reason[LLC_SYSINFO_REASON_LEN];
};
/* Touches a page, reads its pagemap entry. */
void llc_pagemap_check(bool hypervisor, struct llc_pagemap_check *out);

/* ---- PMU ----------------------------------------------------------------- */

/* What the pmu backend would count, and whether it can. */
struct llc_pmu_check {
    bool pfm_ok;
    char pfm_error[128];
    bool forced;  /* LIBPFM_FORCE_PMU was set */
    char pmu[64]; /* libpfm name of the core PMU, "" if none */
    char pmu_desc[128];
    char event[160];      /* "skl::MEM_LOAD_RETIRED:L3_MISS" */
    char event_note[160]; /* what the event counts */
    bool encoded;
    char encode_error[128];
    uint32_t type; /* perf_event_attr fields of the encoding */
    uint64_t config, config1, config2;
    char fstr[320]; /* libpfm's fully qualified event string */
    bool open_tried, opened;
    int open_errno;
    char reason[LLC_SYSINFO_REASON_LEN]; /* one sentence: usable, or why not */
};

/* The LLC-miss event for a libpfm core PMU name ("snb", "skl",
 * "amd64_fam19h_zen3", ...), NULL when the table has none. note gets what
 * the event counts. */
const char *llc_pmu_llc_miss_event(const char *pmu, const char **note);
/* Initialises libpfm4 (which honours LIBPFM_FORCE_PMU), finds the core PMU,
 * picks and encodes the LLC-miss event (user mode), and terminates libpfm.
 * With try_open, perf_event_opens it on this thread and records errno; cpu
 * (may be NULL) only sharpens the reason given. */
void llc_pmu_check(const struct llc_cpu_info *cpu, bool try_open, struct llc_pmu_check *out);

/* ---- Timing clock -------------------------------------------------------- */

struct llc_clock_check {
    bool tsc, rdtscp, lfence_serializing, invariant_tsc;
    /* The timing backend can run: a TSC and either rdtscp or a serialising
     * lfence to fence rdtsc with (the timing code uses lfence;rdtsc, which
     * both allow). */
    bool usable;
    uint64_t tsc_hz; /* 0 = unknown */
    char tsc_hz_source[96];
    char reason[LLC_SYSINFO_REASON_LEN];
};
/* From decoded CPUID; with measure, /proc/cpuinfo and a 20 ms comparison
 * against CLOCK_MONOTONIC fill the frequency when CPUID has none. */
void llc_clock_check(const struct llc_cpu_info *cpu, bool measure, struct llc_clock_check *out);

/* ---- Backend choice ------------------------------------------------------ */

enum llc_backend { LLC_BACKEND_NONE = 0, LLC_BACKEND_PMU, LLC_BACKEND_TIMING, LLC_BACKEND_SIM };
const char *llc_backend_name(enum llc_backend b);

struct llc_backend_choice {
    enum llc_backend backend;
    char reason[2 * LLC_SYSINFO_REASON_LEN];
};
/* auto: pmu if the LLC-miss event opened, else timing if the clock is
 * usable, else none. */
void llc_backend_choose(const struct llc_pmu_check *pmu, const struct llc_clock_check *clock,
                        struct llc_backend_choice *out);

/* ---- Everything at once -------------------------------------------------- */

struct llc_sysinfo_options {
    const char *sysfs_root; /* NULL = "/sys" */
    const char *cpuid_dump; /* NULL = execute CPUID */
    const char *hwloc_xml;  /* NULL = live topology */
    /* Probes that act on this process (hugepage mapping, pagemap,
     * perf_event_open, TSC measurement). Off when describing fixtures. */
    bool live;
    bool allow_hugepage_reserve;
};

struct llc_sysinfo {
    bool live;
    char sysfs_root[336];
    char cpuid_source[256]; /* "cpuid instruction" or the dump path */
    bool cpu_ok;
    char cpu_reason[LLC_SYSINFO_REASON_LEN];
    struct llc_cpu_info cpu;
    struct llc_cache_topo topo;
    bool geometry_ok;
    char geometry_reason[LLC_SYSINFO_REASON_LEN];
    struct llc_geometry geometry;
    struct llc_hwloc_llc hwloc;
    struct llc_hugepages huge;
    struct llc_pagemap_check pagemap;
    struct llc_pmu_check pmu;
    struct llc_clock_check clock;
    struct llc_backend_choice backend;
};

/* Fills *out (large: allocate it). Fails only when the sysfs cache tree
 * cannot be read; everything else unavailable is recorded with its reason. */
int llc_sysinfo_collect(const struct llc_sysinfo_options *opt, struct llc_sysinfo *out, char *err,
                        size_t errlen);

#endif
