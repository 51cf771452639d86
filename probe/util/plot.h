/* PNG plots through gnuplot, shared by every command that draws one. The
 * data go inline in the script (or in the command's own CSV), so no
 * temporary data files are left behind. */
#ifndef LLC_UTIL_PLOT_H
#define LLC_UTIL_PLOT_H

#include <stddef.h>
#include <stdio.h>

/* Runs `gnuplot` (a program name looked up in PATH, or a path; NULL means
 * "gnuplot") with a script that writes png at width x height: the terminal
 * and output lines, then whatever emit(ctx, stream) writes. The file
 * appears only if gnuplot succeeded (written beside, then renamed). Returns
 * 0, or a negative errno with one line in err ("gnuplot ('x') is not
 * installed", "gnuplot failed (exit 1)", ...). */
int llc_plot_png(const char *gnuplot, const char *png, int width, int height,
                 void (*emit)(void *ctx, FILE *gp), void *ctx, char *err, size_t errlen);

/* Writes s as a gnuplot single-quoted string literal (a quote doubled). */
void llc_plot_quote(FILE *gp, const char *s);

#endif
