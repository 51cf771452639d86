/* Result lifecycle and the headline report. */
#include <stdlib.h>

#include "llcprobe/evset.h"

void llc_evset_result_free(struct llc_evset_result *r)
{
    if (!r)
        return;
    free(r->sets);
    free(r->lines);
    free(r);
}

void llc_evset_report_print(FILE *fp, const struct llc_evset_report *r)
{
    fprintf(fp, "evset_build_time: %.3f s\n", r->build_seconds);
    fprintf(fp, "evset_units: %u sets\n", r->units);
    fprintf(fp, "evset_found: %u sets\n", r->found);
    fprintf(fp, "evset_reduced: %u sets\n", r->reduced);
    fprintf(fp, "evset_reduce_failures: %u victims\n", r->reduce_failures);
    fprintf(fp, "evset_reuse: %u of %u held\n", r->reuse_held, r->reuse_tried);
    fprintf(fp, "evset_hashed: %u sets (%u rejected by verification)\n", r->hashed,
            r->hash_rejected);
    if (r->hash_solved) {
        fprintf(fp, "evset_hash: solved, %u bits, masks", r->hash.bits);
        for (unsigned b = 0; b < r->hash.bits; b++)
            fprintf(fp, " 0x%llx", (unsigned long long)r->hash.masks[b]);
        fprintf(fp, "\n");
    } else {
        fprintf(fp, "evset_hash: not solved (%s)\n", r->hash_note);
    }
    fprintf(fp, "evset_eviction_tests: %llu tests\n", (unsigned long long)r->counters.tests);
    fprintf(fp, "evset_timed_walks: %llu walks\n", (unsigned long long)r->counters.trials);
    fprintf(fp, "evset_accesses: %llu accesses\n", (unsigned long long)r->counters.accesses);
    fprintf(fp, "evset_backtracks: %llu\n", (unsigned long long)r->counters.backtracks);
    fprintf(fp, "evset_pass_rate: %.4f\n", r->pass_rate);
    fprintf(fp, "evset_coverage: %.4f\n", r->coverage);
    fprintf(fp, "evset_verified_fraction: %.4f\n", r->verified_fraction);
}
