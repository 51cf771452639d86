/* Allocation of the simulator's large metadata arrays. */
#ifndef LLC_SIM_MEM_H
#define LLC_SIM_MEM_H

#include <stddef.h>

/* Zeroed, 64-byte aligned; arrays of 1 MiB or more are 2 MiB aligned and
 * marked for transparent huge pages: the access path touches them at random,
 * and with 4 KiB pages nearly every access would also miss the host's TLB. */
void *sim_alloc(size_t bytes);
void sim_free(void *p);

#endif
