/* Simulator configuration: defaults, named presets, policy / inclusion names
 * and whole-config validation. */
#include <errno.h>
#include <string.h>

#include "llcprobe/common.h"
#include "llcprobe/sim.h"
#include "model/sim/geometry.h"
#include "model/sim/hierarchy.h"

static const char *const policy_names[] = {"lru", "random", "plru", "srrip", "brrip", "drrip"};
static const char *const inclusion_names[] = {"inclusive", "exclusive", "nine"};
static const char *const preset_names[] = {"intel8", "amd32", NULL};

void llc_sim_config_default(struct llc_sim_config *c)
{
    memset(c, 0, sizeof(*c));
    c->llc.line_size = 64;
    c->llc_policy = LLC_SIM_LRU;
    c->inclusion = LLC_SIM_INCLUSIVE;
    c->l2_policy = LLC_SIM_LRU;
    c->drrip_leaders = 32;
    c->psel_bits = 10;
    c->agents = 1;
    c->seed = 1;
    c->page_size = 4096;
    c->phys_mem_bytes = 16ULL << 30;
    c->latency = (struct llc_sim_latency){
        .enabled = false,
        .l2_mean = 40,
        .l2_sd = 3,
        .llc_mean = 100,
        .llc_sd = 8,
        .dram_mean = 420,
        .dram_sd = 40,
        .outlier_prob = 1e-4,
        .outlier_cycles = 2000,
    };
}

static uint64_t bits_mask(const unsigned *bits, size_t n)
{
    uint64_t m = 0;
    for (size_t i = 0; i < n; i++)
        m |= 1ULL << bits[i];
    return m;
}

static void preset_intel8(struct llc_sim_config *c)
{
    /* Maurice et al. 2015, Sandy Bridge / Ivy Bridge / Haswell, 4 slices. */
    static const unsigned o0[] = {6,  10, 12, 14, 16, 17, 18, 20, 22, 24,
                                  25, 26, 27, 28, 30, 32, 33, 35, 36};
    static const unsigned o1[] = {7,  11, 13, 15, 17, 19, 20, 21, 22, 23,
                                  24, 26, 28, 29, 31, 33, 34, 35, 37};
    c->llc.sets_per_slice = 2048;
    c->llc.slices = 4;
    c->llc.ways = 16;
    c->llc.hash = LLC_SIM_HASH_XOR;
    c->llc.slice_masks[0] = bits_mask(o0, LLC_ARRAY_LEN(o0));
    c->llc.slice_masks[1] = bits_mask(o1, LLC_ARRAY_LEN(o1));
    c->inclusion = LLC_SIM_INCLUSIVE;
    c->l2_sets = 512;
    c->l2_ways = 8;
}

static void preset_amd32(struct llc_sim_config *c)
{
    c->llc.sets_per_slice = 4096;
    c->llc.slices = 8;
    c->llc.ways = 16;
    c->llc.hash = LLC_SIM_HASH_XOR;
    for (unsigned b = 0; b < 3; b++) {
        uint64_t m = 1ULL << (6 + b);
        for (unsigned bit = 12 + b; bit <= 40; bit += 3)
            m |= 1ULL << bit;
        c->llc.slice_masks[b] = m;
    }
    c->inclusion = LLC_SIM_EXCLUSIVE;
    c->l2_sets = 1024;
    c->l2_ways = 16;
}

const char *const *llc_sim_preset_names(void)
{
    return preset_names;
}

int llc_sim_preset(const char *name, struct llc_sim_config *out, char *err, size_t errlen)
{
    llc_sim_config_default(out);
    if (name && !strcmp(name, "intel8")) {
        preset_intel8(out);
        return 0;
    }
    if (name && !strcmp(name, "amd32")) {
        preset_amd32(out);
        return 0;
    }
    return llc_errf(err, errlen, -ENOENT, "unknown simulator preset '%s' (valid: intel8, amd32)",
                    name ? name : "(null)");
}

const char *llc_sim_policy_name(enum llc_sim_policy p)
{
    return (unsigned)p < LLC_ARRAY_LEN(policy_names) ? policy_names[p] : "?";
}

int llc_sim_policy_parse(const char *s, char *err, size_t errlen)
{
    for (size_t i = 0; s && i < LLC_ARRAY_LEN(policy_names); i++)
        if (!strcmp(s, policy_names[i]))
            return (int)i;
    return llc_errf(
        err, errlen, -EINVAL,
        "unknown replacement policy '%s' (valid: lru, random, plru, srrip, brrip, drrip)",
        s ? s : "(null)");
}

const char *llc_sim_inclusion_name(enum llc_sim_inclusion i)
{
    return (unsigned)i < LLC_ARRAY_LEN(inclusion_names) ? inclusion_names[i] : "?";
}

int llc_sim_inclusion_parse(const char *s, char *err, size_t errlen)
{
    for (size_t i = 0; s && i < LLC_ARRAY_LEN(inclusion_names); i++)
        if (!strcmp(s, inclusion_names[i]))
            return (int)i;
    return llc_errf(err, errlen, -EINVAL,
                    "unknown inclusion '%s' (valid: inclusive, exclusive, nine)", s ? s : "(null)");
}

static int check_policy(const char *level, enum llc_sim_policy p, uint32_t sets, uint32_t ways,
                        const struct llc_sim_config *c, char *err, size_t errlen)
{
    if ((unsigned)p >= LLC_ARRAY_LEN(policy_names))
        return llc_errf(err, errlen, -EINVAL, "%s: unknown replacement policy %d", level, (int)p);
    if (p == LLC_SIM_PLRU && !sim_is_pow2(ways))
        return llc_errf(err, errlen, -EINVAL, "%s: tree-PLRU needs power-of-two ways, not %u",
                        level, ways);
    if (p == LLC_SIM_DRRIP && (c->drrip_leaders < 1 || sets < 2ULL * c->drrip_leaders))
        return llc_errf(err, errlen, -EINVAL,
                        "%s: DRRIP with %u leader sets per policy needs at least %llu sets, has %u",
                        level, c->drrip_leaders, 2ULL * c->drrip_leaders, sets);
    return 0;
}

unsigned sim_config_paddr_bits(const struct llc_sim_config *c)
{
    unsigned index_bits = sim_log2(c->llc.sets_per_slice);
    if (c->l2_sets && sim_log2(c->l2_sets) < index_bits)
        index_bits = sim_log2(c->l2_sets);
    const unsigned bits = sim_log2(c->llc.line_size) + index_bits + 31;
    return bits < LLC_SIM_MAX_PADDR_BITS ? bits : LLC_SIM_MAX_PADDR_BITS;
}

int llc_sim_config_check(const struct llc_sim_config *c, char *err, size_t errlen)
{
    int rc = llc_sim_geometry_check(&c->llc, err, errlen);
    if (rc < 0)
        return rc;
    rc = check_policy("LLC", c->llc_policy, llc_sim_geometry_sets(&c->llc), c->llc.ways, c, err,
                      errlen);
    if (rc < 0)
        return rc;
    if ((unsigned)c->inclusion >= LLC_ARRAY_LEN(inclusion_names))
        return llc_errf(err, errlen, -EINVAL, "unknown inclusion %d", (int)c->inclusion);
    if (c->l2_sets) {
        if (!sim_is_pow2(c->l2_sets) || c->l2_sets > (1u << 24))
            return llc_errf(err, errlen, -EINVAL, "L2 sets %u is not a power of two <= 2^24",
                            c->l2_sets);
        if (c->l2_ways < 1 || c->l2_ways > LLC_SIM_MAX_WAYS)
            return llc_errf(err, errlen, -EINVAL, "L2 ways %u not in [1, %d]", c->l2_ways,
                            LLC_SIM_MAX_WAYS);
        rc = check_policy("L2", c->l2_policy, c->l2_sets, c->l2_ways, c, err, errlen);
        if (rc < 0)
            return rc;
    } else if (c->inclusion == LLC_SIM_EXCLUSIVE) {
        return llc_errf(err, errlen, -EINVAL,
                        "an exclusive (victim) LLC needs a private L2 to take its fills");
    }
    if ((c->llc_policy == LLC_SIM_DRRIP || (c->l2_sets && c->l2_policy == LLC_SIM_DRRIP)) &&
        (c->psel_bits < 2 || c->psel_bits > 16))
        return llc_errf(err, errlen, -EINVAL, "PSEL width %u not in [2, 16] bits", c->psel_bits);
    if (c->agents < 1 || c->agents > LLC_SIM_MAX_AGENTS)
        return llc_errf(err, errlen, -EINVAL, "agents %u not in [1, %d]", c->agents,
                        LLC_SIM_MAX_AGENTS);
    if (c->page_size != 4096 && c->page_size != (2u << 20))
        return llc_errf(err, errlen, -EINVAL, "page size %u is neither 4096 nor 2097152",
                        c->page_size);
    const unsigned pbits = sim_config_paddr_bits(c);
    if (c->phys_mem_bytes < 2ULL * c->page_size || c->phys_mem_bytes > (1ULL << pbits))
        return llc_errf(err, errlen, -EINVAL,
                        "physical memory of %llu bytes is not in [2 pages, 2^%u] "
                        "(2^%u: the tag width of this geometry)",
                        (unsigned long long)c->phys_mem_bytes, pbits, pbits);
    const struct llc_sim_latency *l = &c->latency;
    if (l->enabled &&
        (!(l->l2_mean >= 0) || !(l->llc_mean >= 0) || !(l->dram_mean >= 0) || !(l->l2_sd >= 0) ||
         !(l->llc_sd >= 0) || !(l->dram_sd >= 0) ||
         !(l->outlier_prob >= 0 && l->outlier_prob <= 1) || !(l->outlier_cycles >= 0)))
        return llc_errf(err, errlen, -EINVAL,
                        "latency model: means, deviations and outlier cycles must be >= 0 and "
                        "the outlier probability in [0, 1]");
    return 0;
}
