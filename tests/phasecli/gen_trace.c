/* Writes a synthetic two-phase trace and the matching exp-bbv file for the
 * offline `phase --trace` tests:
 *   gen_trace OUT.trace OUT.bb WINDOW RUN RUNS
 * RUNS runs of RUN windows of WINDOW instructions, alternating phase A (a
 * loop over 64 instructions at 0x401000, one load each: three into a 16 KiB
 * array, the fourth at random in 256 MiB, so a steady quarter misses the
 * LLC) and phase B (a loop over 48 instructions at 0x7f0000, one load each at
 * random in 256 MiB: nearly all miss). The BBV file has one interval per
 * window: block 1 for A, blocks 2 and 3 for B. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "llcprobe/common.h"
#include "llcprobe/trace.h"

int main(int argc, char **argv)
{
    if (argc != 6) {
        fprintf(stderr, "usage: gen_trace OUT.trace OUT.bb WINDOW RUN RUNS\n");
        return 2;
    }
    const uint64_t window = strtoull(argv[3], NULL, 0);
    const int run = atoi(argv[4]), runs = atoi(argv[5]);
    struct llc_trace_info info = {
        .recorder = "synthetic", .command = "gen_trace two phases", .page_size = 4096};
    struct llc_trace_writer *w = NULL;
    char err[LLC_ERRLEN];
    if (llc_trace_writer_open(argv[1], &info, &w, err, sizeof(err)) < 0) {
        fprintf(stderr, "gen_trace: %s\n", err);
        return 1;
    }
    FILE *bb = fopen(argv[2], "w");
    if (!bb) {
        perror(argv[2]);
        llc_trace_writer_abort(w);
        return 1;
    }
    uint64_t x = 12345;
    for (int r = 0; r < runs; r++) {
        const int b = r % 2;
        for (int k = 0; k < run; k++) {
            for (uint64_t i = 0; i < window; i++) {
                struct llc_trace_rec ins = {.kind = LLC_TRACE_INSTR, .size = 4};
                struct llc_trace_rec ld = {.kind = LLC_TRACE_LOAD, .size = 8};
                x = x * 6364136223846793005ULL + 1442695040888963407ULL;
                if (b) {
                    ins.addr = 0x7f0000 + (i % 48) * 4;
                    ld.addr = 0x10000000 + ((x >> 20) % (256u << 20) & ~63ULL);
                } else {
                    ins.addr = 0x401000 + (i % 64) * 4;
                    ld.addr = i % 4 == 0 ? 0x10000000 + ((x >> 20) % (256u << 20) & ~63ULL)
                                         : 0x2000000 + (i * 64) % 16384;
                }
                ld.pc = ins.addr;
                if (llc_trace_writer_put(w, &ins) < 0 || llc_trace_writer_put(w, &ld) < 0) {
                    fprintf(stderr, "gen_trace: write failed\n");
                    llc_trace_writer_abort(w);
                    fclose(bb);
                    return 1;
                }
            }
            if (b)
                fprintf(bb, "T:2:%llu :3:%llu\n", (unsigned long long)(window / 2),
                        (unsigned long long)(window - window / 2));
            else
                fprintf(bb, "T:1:%llu\n", (unsigned long long)window);
        }
    }
    fclose(bb);
    if (llc_trace_writer_close(w, 0, err, sizeof(err)) < 0) {
        fprintf(stderr, "gen_trace: %s\n", err);
        return 1;
    }
    return 0;
}
