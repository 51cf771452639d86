/* llcprobe trace: record a program's instructions and data accesses under
 * valgrind's lackey into a trace file, or inspect a trace file. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd/commands.h"
#include "llcprobe/common.h"
#include "llcprobe/trace.h"
#include "mrc/mrc.h"
#include "util/cli.h"
#include "util/input.h"
#include "util/stopsig.h"

static void usage(FILE *out)
{
    fprintf(
        out,
        "usage: llcprobe trace -o FILE [--quiet] [--as-root] [--valgrind PATH] -- PROGRAM [ARGS...]\n"
        "       llcprobe trace -o FILE --recorder qemu -- PROGRAM [ARGS...]\n"
        "       llcprobe trace --show FILE [--dump N] [--verify]\n\n"
        "Runs PROGRAM under valgrind's lackey tool (any binary, about 4000x slower than\n"
        "native: trace runs of tens of milliseconds) and records every executed\n"
        "instruction's address and every load, store and modify (address, size) to FILE\n"
        "in llcprobe's compact trace format (probe/trace/FORMAT.md). The program's\n"
        "stdin, stdout and stderr are llcprobe's; it runs in its own process group, so\n"
        "it should not read from the terminal. A summary goes to stdout at the end,\n"
        "including the program's exit status; llcprobe itself exits 0 when the trace\n"
        "was recorded, whatever that status.\n\n"
        "  -o, --output FILE  trace file to write (replaced only when complete)\n"
        "  -q, --quiet        no progress line on stderr\n"
        "      --as-root      under sudo, keep root for the program (default: run it as\n"
        "                     the invoking user, SUDO_UID/SUDO_GID)\n"
        "      --valgrind PATH  valgrind executable (default: valgrind from PATH)\n"
        "      --recorder R   lackey (default) or qemu: qemu-x86_64 with llcprobe's plugin\n"
        "                     (x86-64 ELF programs, one thread: a program that starts a\n"
        "                     second thread leaves no trace), the same records as lackey's\n"
        "                     (a load and store of the same bytes by one instruction is a\n"
        "                     modify); no progress line, --as-root or --valgrind\n"
        "      --show FILE    print a trace's header and counts\n"
        "      --dump N       with --show: also the first N records (0 to 1e9), in\n"
        "                     lackey's format\n"
        "      --verify       with --show: decode every record and check the checksum\n"
        "  -h, --help         this text\n\n"
        "SIGINT, SIGTERM or SIGHUP stops the program's process group, removes the partial\n"
        "output and exits with 128 + the signal number.\n\n"
        "exit status: 0 ok (whatever the program's own exit status, which is recorded\n"
        "and printed), 1 failure, 2 usage, 128 + N when stopped by signal N.\n");
}

static void draw_progress(void *ctx, const struct llc_trace_record_stats *s)
{
    (void)ctx;
    const uint64_t n = s->n_instr + s->n_load + s->n_store + s->n_modify;
    char text[32], trace[32];
    fprintf(stderr, "\rtrace: %.1f M records, %.2f M/s, lackey %s -> trace %s\033[K",
            (double)n / 1e6, s->seconds > 0 ? (double)n / 1e6 / s->seconds : 0.0,
            llc_format_size(s->lackey_bytes, text, sizeof(text)),
            llc_format_size(s->trace_bytes, trace, sizeof(trace)));
    fflush(stderr);
}

static void print_exit_status(int status)
{
    if (status > 128 && status < 128 + 65)
        printf("exit status: %d (killed by signal %d, SIG%s)\n", status, status - 128,
               sigabbrev_np(status - 128) ? sigabbrev_np(status - 128) : "?");
    else
        printf("exit status: %d\n", status);
}

static int record(const char *output, char **argv, bool quiet, bool as_root, const char *valgrind)
{
    struct llc_trace_record_opts o = {
        .output = output,
        .argv = argv,
        .valgrind = valgrind,
        .keep_root = as_root,
        .stop = &llc_stop_signal,
    };
    const bool progress = !quiet && isatty(STDERR_FILENO);
    if (progress)
        o.progress = draw_progress;
    struct llc_stop_saved saved_signals;
    llc_stop_install(&saved_signals);
    struct llc_trace_record_stats s;
    char err[LLC_ERRLEN];
    const int rc = llc_trace_record_lackey(&o, &s, err, sizeof(err));
    llc_stop_restore(&saved_signals);
    if (progress)
        fprintf(stderr, "\r\033[K");
    if (rc == -EINTR) {
        fprintf(stderr, "llcprobe: trace: stopped by signal %d; partial output removed\n",
                (int)llc_stop_signal);
        return llc_stop_exit_code();
    }
    if (rc < 0)
        return llc_cli_fail("trace", "%s", err);
    if (s.lackey_unknown)
        llc_cli_warn(quiet, "%" PRIu64 " unrecognized lines in lackey's output (first: \"%s\")",
                     s.lackey_unknown,
                     llc_escape(s.first_unknown, strlen(s.first_unknown), (char[128]){0}, 128));
    const uint64_t n = s.n_instr + s.n_load + s.n_store + s.n_modify;
    printf("trace: %s\n", output);
    printf("instructions: %" PRIu64 "\n", s.n_instr);
    printf("loads: %" PRIu64 "\n", s.n_load);
    printf("stores: %" PRIu64 "\n", s.n_store);
    printf("modifies: %" PRIu64 "\n", s.n_modify);
    printf("records: %" PRIu64 "\n", n);
    printf("trace bytes: %" PRIu64 " (%.3f bytes/record)\n", s.trace_bytes,
           n ? (double)s.trace_bytes / (double)n : 0.0);
    printf("lackey text bytes parsed: %" PRIu64 " (%.2f bytes/record)\n", s.lackey_bytes,
           n ? (double)s.lackey_bytes / (double)n : 0.0);
    printf("compression: %.1fx\n",
           s.trace_bytes ? (double)s.lackey_bytes / (double)s.trace_bytes : 0.0);
    printf("time: %.2f s (%.2f M records/s)\n", s.seconds,
           s.seconds > 0 ? (double)n / 1e6 / s.seconds : 0.0);
    print_exit_status(s.exit_status);
    return LLC_EXIT_OK;
}

/* The qemu recorder: the plugin writes the trace; the summary is read back
 * from its header. */
static int record_qemu(const char *output, char **argv)
{
    char err[LLC_ERRLEN];
    int status = 0;
    const double t0 = llc_now();
    int rc = llc_mrc_qemu_trace(argv, output, &status, err, sizeof err);
    const double dt = llc_now() - t0;
    if (rc < 0)
        return llc_cli_fail("trace", "%s", err);
    struct llc_trace_reader *r;
    rc = llc_trace_reader_open(output, &r, err, sizeof err);
    if (rc < 0)
        return llc_cli_fail("trace", "%s", err);
    const struct llc_trace_info *i = llc_trace_reader_info(r);
    const uint64_t n = i->n_instr + i->n_load + i->n_store + i->n_modify;
    printf("trace: %s\n", output);
    printf("recorder: qemu\n");
    printf("instructions: %" PRIu64 "\nloads: %" PRIu64 "\nstores: %" PRIu64 "\nmodifies: %" PRIu64
           "\nrecords: %" PRIu64 "\n",
           i->n_instr, i->n_load, i->n_store, i->n_modify, n);
    printf("time: %.2f s (%.2f M records/s)\n", dt, dt > 0 ? (double)n / 1e6 / dt : 0.0);
    llc_trace_reader_close(r);
    print_exit_status(status);
    return LLC_EXIT_OK;
}

static void print_record(const struct llc_trace_rec *r, uint64_t last_instr)
{
    static const char kinds[] = "ILSM";
    if (r->kind == LLC_TRACE_INSTR)
        printf("I  %08" PRIx64 ",%" PRIu32 "\n", r->addr, r->size);
    else if (r->pc == last_instr || r->pc == 0)
        printf(" %c %08" PRIx64 ",%" PRIu32 "\n", kinds[r->kind], r->addr, r->size);
    else
        printf(" %c %08" PRIx64 ",%" PRIu32 "  pc %" PRIx64 "\n", kinds[r->kind], r->addr, r->size,
               r->pc);
}

static int show(const char *path, uint64_t dump, bool verify)
{
    char err[LLC_ERRLEN];
    struct llc_trace_reader *r = NULL;
    int rc = llc_trace_reader_open(path, &r, err, sizeof(err));
    if (rc < 0)
        return llc_cli_fail("trace", "%s", err);
    const struct llc_trace_info *info = llc_trace_reader_info(r);
    struct stat st;
    const uint64_t bytes = stat(path, &st) == 0 ? (uint64_t)st.st_size : 0;
    const uint64_t n = info->n_instr + info->n_load + info->n_store + info->n_modify;
    printf("trace: %s\n", path);
    printf("recorder: %s (%s)\n", info->recorder, llc_trace_reader_tool(r));
    printf("command: %s\n", info->command);
    printf("page size: %" PRIu32 "\n", info->page_size);
    printf("instructions: %" PRIu64 "\n", info->n_instr);
    printf("loads: %" PRIu64 "\n", info->n_load);
    printf("stores: %" PRIu64 "\n", info->n_store);
    printf("modifies: %" PRIu64 "\n", info->n_modify);
    printf("records: %" PRIu64 "\n", n);
    printf("trace bytes: %" PRIu64 " (%.3f bytes/record)\n", bytes,
           n ? (double)bytes / (double)n : 0.0);
    print_exit_status(info->exit_status);
    struct llc_trace_rec rec;
    uint64_t last_instr = 0;
    for (uint64_t i = 0; i < dump && (rc = llc_trace_reader_next(r, &rec, err, sizeof(err))) > 0;
         i++) {
        print_record(&rec, last_instr);
        if (rec.kind == LLC_TRACE_INSTR)
            last_instr = rec.addr;
    }
    if (rc >= 0 && verify) {
        const double t0 = llc_now();
        uint64_t seen = 0;
        while ((rc = llc_trace_reader_next(r, &rec, err, sizeof(err))) > 0)
            seen++;
        const double dt = llc_now() - t0;
        if (rc == 0)
            printf("verified: ok (%" PRIu64 " records decoded, %.1f M records/s)\n", seen,
                   dt > 0 ? (double)seen / 1e6 / dt : 0.0);
    }
    llc_trace_reader_close(r);
    return rc < 0 ? llc_cli_fail("trace", "%s", err) : LLC_EXIT_OK;
}

int llc_cmd_trace(int argc, char **argv)
{
    enum { OPT_AS_ROOT = 256, OPT_VALGRIND, OPT_SHOW, OPT_DUMP, OPT_VERIFY, OPT_RECORDER };
    static const struct option longopts[] = {
        {"output", required_argument, NULL, 'o'},
        {"quiet", no_argument, NULL, 'q'},
        {"as-root", no_argument, NULL, OPT_AS_ROOT},
        {"valgrind", required_argument, NULL, OPT_VALGRIND},
        {"show", required_argument, NULL, OPT_SHOW},
        {"dump", required_argument, NULL, OPT_DUMP},
        {"verify", no_argument, NULL, OPT_VERIFY},
        {"recorder", required_argument, NULL, OPT_RECORDER},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *output = NULL, *valgrind = NULL, *show_path = NULL;
    bool quiet = false, as_root = false, verify = false, dump_given = false, qemu = false;
    uint64_t dump = 0;
    optind = 1;
    opterr = 0;
    int ch;
    /* '+': options end at the program's name, whose own options are its own. */
    while ((ch = getopt_long(argc, argv, "+o:qh", longopts, NULL)) != -1) {
        switch (ch) {
        case 'o':
            output = optarg;
            break;
        case 'q':
            quiet = true;
            break;
        case OPT_AS_ROOT:
            as_root = true;
            break;
        case OPT_VALGRIND:
            valgrind = optarg;
            break;
        case OPT_SHOW:
            show_path = optarg;
            break;
        case OPT_VERIFY:
            verify = true;
            break;
        case OPT_RECORDER:
            if (strcmp(optarg, "lackey") != 0 && strcmp(optarg, "qemu") != 0)
                return llc_cli_usage("trace", "--recorder is lackey or qemu, not '%s'", optarg);
            qemu = strcmp(optarg, "qemu") == 0;
            break;
        case OPT_DUMP:
            if (llc_opt_u64("trace", "dump", optarg, 0, UINT64_C(1000000000), &dump) != 0)
                return LLC_EXIT_USAGE;
            dump_given = true;
            break;
        case 'h':
            usage(stdout);
            return LLC_EXIT_OK;
        default:
            return llc_cli_usage("trace", "unknown or incomplete option '%s'", argv[optind - 1]);
        }
    }
    if (show_path) {
        if (output || optind < argc)
            return llc_cli_usage("trace", "--show takes no -o and no program");
        return show(show_path, dump, verify);
    }
    if (dump_given || verify)
        return llc_cli_usage("trace", "--dump and --verify go with --show FILE");
    if (optind >= argc)
        return llc_cli_usage("trace",
                             "no program to trace (llcprobe trace -o FILE -- PROGRAM ...)");
    if (!output)
        return llc_cli_usage("trace", "missing -o FILE, the trace to write");
    if (qemu && (as_root || valgrind))
        return llc_cli_usage("trace", "--as-root and --valgrind are the lackey recorder's");
    if (qemu)
        return record_qemu(output, argv + optind);
    return record(output, argv + optind, quiet, as_root, valgrind);
}
