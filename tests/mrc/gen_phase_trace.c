/* Two-phase trace with a known miss-ratio curve, for tests/mrc/test_phases.sh.
 * Windows of WINDOW data references in the pattern A A B B A A B B: phase A
 * cycles over 64 lines, phase B over 2000 lines (each phase continues its
 * own cycle when it comes back); their code addresses lie in two disjoint
 * regions of 8 code lines each.
 * Usage: mrc_gen_phase_trace OUT instr|pc WINDOW
 *   instr: an instruction record before each data record (like lackey's
 *          traces; data records carry no pc)
 *   pc:    data records only, each with its code address (like the
 *          runtime's traces) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "llcprobe/common.h"
#include "llcprobe/trace.h"

int main(int argc, char **argv)
{
    if (argc != 4 || (strcmp(argv[2], "instr") && strcmp(argv[2], "pc"))) {
        fprintf(stderr, "usage: mrc_gen_phase_trace OUT instr|pc WINDOW\n");
        return 2;
    }
    const int with_instr = strcmp(argv[2], "instr") == 0;
    const unsigned long window = strtoul(argv[3], NULL, 10);
    struct llc_trace_info info = {.page_size = 4096, .exit_status = 0};
    snprintf(info.recorder, sizeof info.recorder, "synthetic");
    snprintf(info.command, sizeof info.command, "two phases, 64 and 2000 lines");
    struct llc_trace_writer *w = NULL;
    char err[LLC_ERRLEN];
    if (llc_trace_writer_open(argv[1], &info, &w, err, sizeof err) < 0) {
        fprintf(stderr, "mrc_gen_phase_trace: %s\n", err);
        return 1;
    }
    static const struct {
        unsigned long lines;
        unsigned long long data, code;
    } phase[2] = {{64, 0x10000000ull, 0x401000ull}, {2000, 0x20000000ull, 0x7a3000ull}};
    unsigned long next[2] = {0, 0};
    int rc = 0;
    for (int win = 0; win < 8 && rc == 0; win++) {
        const int p = (win / 2) % 2;
        for (unsigned long i = 0; i < window && rc == 0; i++) {
            const unsigned long line = next[p]++ % phase[p].lines;
            const unsigned long long pc = phase[p].code + (line % 8) * 64;
            const struct llc_trace_rec ins = {.addr = pc, .size = 4, .kind = LLC_TRACE_INSTR};
            const struct llc_trace_rec rec = {.addr = phase[p].data + line * 64,
                                              .size = 8,
                                              .kind = LLC_TRACE_LOAD,
                                              .pc = with_instr ? 0 : pc};
            if (with_instr)
                rc = llc_trace_writer_put(w, &ins);
            if (rc == 0)
                rc = llc_trace_writer_put(w, &rec);
        }
    }
    if (rc < 0) {
        llc_trace_writer_abort(w);
        fprintf(stderr, "mrc_gen_phase_trace: write failed\n");
        return 1;
    }
    if (llc_trace_writer_close(w, 0, err, sizeof err) < 0) {
        fprintf(stderr, "mrc_gen_phase_trace: %s\n", err);
        return 1;
    }
    return 0;
}
