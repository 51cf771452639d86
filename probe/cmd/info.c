/* llcprobe info: what this machine's caches, hugepages, pagemap and
 * counters allow, each unavailable item with its reason. */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/commands.h"
#include "llcprobe/common.h"
#include "llcprobe/sysinfo.h"
#include "sysinfo/report.h"
#include "util/cli.h"

static void usage(FILE *out)
{
    fprintf(
        out,
        "usage: llcprobe info [--json] [--sysfs-root DIR] [--cpuid-dump FILE] [--hwloc-xml FILE]\n"
        "                     [--no-reserve] [--dump-cpuid]\n\n"
        "Describes the caches (sysfs, cross-checked with CPUID), the LLC and the hierarchy\n"
        "above it, hugepages, pagemap, the PMU's LLC-miss event, the timing clock, and the\n"
        "backend 'auto' would pick. Unavailable features are reported with the reason;\n"
        "the exit status is 0 unless the cache description itself cannot be read.\n\n"
        "  --json             JSON (format \"llcprobe-info\", version 1) instead of text\n"
        "  --sysfs-root DIR   read DIR/devices/system/cpu and DIR/kernel/mm/hugepages\n"
        "                     instead of /sys (fixtures)\n"
        "  --cpuid-dump FILE  decode CPUID leaves from FILE (format of `cpuid -r -1`)\n"
        "                     instead of executing CPUID\n"
        "  --hwloc-xml FILE   take the hwloc topology from an XML export\n"
        "  --no-reserve       never raise nr_hugepages temporarily to test a mapping\n"
        "  --dump-cpuid       print this CPU's raw CPUID leaves in the dump format and exit\n"
        "  -h, --help         this text\n\n"
        "With --sysfs-root or --cpuid-dump the output describes the fixture machine, so\n"
        "probes that act on this process (hugepage mapping, pagemap, perf_event_open,\n"
        "TSC measurement) are skipped. LIBPFM_FORCE_PMU=<pmu> makes libpfm4 encode the\n"
        "LLC-miss event for another CPU.\n\n"
        "exit status: 0 ok (what is unavailable is reported, not an error), 1 failure,\n"
        "2 usage.\n");
}

static int dump_cpuid(void)
{
    char err[LLC_ERRLEN];
    struct llc_cpuid_dump *d = calloc(1, sizeof(*d));
    if (!d)
        return llc_cli_fail("info", "out of memory");
    int rc = llc_cpuid_dump_live(d, err, sizeof(err));
    if (rc == 0) {
        printf("# llcprobe CPUID dump: leaf subleaf: registers (format of `cpuid -r -1`)\n");
        rc = llc_cpuid_dump_write(d, stdout);
        if (rc < 0)
            snprintf(err, sizeof(err), "write error");
    }
    free(d);
    return rc < 0 ? llc_cli_fail("info", "%s", err) : LLC_EXIT_OK;
}

int llc_cmd_info(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"json", no_argument, NULL, 'j'},
        {"sysfs-root", required_argument, NULL, 's'},
        {"cpuid-dump", required_argument, NULL, 'c'},
        {"hwloc-xml", required_argument, NULL, 'x'},
        {"no-reserve", no_argument, NULL, 'n'},
        {"dump-cpuid", no_argument, NULL, 'd'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    struct llc_sysinfo_options opt = {.allow_hugepage_reserve = true};
    bool json = false, want_dump = false;
    optind = 1;
    opterr = 0;
    int ch;
    while ((ch = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        switch (ch) {
        case 'j':
            json = true;
            break;
        case 's':
            opt.sysfs_root = optarg;
            break;
        case 'c':
            opt.cpuid_dump = optarg;
            break;
        case 'x':
            opt.hwloc_xml = optarg;
            break;
        case 'n':
            opt.allow_hugepage_reserve = false;
            break;
        case 'd':
            want_dump = true;
            break;
        case 'h':
            usage(stdout);
            return LLC_EXIT_OK;
        default:
            return llc_cli_usage("info", "unknown or incomplete option '%s'", argv[optind - 1]);
        }
    }
    if (optind < argc)
        return llc_cli_usage("info", "unexpected argument '%s'", argv[optind]);
    if (want_dump)
        return dump_cpuid();
    opt.live = !opt.sysfs_root && !opt.cpuid_dump;

    char err[LLC_ERRLEN];
    int status = LLC_EXIT_OK;
    json_t *doc = NULL;
    struct llc_sysinfo *si = calloc(1, sizeof(*si));
    if (!si)
        return llc_cli_fail("info", "out of memory");
    if (llc_sysinfo_collect(&opt, si, err, sizeof(err)) < 0) {
        status = llc_cli_fail("info", "%s", err);
        goto out;
    }
    if (!json) {
        llc_sysinfo_print_text(stdout, si);
        goto out;
    }
    doc = llc_sysinfo_to_json(si);
    if (!doc || json_dumpf(doc, stdout, JSON_INDENT(2)) < 0) {
        status = llc_cli_fail("info", "cannot write JSON");
        goto out;
    }
    fputc('\n', stdout);
out:
    json_decref(doc);
    free(si);
    return status;
}
