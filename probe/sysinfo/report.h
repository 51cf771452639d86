/* `llcprobe info` output: the same facts as readable text or JSON. Kept
 * beside the collector so later commands can embed the machine description
 * in their own JSON outputs. */
#ifndef LLC_SYSINFO_REPORT_H
#define LLC_SYSINFO_REPORT_H

#include <jansson.h>
#include <stdio.h>

#include "llcprobe/sysinfo.h"

/* The "llcprobe-info" version 1 document; NULL only when out of memory. */
json_t *llc_sysinfo_to_json(const struct llc_sysinfo *si);
/* Sections with aligned fields, each unavailable item with its reason. */
void llc_sysinfo_print_text(FILE *out, const struct llc_sysinfo *si);

#endif
