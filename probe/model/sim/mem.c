/* Huge-page friendly allocation (see mem.h). */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "model/sim/mem.h"

#define SIM_HUGE (2u << 20)
#define SIM_HUGE_MIN (1u << 20)

void *sim_alloc(size_t bytes)
{
    const size_t align = bytes >= SIM_HUGE_MIN ? SIM_HUGE : 64;
    const size_t size = (bytes + align - 1) & ~(align - 1);
    void *p = aligned_alloc(align, size ? size : align);
    if (!p)
        return NULL;
    /* Advice only: without THP the arrays still work, just slower. */
    if (align == SIM_HUGE)
        (void)madvise(p, size, MADV_HUGEPAGE);
    memset(p, 0, size);
    return p;
}

void sim_free(void *p)
{
    free(p);
}
