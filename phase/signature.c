/* Signature vectors (docs/METHODS.md §10.4) and their distance (docs/METHODS.md §10.5). */
#include <errno.h>
#include <math.h>

#include "llcprobe/phase.h"
#include "phase_rng.h"

#define LLC_PHASE_MASK_SEED 0x5CA4ULL
#define LLC_PHASE_HASH_BITS 5 /* 2^5 = LLC_PHASE_BUCKETS */

_Static_assert((1u << LLC_PHASE_HASH_BITS) == LLC_PHASE_BUCKETS, "one hash bit per bucket bit");

uint64_t llc_phase_hash_mask(unsigned bit)
{
    uint64_t state = LLC_PHASE_MASK_SEED + bit;
    return llc_splitmix_next(&state);
}

unsigned llc_phase_hash_ip(uint64_t ip)
{
    const uint64_t line = ip >> LLC_PHASE_IP_GRANULE_BITS;
    unsigned bucket = 0;
    for (unsigned b = 0; b < LLC_PHASE_HASH_BITS; b++)
        bucket |= (unsigned)__builtin_parityll(line & llc_phase_hash_mask(b)) << b;
    return bucket;
}

size_t llc_phase_signature_ips(const uint64_t *ips, size_t n, double out[LLC_PHASE_BUCKETS])
{
    uint64_t masks[LLC_PHASE_HASH_BITS];
    for (unsigned b = 0; b < LLC_PHASE_HASH_BITS; b++)
        masks[b] = llc_phase_hash_mask(b);

    uint64_t counts[LLC_PHASE_BUCKETS] = {0};
    for (size_t i = 0; i < n; i++) {
        const uint64_t line = ips[i] >> LLC_PHASE_IP_GRANULE_BITS;
        unsigned bucket = 0;
        for (unsigned b = 0; b < LLC_PHASE_HASH_BITS; b++)
            bucket |= (unsigned)__builtin_parityll(line & masks[b]) << b;
        counts[bucket]++;
    }
    for (unsigned i = 0; i < LLC_PHASE_BUCKETS; i++)
        out[i] = n ? (double)counts[i] / (double)n : 0.0;
    return n;
}

int llc_phase_normalize(double *v, size_t dim)
{
    double sum = 0.0;
    for (size_t i = 0; i < dim; i++) {
        if (!isfinite(v[i]) || v[i] < 0.0)
            return -EINVAL;
        sum += v[i];
    }
    if (!(sum > 0.0))
        return -EDOM;
    for (size_t i = 0; i < dim; i++)
        v[i] /= sum;
    return 0;
}

double llc_phase_distance(const double *u, const double *v, size_t dim)
{
    double d = 0.0;
    for (size_t i = 0; i < dim; i++)
        d += fabs(u[i] - v[i]);
    return d / 2.0;
}
