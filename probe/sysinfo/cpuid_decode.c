/* Decoding raw CPUID leaves into the facts llcprobe needs. Works on any
 * dump: nothing here executes CPUID. */
#include "llcprobe/sysinfo.h"

#include "llcprobe/common.h"

#include <errno.h>
#include <string.h>

const char *llc_cpu_vendor_name(enum llc_cpu_vendor v)
{
    switch (v) {
    case LLC_VENDOR_INTEL:
        return "intel";
    case LLC_VENDOR_AMD:
        return "amd";
    default:
        return "unknown";
    }
}

const char *llc_cache_type_name(enum llc_cache_type t)
{
    switch (t) {
    case LLC_CACHE_DATA:
        return "data";
    case LLC_CACHE_INSTRUCTION:
        return "instruction";
    case LLC_CACHE_UNIFIED:
        return "unified";
    default:
        return "null";
    }
}

static void regs_to_string(char *dst, uint32_t r0, uint32_t r1, uint32_t r2)
{
    memcpy(dst, &r0, 4);
    memcpy(dst + 4, &r1, 4);
    memcpy(dst + 8, &r2, 4);
    dst[12] = '\0';
}

static void decode_brand(const struct llc_cpuid_dump *d, struct llc_cpu_info *out)
{
    char raw[49] = {0};
    for (uint32_t i = 0; i < 3; i++) {
        const struct llc_cpuid_leaf *l = llc_cpuid_get(d, 0x80000002 + i, 0);
        if (!l)
            return;
        const uint32_t regs[4] = {l->eax, l->ebx, l->ecx, l->edx};
        memcpy(raw + 16 * i, regs, 16);
    }
    raw[48] = '\0';
    const char *s = raw;
    while (*s == ' ')
        s++;
    snprintf(out->brand, sizeof(out->brand), "%s", s);
    size_t n = strlen(out->brand);
    while (n > 0 && out->brand[n - 1] == ' ')
        out->brand[--n] = '\0';
}

/* Leaf 4 (Intel) and 0x8000001D (AMD) share one layout. */
static void decode_cache_leaf(const struct llc_cpuid_dump *d, uint32_t leaf,
                              struct llc_cpu_info *out)
{
    for (uint32_t sub = 0; sub < 32 && out->n_caches < LLC_SYSINFO_MAX_CACHES; sub++) {
        const struct llc_cpuid_leaf *l = llc_cpuid_get(d, leaf, sub);
        if (!l || (l->eax & 0x1f) == 0)
            break;
        struct llc_cpuid_cache *c = &out->caches[out->n_caches++];
        const unsigned type = l->eax & 0x1f;
        c->type = type == 1   ? LLC_CACHE_DATA
                  : type == 2 ? LLC_CACHE_INSTRUCTION
                              : LLC_CACHE_UNIFIED;
        c->level = (l->eax >> 5) & 0x7;
        c->max_sharing = ((l->eax >> 14) & 0xfff) + 1;
        c->line_size = (l->ebx & 0xfff) + 1;
        c->partitions = ((l->ebx >> 12) & 0x3ff) + 1;
        c->ways = ((l->ebx >> 22) & 0x3ff) + 1;
        c->sets = l->ecx + 1;
        c->size = (uint64_t)c->ways * c->partitions * c->line_size * c->sets;
        c->inclusive = (l->edx >> 1) & 1;
        c->subleaf = sub;
    }
    if (out->n_caches)
        out->cache_leaf = leaf;
}

/* AMD's associativity code in 0x80000006 (L2/L3 "assoc" fields); 0 for
 * "disabled" and for 9 ("see leaf 0x8000001D"), i.e. unknown here. */
static unsigned amd_assoc_ways(unsigned code, unsigned size_kib, unsigned line)
{
    static const unsigned ways[16] = {0, 1, 2, 3, 4, 6, 8, 0, 16, 0, 32, 48, 64, 96, 128, 0};
    if (code == 0xf && line) /* fully associative: one set */
        return (unsigned)((uint64_t)size_kib * 1024 / line);
    return ways[code & 0xf];
}

static void add_legacy_cache(struct llc_cpu_info *out, unsigned level, enum llc_cache_type type,
                             uint64_t size, unsigned ways, unsigned line, uint32_t subleaf)
{
    if (size == 0 || line == 0 || out->n_caches == LLC_SYSINFO_MAX_CACHES)
        return;
    struct llc_cpuid_cache *c = &out->caches[out->n_caches++];
    c->level = level;
    c->type = type;
    c->size = size;
    c->line_size = line;
    c->partitions = 1;
    c->ways = ways;
    c->sets = ways ? (unsigned)(size / ((uint64_t)ways * line)) : 0; /* 0: associativity unknown */
    c->subleaf = subleaf;
}

/* AMD's older cache leaves, used when 0x8000001D is absent or empty (some
 * hypervisors expose TOPOEXT but zero the leaf). 0x80000005 describes L1
 * (associativity as a plain count, 0xff = fully associative), 0x80000006 L2
 * and L3 (associativity coded). Sharing and inclusiveness are not described. */
static void decode_amd_legacy(const struct llc_cpuid_dump *d, uint32_t max_ext,
                              struct llc_cpu_info *out)
{
    const struct llc_cpuid_leaf *l5 =
        max_ext >= 0x80000005 ? llc_cpuid_get(d, 0x80000005, 0) : NULL;
    const struct llc_cpuid_leaf *l6 =
        max_ext >= 0x80000006 ? llc_cpuid_get(d, 0x80000006, 0) : NULL;
    if (l5) {
        const uint32_t regs[2] = {l5->ecx, l5->edx}; /* L1d, L1i */
        for (unsigned i = 0; i < 2; i++) {
            const unsigned kib = regs[i] >> 24, assoc = (regs[i] >> 16) & 0xff,
                           line = regs[i] & 0xff;
            const unsigned ways = assoc == 0xff && line ? kib * 1024 / line : assoc;
            add_legacy_cache(out, 1, i == 0 ? LLC_CACHE_DATA : LLC_CACHE_INSTRUCTION,
                             (uint64_t)kib * 1024, ways, line, 0);
        }
    }
    if (l6) {
        const unsigned l2_kib = l6->ecx >> 16, l2_line = l6->ecx & 0xff;
        add_legacy_cache(out, 2, LLC_CACHE_UNIFIED, (uint64_t)l2_kib * 1024,
                         amd_assoc_ways((l6->ecx >> 12) & 0xf, l2_kib, l2_line), l2_line, 0);
        const unsigned l3_kib = (l6->edx >> 18) * 512, l3_line = l6->edx & 0xff;
        add_legacy_cache(out, 3, LLC_CACHE_UNIFIED, (uint64_t)l3_kib * 1024,
                         amd_assoc_ways((l6->edx >> 12) & 0xf, l3_kib, l3_line), l3_line, 0);
    }
    if (out->n_caches)
        out->cache_leaf = 0x80000006;
}

static void decode_tsc_hz(const struct llc_cpuid_dump *d, uint32_t max_basic,
                          struct llc_cpu_info *out)
{
    const struct llc_cpuid_leaf *l15 = max_basic >= 0x15 ? llc_cpuid_get(d, 0x15, 0) : NULL;
    if (l15 && l15->eax && l15->ebx && l15->ecx) {
        out->tsc_hz = (uint64_t)l15->ecx * l15->ebx / l15->eax;
        snprintf(out->tsc_hz_source, sizeof(out->tsc_hz_source),
                 "CPUID 0x15 (crystal %u Hz * %u/%u)", l15->ecx, l15->ebx, l15->eax);
        return;
    }
    if (out->hypervisor) {
        const struct llc_cpuid_leaf *hv = llc_cpuid_get(d, 0x40000000, 0);
        const struct llc_cpuid_leaf *l = llc_cpuid_get(d, 0x40000010, 0);
        if (hv && hv->eax >= 0x40000010 && l && l->eax) {
            out->tsc_hz = (uint64_t)l->eax * 1000;
            snprintf(out->tsc_hz_source, sizeof(out->tsc_hz_source),
                     "CPUID 0x40000010 (hypervisor)");
            return;
        }
    }
    const struct llc_cpuid_leaf *l16 = max_basic >= 0x16 ? llc_cpuid_get(d, 0x16, 0) : NULL;
    if (out->vendor == LLC_VENDOR_INTEL && l16 && (l16->eax & 0xffff)) {
        /* The base frequency equals the TSC rate on invariant-TSC Intel parts,
         * to within the rounding of a whole MHz. */
        out->tsc_hz = (uint64_t)(l16->eax & 0xffff) * 1000000;
        snprintf(out->tsc_hz_source, sizeof(out->tsc_hz_source),
                 "CPUID 0x16 (base frequency, whole MHz)");
    }
}

int llc_cpuid_decode(const struct llc_cpuid_dump *d, struct llc_cpu_info *out, char *err,
                     size_t errlen)
{
    memset(out, 0, sizeof(*out));
    const struct llc_cpuid_leaf *l0 = llc_cpuid_get(d, 0, 0);
    if (!l0)
        return llc_errf(err, errlen, -EINVAL, "CPUID leaf 0 (vendor) is missing");
    const uint32_t max_basic = l0->eax;
    regs_to_string(out->vendor_id, l0->ebx, l0->edx, l0->ecx);
    if (strcmp(out->vendor_id, "GenuineIntel") == 0)
        out->vendor = LLC_VENDOR_INTEL;
    else if (strcmp(out->vendor_id, "AuthenticAMD") == 0 ||
             strcmp(out->vendor_id, "HygonGenuine") == 0)
        out->vendor = LLC_VENDOR_AMD;

    const struct llc_cpuid_leaf *l1 = llc_cpuid_get(d, 1, 0);
    if (l1) {
        const unsigned base_family = (l1->eax >> 8) & 0xf;
        const unsigned base_model = (l1->eax >> 4) & 0xf;
        out->stepping = l1->eax & 0xf;
        out->family = base_family == 0xf ? base_family + ((l1->eax >> 20) & 0xff) : base_family;
        out->model = (base_family == 0x6 || base_family == 0xf)
                         ? base_model | (((l1->eax >> 16) & 0xf) << 4)
                         : base_model;
        out->hypervisor = (l1->ecx >> 31) & 1;
        out->has_tsc = (l1->edx >> 4) & 1;
    }
    if (out->hypervisor) {
        const struct llc_cpuid_leaf *hv = llc_cpuid_get(d, 0x40000000, 0);
        if (hv)
            regs_to_string(out->hypervisor_id, hv->ebx, hv->ecx, hv->edx);
    }
    decode_brand(d, out);

    const struct llc_cpuid_leaf *la = max_basic >= 0xa ? llc_cpuid_get(d, 0xa, 0) : NULL;
    if (out->vendor == LLC_VENDOR_INTEL && la)
        out->perfmon_version = la->eax & 0xff;

    const struct llc_cpuid_leaf *e0 = llc_cpuid_get(d, 0x80000000, 0);
    const uint32_t max_ext = e0 ? e0->eax : 0;
    const struct llc_cpuid_leaf *e1 =
        max_ext >= 0x80000001 ? llc_cpuid_get(d, 0x80000001, 0) : NULL;
    const struct llc_cpuid_leaf *e7 =
        max_ext >= 0x80000007 ? llc_cpuid_get(d, 0x80000007, 0) : NULL;
    out->has_rdtscp = e1 && ((e1->edx >> 27) & 1);
    const struct llc_cpuid_leaf *e21 =
        max_ext >= 0x80000021 ? llc_cpuid_get(d, 0x80000021, 0) : NULL;
    out->lfence_serializing = out->vendor == LLC_VENDOR_INTEL || (e21 && ((e21->eax >> 2) & 1));
    out->invariant_tsc = e7 && ((e7->edx >> 8) & 1);
    decode_tsc_hz(d, max_basic, out);

    if (out->vendor == LLC_VENDOR_INTEL && max_basic >= 4)
        decode_cache_leaf(d, 4, out);
    else if (out->vendor == LLC_VENDOR_AMD && max_ext >= 0x8000001D && e1 && ((e1->ecx >> 22) & 1))
        decode_cache_leaf(d, 0x8000001D, out); /* needs TOPOEXT (0x80000001 ECX bit 22) */
    if (out->vendor == LLC_VENDOR_AMD && out->n_caches == 0)
        decode_amd_legacy(d, max_ext, out);
    return 0;
}
