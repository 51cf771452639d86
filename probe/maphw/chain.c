/* Random walk orders and the cyclic pointer chains the probe follows: each
 * line holds the address of the next, so loads are serialised and the
 * access order is exactly the chain's. */
#include "maphw/maphw_internal.h"
#include "llcprobe/rng.h"

void llc_maphw_perm(uint64_t seed, uint64_t stream, uint32_t *perm, size_t n)
{
    uint64_t s = seed ^ (0x6a09e667f3bcc909ULL * (stream + 1));
    for (size_t i = 0; i < n; i++)
        perm[i] = (uint32_t)i;
    for (size_t i = n; i > 1; i--) {
        const size_t j = (size_t)(((llc_splitmix_next(&s) >> 32) * (uint64_t)i) >> 32);
        const uint32_t t = perm[i - 1];
        perm[i - 1] = perm[j];
        perm[j] = t;
    }
}

void *llc_maphw_chain_link(void *const *lines, const uint32_t *perm, size_t n)
{
    if (!n)
        return NULL;
    for (size_t k = 0; k < n; k++)
        *(void **)lines[perm[k]] = lines[perm[(k + 1) % n]];
    return lines[perm[0]];
}

size_t llc_maphw_chain_cycle(const void *head, size_t max)
{
    if (!head)
        return 0;
    const void *p = head;
    for (size_t k = 1; k <= max; k++) {
        p = *(void *const *)p;
        if (!p)
            return 0;
        if (p == head)
            return k;
    }
    return 0;
}
