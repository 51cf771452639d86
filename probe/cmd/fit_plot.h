/* PNG plots of a fit (gnuplot): the histogram with the fitted densities
 * (the seed's Fig. 3) and the per-set map with the selected sets marked
 * (Fig. 2). Shared by `fit` and `sample` (which fits in-run). */
#ifndef LLC_CMD_FIT_PLOT_H
#define LLC_CMD_FIT_PLOT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "llcprobe/fit.h"

int llc_fit_plot_histogram(const char *png, const struct llc_fit_report *rep, const char *title,
                           char *err, size_t errlen);
int llc_fit_plot_map(const char *png, const double *x, const uint8_t *excluded, size_t n,
                     const struct llc_fit_selection *sel, const char *title, const char *ylabel,
                     char *err, size_t errlen);

#endif
