#!/usr/bin/env python3
"""Rewrite section references to the old algorithm notes into docs/METHODS.md.

The code and headers used to cite algorithm notes that are not part of the
repository: a note's file name with a section ("statcache.md §3.3"), the
word "spec" before a section, or a bare "§2.3" whose note is implied by the
module. This rewrites every such reference to
the section of docs/METHODS.md that holds the same material, e.g.
"docs/METHODS.md §7.3", and names the papers instead of their seed numbers.

Usage: scripts/cite-methods.py [--check] [ROOT]
  ROOT     repository root (default: the one holding this script)
  --check  change nothing; list what would change; exit 1 if anything would

Idempotent: references already written as "METHODS.md §x" are left alone.
References it cannot place (a bare "§" in a file whose note is unknown) are
listed on stderr and make it exit 1, so a newly added one is not missed.
"""
import os
import re
import signal
import sys

DIRS = ["probe", "fit", "statmodel", "phase", "include", "scripts", "tests"]
EXTS = (".c", ".h", ".sh", ".py", ".txt", ".1", ".md", ".cmake")
SKIP = {"scripts/cite-methods.py"}

GS, SC, SP, SCC, CL = "gaussian-sampling", "statcache", "scarphase", "shared-cache", "call-loop"

# (note, section) -> METHODS section. A section missing here falls back to
# its parent (e.g. statcache 3.3.1 -> 3.3 -> 3), then to the note's part.
MAP = {
    GS: {"1": "1", "1.1": "1.1", "1.2": "1.2", "1.3": "1.3", "1.4": "1.4", "1.5": "1.5",
         "2": "2", "2.1": "2.1", "2.2": "2.2", "2.3": "2.3", "2.4": "2.4", "2.5": "2.5",
         "2.6": "2.6", "3": "3", "3.1": "3.1", "3.2": "3.2", "4": "4", "5": "5",
         "5a": "5.4", "6": "5", "7": "5.5"},
    SC: {"1": "6.1", "2": "6", "2.1": "6.2", "2.2": "6.3", "2.3": "6.4", "3": "7",
         "3.1": "7.1", "3.2": "7.2", "3.3": "7.3", "3.4": "7.4", "4": "7.5", "5": "7.6",
         "6": "9", "6.1": "9.1", "7": "8", "7.1": "8.1", "7.2": "8.2", "7.3": "8.3",
         "7.4": "8.4", "8": "8.5", "9": "7"},
    SP: {"1": "10.1", "2": "10.2", "3": "10.3", "4": "10.4", "5": "10.5", "6": "10.6",
         "7": "10.7", "8": "10.8", "9": "10.9", "10": "11", "10.1": "11.1", "10.2": "11.2",
         "11": "10"},
    SCC: {"1": "12.1", "2": "12.2", "2.1": "12.2", "2.2": "12.2", "2.3": "12.2", "2.4": "12.2",
          "3": "12.5", "4": "12.3", "5": "12.8", "6": "12.7", "7": "12.6", "7.1": "12.10",
          "7.2": "12.6", "7.3": "12.6", "7.4": "12.6", "7.5": "12.6", "7.6": "12.11"},
    CL: {},
}
PART = {GS: "1-§5", SC: "6-§9", SP: "10-§11", SCC: "12", CL: "13"}

# The note a bare "§n" means, by path prefix (longest match wins).
DEFAULT = [
    ("fit/", GS), ("include/llcprobe/fit.h", GS), ("include/llcprobe/map.h", GS),
    ("include/llcprobe/mapfile.h", GS), ("probe/map/", GS), ("probe/mapfile/", GS),
    ("probe/cmd/fit", GS), ("probe/cmd/map", GS), ("probe/cmd/sample", GS),
    ("probe/cmd/calibrate", GS), ("probe/man/", GS), ("tests/fit/", GS),
    ("tests/sample/", GS), ("tests/calibrate/", GS), ("tests/map", GS),
    ("scripts/eval-sampling.sh", GS), ("scripts/bench-map.sh", GS),
    ("scripts/bench-sample.sh", GS),
    ("statmodel/", SC), ("include/llcprobe/statmodel.h", SC), ("include/llcprobe/mrc.h", SC),
    ("probe/mrc/", SC), ("probe/rt/", SC), ("probe/cmd/mrc", SC), ("tests/mrc/", SC),
    ("tests/statmodel/", SC), ("scripts/eval-mrc.sh", SC), ("scripts/bench-mrc.sh", SC),
    ("phase/", SP), ("include/llcprobe/phase.h", SP), ("include/llcprobe/sampling.h", SP),
    ("probe/ipsampling/", SP), ("probe/cmd/phase", SP), ("tests/phase", SP),
    ("scripts/eval-phase.sh", SP), ("scripts/phase-overhead.py", SP),
    ("statmodel/contention", SCC), ("include/llcprobe/contention.h", SCC),
    ("include/llcprobe/profile.h", SCC), ("probe/profile/", SCC), ("probe/cmd/predict", SCC),
    ("probe/cmd/profile", SCC), ("probe/cmd/study", SCC), ("tests/contention/", SCC),
    ("tests/predictcli/", SCC), ("tests/profile/", SCC), ("scripts/eval-predict.sh", SCC),
    ("scripts/bench-predict.sh", SCC),
]

PAPERS_SHORT = {"000": "the phase-guided profiling paper", "001": "the StatCache paper",
                "002": "the phase markers paper", "003": "the ScarPhase paper",
                "004": "the Gaussian set-sampling paper"}

NOTE = r"(?P<note>gaussian-sampling|statcache|scarphase|shared-cache|call-loop)\.md"
SEC = r"§(?:\d+[a-z]?(?:\.\d+)*)"
# A reference group: an optional note prefix, then one or more sections
# joined by ", ", "-", " and ", "/".
GROUP = re.compile(
    r"(?P<prefix>(?:(?:\.\./)?(?:shared/)?specs/|\b[Ss]pec\s+(?:\*\s+)?)?" + NOTE + r"\s+"
    r"|\b[Ss]pec(?P<ws>\s+(?:\*\s+)?))?"
    r"(?P<refs>" + SEC + r"(?:(?:,\s*|-|–|\s+and\s+|/)" + SEC + r")*)")
FILE_ONLY = re.compile(r"(?:\.\./)?(?:shared/)?specs/" + NOTE + r"(?!\s*§)")
SPEC_PLAIN = re.compile(r"\bspec (?P<sec>\d+\.\d+)\b")  # "spec 1.3" in output text
SEED = re.compile(r"\b(?P<cap>[Ss])eed (?P<n>00[0-4])(?P<poss>'s)?(?=[\s),.;:]|$)")
ONE = re.compile(r"§(\d+[a-z]?(?:\.\d+)*)")


def default_note(rel):
    best = None
    for prefix, note in DEFAULT:
        if rel.startswith(prefix) and (best is None or len(prefix) > len(best[0])):
            best = (prefix, note)
    return best[1] if best else None


def map_section(note, sec):
    table = MAP[note]
    s = sec
    while True:
        if s in table:
            return table[s]
        if "." not in s:
            break
        s = s.rsplit(".", 1)[0]
    return PART[note].split("-")[0]


def rewrite(text, rel, problems):
    dflt = default_note(rel)
    out, pos = [], 0
    for m in GROUP.finditer(text):
        start = m.start()
        before = text[max(0, start - 24):start]
        if re.search(r"METHODS(?:-[a-z]+)?\.md(?:\s+\*)?\s+$", before) or before.endswith("\\(sc"):
            continue  # already rewritten
        if m.group("prefix") is None and m.group("ws") is None and \
                re.search(r"seed 00[0-4]\s+$|paper(?:'s)?\s+$", before):
            continue  # a paper's own section ("seed 003 §5.1"): only the name changes
        note = m.group("note") or dflt
        if note is None:
            line = text.count("\n", 0, start) + 1
            problems.append(f"{rel}:{line}: cannot place {m.group(0)!r} (unknown note for this file)")
            continue
        refs = ONE.sub(lambda r: "§" + map_section(note, r.group(1)), m.group("refs"))
        ws = m.group("ws")
        lead = "docs/METHODS.md" + (ws if ws is not None else " ")
        out.append(text[pos:start])
        out.append(lead + refs)
        pos = m.end()
    out.append(text[pos:])
    text = "".join(out)
    text = FILE_ONLY.sub(lambda m: "docs/METHODS.md §" + PART[m.group("note")], text)
    if dflt is not None:
        text = SPEC_PLAIN.sub(lambda m: "docs/METHODS.md §" + map_section(dflt, m.group("sec")), text)

    def seed(m):
        name = PAPERS_SHORT[m.group("n")]
        if m.group("cap") == "S":
            name = name[0].upper() + name[1:]
        return name + (m.group("poss") or "")
    text = SEED.sub(seed, text)
    # The notes' vocabulary, in docs/METHODS.md's words.
    text = text.replace("the [proposal] variant", "an extension")
    text = text.replace("[resolution]", "(ours)").replace("[proposal]", "(extension)")
    text = re.sub(r"\b([Tt])he spec's\b", lambda m: m.group(1) + "he method's", text)
    if rel.endswith(".1"):
        text = text.replace("§", "\\(sc")  # roff's section sign; the page stays ASCII
    return text


def main(argv):
    if "-h" in argv or "--help" in argv:
        print(__doc__)
        return 0
    check = "--check" in argv
    args = [a for a in argv if a != "--check"]
    if len(args) > 1 or any(a.startswith("-") for a in args):
        print("usage: cite-methods.py [--check] [ROOT] (--help: what it rewrites)", file=sys.stderr)
        return 2
    root = os.path.abspath(args[0] if args else os.path.join(os.path.dirname(__file__), ".."))
    problems, changed = [], []
    for d in DIRS:
        for dirpath, dirnames, filenames in os.walk(os.path.join(root, d)):
            dirnames[:] = [x for x in dirnames if not x.startswith(".")]
            for f in sorted(filenames):
                if not f.endswith(EXTS) and f != "CMakeLists.txt":
                    continue
                path = os.path.join(dirpath, f)
                rel = os.path.relpath(path, root)
                if rel in SKIP:
                    continue
                try:
                    with open(path, encoding="utf-8") as fh:
                        old = fh.read()
                except (UnicodeDecodeError, OSError):
                    continue
                new = rewrite(old, rel, problems)
                if new != old:
                    changed.append(rel)
                    if not check:
                        tmp = path + ".cite-tmp"
                        with open(tmp, "w", encoding="utf-8") as fh:
                            fh.write(new)
                        os.chmod(tmp, os.stat(path).st_mode)
                        os.replace(tmp, path)
    for p in problems:
        print("cite-methods: " + p, file=sys.stderr)
    verb = "would change" if check else "changed"
    print(f"cite-methods: {verb} {len(changed)} files")
    for c in changed:
        print("  " + c)
    if problems or (check and changed):
        return 1
    return 0


if __name__ == "__main__":
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # `| head` is not an error
    sys.exit(main(sys.argv[1:]))
