/* llcprobe: per-set maps and models of last-level cache use. */
#include <stdio.h>
#include <string.h>

#include "cmd/commands.h"
#include "util/cli.h"
#include "util/version.h"

struct command {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
};

static const struct command commands[] = {
    {"info", llc_cmd_info, "what this machine's caches, hugepages, pagemap and counters allow"},
    {"trace", llc_cmd_trace,
     "record a program's memory accesses (valgrind lackey) to a trace file"},
    {"sim", llc_cmd_sim, "run workloads or traces through the LLC simulator; per-set ground truth"},
    {"map", llc_cmd_map,
     "the stress probe's per-set contention map of a program (hardware or simulator)"},
    {"fit", llc_cmd_fit, "fit a map's per-set distribution and pick the 25 representative sets"},
    {"sample", llc_cmd_sample,
     "monitor a program through a sample of sets (Gaussian-25 or a baseline)"},
    {"calibrate", llc_cmd_calibrate,
     "probe misses per set against lines held: the occupancy scale for sample"},
    {"mrc", llc_cmd_mrc, "miss-ratio curves from sampled reuse distances (StatCache, StatStack)"},
    {"phase", llc_cmd_phase, "online program phases (ScarPhase) from live samples or a trace"},
    {"profile", llc_cmd_profile,
     "profile one program alone: phases, reuse histograms, solo CPI (input of predict)"},
    {"predict", llc_cmd_predict,
     "programs profiled alone, predicted sharing the LLC: misses, occupancy, slowdown"},
    {"merge", llc_cmd_merge,
     "join profile directories (Slurm tasks, other runs) into one, same machine only"},
    {"study", llc_cmd_study,
     "N programs on K cores: every group predicted, best and worst co-schedules, report"},
};

static void usage(FILE *out)
{
    fprintf(out, "usage: llcprobe <command> [options]\n\n"
                 "Measures how programs use the shared last-level cache, set by set,\n"
                 "and models what happens when they share it.\n\ncommands:\n");
    for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
        fprintf(out, "  %-10s %s\n", commands[i].name, commands[i].summary);
    fprintf(out, "\n'llcprobe <command> --help' describes a command's options;\n"
                 "'llcprobe --version' prints the version.\n");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return LLC_EXIT_USAGE;
    }
    const char *name = argv[1];
    if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0 || strcmp(name, "help") == 0) {
        usage(stdout);
        return LLC_EXIT_OK;
    }
    if (strcmp(name, "--version") == 0) {
        printf("llcprobe %s\n", LLCPROBE_VERSION_STRING);
        return LLC_EXIT_OK;
    }
    for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
        if (strcmp(name, commands[i].name) == 0)
            return commands[i].run(argc - 1, argv + 1);
    fprintf(stderr, "llcprobe: %s: unknown command (see 'llcprobe --help')\n", name);
    return LLC_EXIT_USAGE;
}
