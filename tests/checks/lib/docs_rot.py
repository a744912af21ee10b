#!/usr/bin/env python3
"""Docs that cannot rot: every exporter flag, policy and metric name the docs mention exists.

Usage: docs_rot.py REPO EXPORTER   Prints one line per problem, then a summary; exit 1 on any.
 - every exporter flag (--web.*, --log.*, --collector.*, ...) in README.md, docs/ and the runbooks is
   in `EXPORTER --help`, and the README's flag table lists every flag of --help;
 - every YAML block in docs/ that is a policy file (has `defaults:` or `devices:` at the top
   level) is accepted by `EXPORTER check --config` (exit 2 with "invalid policy" = rejected);
 - every roce_* metric name in README.md, docs/, runbooks, alerts/ and dashboards/ is in the
   catalogue (`EXPORTER --print-metrics-doc`), histogram/summary suffixes allowed;
 - every repository path in README.md, docs/ (runbooks included), alerts/README.md and the
   READMEs under tests/ exists, backquoted or in prose, and every relative Markdown link resolves
   (a file moved by a refactoring leaves no dangling reference);
 - no runbook or doc says a field whose source is absent fires drift (the QoS engine reports it as
   roce_qos_observed_absent, never roce_qos_drift; docs/policy.md "Absent is not drift");
 - every PromQL selector in a runbook survives the lean scrape profile
   (deploy/prometheus/lean-metric-relabel.yaml): a runbook must work on both profiles;
 - no doc says the exporter keeps no state on disk without naming the mode, while --help offers
   --remediation.state-file (enforce keeps one);
 - README.md, docs/ and the READMEs under tests/ state the present: no dated session history
   ("run A", "runs A to E", "this session", machine-load narratives such as "load average" or
   "shared with other builds", "flaky"), no comparison with the past ("707 s before, 230 s after",
   "(the previous gzip)", a sentence opening on "Before,"); git keeps the history;
 - every measured figure in docs/ (a number with a unit: ms, s, %, MiB, ×, ... in a paragraph or
   table that says measured/median/p99/took/wall) has its reproducing command nearby: the same
   section (heading to heading) names a command in backquotes or holds a shell code block;
 - the pages that name the supported kernels (docs/kernels.md's title, the README's link to it)
   and the replay fixtures per kernel follow tests/testbed/kernel/series, the one list of them.
"""
import pathlib
import re
import subprocess
import sys
import tempfile

import yaml

# The exporter's own flag namespaces; other tools' flags (mlnx_qos --trust, cmake --install, ...)
# are outside them, so a flag here that --help lacks is a documentation bug.
FLAG_RE = re.compile(
    r"(?<![\w-])--(?:(?:web|log|collector|sampler|qos|remediation|storm|derive|check)\.[a-z0-9._-]*[a-z0-9]"
    r"|config|print-metrics-doc)\b")
METRIC_RE = re.compile(r"(?<![\w:./-])roce_[a-z0-9_]*[a-z0-9](?![\w.(/-])")
NOT_METRICS = {
    "roce_qos_exporter": "the binary",
    "roce_qos": "the alert rule file's stem",
    "roce_tos": "the policy key of the RoCE ToS",
    "roce_ports": "the policy key that says which ports the defaults check",
    "roce_port": "the check --json key: why a device is checked as a RoCE port",
    "roce_rp": "the dcqcn_params role key (ecn/roce_rp, the DCQCN reaction point)",
    "roce_np": "the dcqcn_params role key (ecn/roce_np, the DCQCN notification point)",
    "roce_rdma_errors_total": "docs/decisions.md: the metric deliberately not made",
}
METRIC_SUFFIXES = ("_bucket", "_sum", "_count")


# Trees that hold other projects' files: npm packages the Kubernetes check installs.
FOREIGN_PARTS = {"node_modules"}


def doc_files(repo, *globs):
    for pattern in globs:
        yield from sorted(p for p in repo.glob(pattern)
                          if p.is_file() and not FOREIGN_PARTS.intersection(p.relative_to(repo).parts))


# Flags of other tools that share a namespace with ours (node_exporter's --collector.*).
OTHER_TOOLS_FLAGS = {
    "--collector.disable-defaults": "node_exporter, in the side-by-side benchmark",
    "--collector.ethtool": "node_exporter, in the side-by-side benchmark",
}


def help_flags(exporter):
    text = subprocess.run([exporter, "--help"], capture_output=True, text=True).stdout
    return set(re.findall(r"(?<![\w-])--[a-z][a-z0-9._-]*[a-z0-9]", text)) - {"--help"}


def check_flags(repo, exporter, problems):
    known = help_flags(exporter)
    for path in doc_files(repo, "README.md", "docs/**/*.md", "deploy/**/*.yaml", "deploy/systemd/**/*"):
        for lineno, line in enumerate(path.read_text().splitlines(), 1):
            for flag in FLAG_RE.findall(line):
                if flag not in known and flag not in OTHER_TOOLS_FLAGS:
                    problems.append(f"{path.relative_to(repo)}:{lineno}: {flag} is not a flag of --help")
    readme = (repo / "README.md").read_text()
    table = set(re.findall(r"^\| `(--[a-z][a-z0-9._-]*)`", readme, re.M))
    for flag in sorted(known - table - {"--version", "--print-metrics-doc"}):
        problems.append(f"README.md: the flag table lacks {flag} (in --help)")
    return len(known)


def policy_blocks(repo):
    for path in doc_files(repo, "docs/**/*.md", "README.md"):
        text = path.read_text()
        for m in re.finditer(r"^```ya?ml\n(.*?)^```", text, re.M | re.S):
            body = m.group(1)
            if re.search(r"^(defaults|devices):", body, re.M) and "kind:" not in body:
                yield path, text[: m.start()].count("\n") + 2, body


def check_policies(repo, exporter, problems):
    count = 0
    with tempfile.TemporaryDirectory() as tmp:
        for path, lineno, body in policy_blocks(repo):
            count += 1
            policy = pathlib.Path(tmp) / "policy.yaml"
            policy.write_text(body)
            r = subprocess.run([exporter, "check", "--config", str(policy), "--netdev", "lo"],
                               capture_output=True, text=True)
            if r.returncode == 2 and "invalid policy" in r.stderr:
                problems.append(f"{path.relative_to(repo)}:{lineno}: the policy example is rejected: "
                                f"{r.stderr.strip().splitlines()[-1]}")
    return count


def catalogue(exporter):
    text = subprocess.run([exporter, "--print-metrics-doc"], capture_output=True, text=True).stdout
    return set(re.findall(r"`(roce_[a-z0-9_]+)`", text))


def check_metrics(repo, exporter, problems):
    known = catalogue(exporter)
    if not known:
        problems.append("the exporter printed no metric catalogue")
        return 0
    seen = 0
    for path in doc_files(repo, "README.md", "docs/**/*.md", "alerts/*.yaml", "alerts/**/*.yaml",
                          "dashboards/**/*.json"):
        if path.name in ("metrics.md", "kernel-interfaces.md"):
            continue  # the catalogue itself; kernel counter names, not metrics
        for lineno, line in enumerate(path.read_text().splitlines(), 1):
            for name in METRIC_RE.findall(line):
                seen += 1
                base = next((name[: -len(s)] for s in METRIC_SUFFIXES if name.endswith(s)), name)
                if name in NOT_METRICS or name in known or base in known:
                    continue
                problems.append(f"{path.relative_to(repo)}:{lineno}: {name} is not in the metric catalogue")
    return seen


# A repository path, backquoted or in prose: starts at a top-level folder of the tree (not after
# "/", ".", a word character or "-": URLs, absolute and relative paths are something else);
# placeholders (<x>, *, $, {a,b}, ...) make it a pattern, not a path.
TOP_DIRS = r"(?:collectors|exporter|tests|docs|scripts|deploy|alerts|dashboards|bench|fuzz|packaging)"
PATH_RE = re.compile(rf"(?<![\w./~-]){TOP_DIRS}/[\w./+<>*${{}}-]*")
PLACEHOLDER_RE = re.compile(r"[<>*${}]|\.\.\.|\b[A-Z]{2,}\b")
# A Markdown link or image target: ](target) or ](target "title").
LINK_RE = re.compile(r"\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
PATH_DOCS = ("README.md", "docs/**/*.md", "tests/**/README.md", "alerts/README.md")


def path_exists(repo, ref):
    target = repo / ref.rstrip("/")
    # A program of the build tree is named by its path there: its source is the file.
    return target.exists() or target.with_name(target.name + ".cc").exists()


def check_paths(repo, problems):
    seen = 0
    for path in doc_files(repo, *PATH_DOCS):
        for lineno, line in enumerate(path.read_text().splitlines(), 1):
            where = f"{path.relative_to(repo)}:{lineno}"
            for m in PATH_RE.finditer(line):
                ref = re.sub(r"[.,;]+$", "", m.group(0))  # sentence punctuation
                quoted = m.start() > 0 and line[m.start() - 1] == "`"
                # In prose only a file name (with an extension) counts: "file tests/x of another
                # repository" is not a path of this one.
                if PLACEHOLDER_RE.search(ref) or not (quoted or re.search(r"\.\w+$", ref)):
                    continue
                seen += 1
                if not path_exists(repo, ref):
                    problems.append(f"{where}: {ref} does not exist")
            for link in LINK_RE.findall(line):
                target = link.split("#", 1)[0]
                if not target or re.match(r"^[a-z][a-z0-9+.-]*:", target) or PLACEHOLDER_RE.search(target):
                    continue  # an anchor in the same file, a URL (https:, mailto:), a pattern
                seen += 1
                if not (path.parent / target).exists():
                    problems.append(f"{where}: link {link} does not resolve")
    return seen


def sentences(text):
    """Sentences of a Markdown file, fenced code blocks left out; line breaks inside a paragraph
    joined, a blank line ends a sentence."""
    text = re.sub(r"^```.*?^```", "", text, flags=re.M | re.S)
    # A list item, a table row and a heading start a new sentence, as a blank line does.
    for paragraph in re.split(r"\n\s*\n|\n(?=\s*(?:[*+-]|\d+\.|\||#+) )", text):
        flat = " ".join(paragraph.split())
        # A period ends a sentence only before a space and a capital or a backquote.
        yield from re.split(r"(?<=[.!?])\s+(?=[A-Z`*])", flat)


# An absent source is not drift (docs/policy.md). A sentence tying "absent" (or a source that does
# not exist on the device) to drift must say that it is not.
ABSENT_RE = re.compile(r"\babsent\b|source (?:does not exist|is missing)", re.I)
DRIFT_RE = re.compile(r"\bdrift\b|RoceQosDrift|roce_qos_drift\b")
NEGATION_RE = re.compile(r"\b(?:not|never|neither|nor|no|instead of)\b", re.I)


def check_absent_drift(repo, problems):
    seen = 0
    for path in doc_files(repo, "README.md", "docs/**/*.md", "alerts/README.md"):
        for sentence in sentences(path.read_text()):
            if ABSENT_RE.search(sentence) and DRIFT_RE.search(sentence):
                seen += 1
                # A negation elsewhere in the sentence does not excuse a clause that ties the two
                # ("absent counts as drift, unreadable does not").
                clauses = re.split(r"[,;:()]", sentence)
                affirmed = any(ABSENT_RE.search(c) and DRIFT_RE.search(c) and not NEGATION_RE.search(c)
                               for c in clauses)
                if affirmed or not NEGATION_RE.search(sentence):
                    problems.append(f"{path.relative_to(repo)}: says an absent source is drift "
                                    f"(it is roce_qos_observed_absent, never drift): {sentence[:160]}")
    return seen


# A PromQL selector with its label matchers: name{label="value", ...}.
SELECTOR_RE = re.compile(r"(?<![\w:])(roce_[a-z0-9_]+)\{([^}]*)\}")
MATCHER_RE = re.compile(r'(\w+)\s*=\s*"([^"]*)"')


def lean_drop_rules(repo):
    rules = yaml.safe_load((repo / "deploy/prometheus/lean-metric-relabel.yaml").read_text())
    return [(r["source_labels"], re.compile(r["regex"])) for r in rules if r.get("action") == "drop"]


def check_lean_safe(repo, problems):
    """A runbook query the lean profile drops returns nothing on a lean fleet. Only what a selector
    states is judged: a label it leaves open (or a placeholder such as prio="<p>") is not."""
    drops = lean_drop_rules(repo)
    seen = 0
    for path in doc_files(repo, "docs/runbooks/*.md"):
        for lineno, line in enumerate(path.read_text().splitlines(), 1):
            for name, matchers in SELECTOR_RE.findall(line):
                seen += 1
                labels = {"__name__": name, **dict(MATCHER_RE.findall(matchers))}
                for source_labels, regex in drops:
                    if all(l in labels for l in source_labels) and regex.fullmatch(
                            ";".join(labels[l] for l in source_labels)):
                        problems.append(f"{path.relative_to(repo)}:{lineno}: {name}{{{matchers}}} is dropped "
                                        f"by the lean profile (deploy/prometheus/lean-metric-relabel.yaml)")
    return seen


# "No state on disk" is true of observe and dry-run only: enforce keeps --remediation.state-file.
STATELESS_RE = re.compile(r"\b(?:no state on disk|stateless|keeps no state)\b", re.I)
MODE_RE = re.compile(r"\b(?:observe|dry-run|enforce)\b", re.I)


def check_state_claims(repo, exporter, problems):
    if "--remediation.state-file" not in help_flags(exporter):
        return 0
    seen = 0
    for path in doc_files(repo, "README.md", "docs/**/*.md", "alerts/README.md", "tests/**/README.md"):
        for sentence in sentences(path.read_text()):
            if STATELESS_RE.search(sentence):
                seen += 1
                if not MODE_RE.search(sentence):
                    problems.append(f"{path.relative_to(repo)}: claims no state on disk without naming the mode "
                                    f"(enforce keeps --remediation.state-file): {sentence[:160]}")
    return seen


# Session history: what a lab notebook says and a doc of the present does not. A capital letter
# names a run ("run A", "runs A to E"); "run a" is prose.
HISTORY_RE = re.compile(
    r"\b(?-i:[Rr]uns? [A-E](?: to [A-E])?)\b(?![\w'-])"
    r"|\b(?:this|last|previous|earlier|that) session\b"
    r"|\bload average\b|\bat load [~≈]?\d|\bload [~≈]?\d|\(load\b"
    r"|\b(?:shared|busy) with other (?:builds|guests|jobs)\b|\bwhile other builds\b"
    r"|\bflak(?:y|iness|es)\b"
    r"|\byesterday\b|\bthe first attempt\b", re.I)
# Where history is looked for: every page a reader takes for the present.
HISTORY_DOCS = ("README.md", "docs/**/*.md", "tests/**/README.md", "alerts/README.md")


def check_session_history(repo, problems):
    """Lines of the READMEs and docs/ outside code blocks and backquotes that tell session history."""
    seen = 0
    for path in doc_files(repo, *HISTORY_DOCS):
        text = re.sub(r"^```.*?^```", lambda m: "\n" * m.group(0).count("\n"), path.read_text(),
                      flags=re.M | re.S)
        for lineno, line in enumerate(text.splitlines(), 1):
            seen += 1
            m = HISTORY_RE.search(re.sub(r"`[^`]*`", "", line))  # a backquoted word is quoted, not told
            if m:
                problems.append(f"{path.relative_to(repo)}:{lineno}: states session history "
                                f"(\"{m.group(0)}\"; git keeps it, a doc states the present): "
                                f"{line.strip()[:120]}")
    return seen


# A doc of the present states the current figure and names an alternative by what it is; these
# phrasings tell the story of a change instead: a figure "before" beside a figure "after" ("707 s
# before, 230 s after"), a thing labelled by its past ("zlib (the previous gzip)"), a sentence that
# opens on "Before,". A figure must sit next to each word, so a temporal order ("read before the
# write, after the lock"; "killed before, between and after the writes") is left alone.
PAST_FIGURE = r"\d[\d,.]*[^.;:\d]{0,30}?"
PAST_RE = re.compile(
    rf"{PAST_FIGURE}\bbefore\b[,;]?\s+(?:and\s+)?[^.;]{{0,30}}?{PAST_FIGURE}\bafter\b"
    r"|\(the previous\b[^)]*\)|^Before,")


def check_past_comparisons(repo, problems):
    seen = 0
    for path in doc_files(repo, *HISTORY_DOCS):
        for sentence in sentences(path.read_text()):
            seen += 1
            m = PAST_RE.search(re.sub(r"`[^`]*`", "", sentence))
            if m:
                problems.append(f"{path.relative_to(repo)}: compares with the past (\"{m.group(0)}\"; "
                                f"state the present figure, name a thing by what it is): {sentence[:160]}")
    return seen


# A figure: a number with a unit, outside backquotes (`250ms` in backquotes is a value to type).
FIGURE_RE = re.compile(r"(?<![\w.`/=-])\d[\d,.]*(?:[–-]\d[\d,.]*)?\s?"
                       r"(?:ms|µs|us|ns|s|min|%|MiB|KiB|GiB|MB|KB|kB|GB|TB|×)(?!\w)")
# A paragraph that reports a measurement (not a default or a range of a flag).
MEASURED_RE = re.compile(r"(?<!not )(?<!never )\b(?:measured|median|p99|took|wall)\b(?! from\b)",
                         re.I)
# A command in backquotes: a program of the tree or a tool, optionally after VAR=value.
COMMAND_RE = re.compile(
    r"`(?:[A-Z_][A-Z0-9_]*=\S*\s+)*(?:nice -n -?\d+ )?(?:scripts/|tests/|bench/|build/|fuzz/|\.ci/"
    r"|alerts/alerttool|deploy/kubernetes/generate|(?:roce_qos_exporter|ctest|cmake|promtool|kubectl"
    r"|curl|bash|python3|sudo)\b)[^`]*`")
SHELL_BLOCK_RE = re.compile(r"^```(?:sh|bash|console)?\n", re.M)


def sections(text):
    """(first line number, text) of each part of a Markdown file from one heading to the next."""
    start, lines = 1, []
    for lineno, line in enumerate(text.splitlines(), 1):
        if re.match(r"#{1,6} ", line) and lines:
            yield start, "\n".join(lines)
            start, lines = lineno, []
        lines.append(line)
    yield start, "\n".join(lines)


def check_figures(repo, problems):
    seen = 0
    for path in doc_files(repo, "docs/**/*.md"):
        if path.name == "metrics.md":
            continue  # generated from the metric table: no measurement in it
        for start, body in sections(path.read_text()):
            has_command = COMMAND_RE.search(body) or SHELL_BLOCK_RE.search(body)
            prose = re.sub(r"^```.*?^```", "", body, flags=re.M | re.S)
            for paragraph in re.split(r"\n\s*\n", prose):
                bare = re.sub(r"`[^`]*`", "", paragraph)
                figures = FIGURE_RE.findall(bare)
                if not (figures and MEASURED_RE.search(bare)):
                    continue
                seen += len(figures)
                if not has_command:
                    heading = body.splitlines()[0].lstrip("# ").strip()
                    problems.append(f"{path.relative_to(repo)}:{start}: the section \"{heading}\" "
                                    f"reports measured figures ({', '.join(figures[:3])}) but names no "
                                    f"command that reproduces them")
    return seen


# The kernel list lives in tests/testbed/kernel/series; the pages that name the whole set follow it.
KERNEL_PAGES = {"docs/kernels.md": r"^# Kernel support: (.*)$",
                "README.md": r"docs/kernels\.md\)[^(]*\(([\d., ]+)\)"}


def check_kernel_list(repo, problems):
    series_file = repo / "tests/testbed/kernel/series"
    if not series_file.exists():
        return 0
    series = subprocess.run([str(series_file)], capture_output=True, text=True).stdout.split()
    for page, pattern in KERNEL_PAGES.items():
        path = repo / page
        m = path.exists() and re.search(pattern, path.read_text(), re.M)
        named = re.findall(r"\d+\.\d+", m.group(1)) if m else []
        if named != series:
            problems.append(f"{page}: names the kernels {named or 'nowhere'}, "
                            f"tests/testbed/kernel/series lists {series}")
    replay = repo / "tests/fixtures/replay"
    if not replay.is_dir():
        return len(series)
    version = lambda name: [int(x) for x in name.split(".")]  # 5.10 before 6.1
    captured = sorted((p.name for p in replay.iterdir() if p.is_dir()), key=version)
    if captured != series:
        problems.append(f"tests/fixtures/replay: holds captures of {captured}, tests/testbed/kernel/series "
                        f"lists {series} (tests/testbed/capture-fixtures)")
    return len(series)


def main():
    repo, exporter = pathlib.Path(sys.argv[1]), sys.argv[2]
    problems = []
    flags = check_flags(repo, exporter, problems)
    policies = check_policies(repo, exporter, problems)
    metrics = check_metrics(repo, exporter, problems)
    paths = check_paths(repo, problems)
    absent = check_absent_drift(repo, problems)
    lean = check_lean_safe(repo, problems)
    state = check_state_claims(repo, exporter, problems)
    history = check_session_history(repo, problems)
    past = check_past_comparisons(repo, problems)
    figures = check_figures(repo, problems)
    kernels = check_kernel_list(repo, problems)
    for p in problems:
        print(p)
    print(f"docs: {flags} flags, {policies} policy examples, {metrics} metric mentions, "
          f"{paths} repository paths and links, {absent} absent/drift sentences, {lean} runbook "
          f"selectors (lean profile), {state} state claims, {history} lines for session history, "
          f"{past} sentences for past comparisons, "
          f"{figures} measured figures, {kernels} kernel series checked; {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
