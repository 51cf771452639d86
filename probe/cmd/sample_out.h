/* The outputs of `llcprobe sample` (sample_write.c). */
#ifndef LLC_CMD_SAMPLE_OUT_H
#define LLC_CMD_SAMPLE_OUT_H

#include <stdbool.h>
#include <stdint.h>

#include "llcprobe/session.h"

/* PREFIX.sample.png; a missing gnuplot is a warning. */
void llc_sample_plot(const struct llc_sample_output *so, bool quiet);

/* The sets of `--sets FILE|LIST` (sample.c): *out malloc'd. 0, or the exit
 * code after printing the one-line error. Also what tests/fuzz feeds. */
int llc_sample_read_sets(const char *arg, uint32_t **out, size_t *n);

#endif
