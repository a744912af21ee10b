#!/usr/bin/env python3
"""Docs that cannot rot: every exporter flag, policy and metric name the docs mention exists.

Usage: docs_rot.py REPO EXPORTER   Prints one line per problem, then a summary; exit 1 on any.
 - every exporter flag (--web.*, --log.*, --collector.*, ...) in README.md, docs/ and the runbooks is
   in `EXPORTER --help`, and the README's flag table lists every flag of --help;
 - every YAML block in docs/ that is a policy file (has `defaults:` or `devices:` at the top
   level) is accepted by `EXPORTER check --config` (exit 2 with "invalid policy" = rejected);
 - every roce_* metric name in README.md, docs/, runbooks, alerts/ and dashboards/ is in the
   catalogue (`EXPORTER --print-metrics-doc`), histogram/summary suffixes allowed;
 - every repository path in backquotes in README.md, docs/ and the READMEs under tests/ exists
   (a file moved by a refactoring leaves no dangling reference).
"""
import pathlib
import re
import subprocess
import sys
import tempfile

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
    "roce_rp": "the dcqcn_params role key (ecn/roce_rp, the DCQCN reaction point)",
    "roce_np": "the dcqcn_params role key (ecn/roce_np, the DCQCN notification point)",
    "roce_rdma_errors_total": "docs/decisions.md: the metric deliberately not made",
}
METRIC_SUFFIXES = ("_bucket", "_sum", "_count")


def doc_files(repo, *globs):
    for pattern in globs:
        yield from sorted(p for p in repo.glob(pattern) if p.is_file())


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


# A backquoted repository path: starts at a top-level folder of the tree; placeholders (<x>, *, $,
# {a,b}, ...) make it a pattern, not a path.
PATH_RE = re.compile(r"`((?:collectors|exporter|tests|docs|scripts|deploy|alerts|dashboards|bench|fuzz|"
                     r"packaging)/[\w./+-]*)(?::\d+(?:-\d+)?)?`")
PLACEHOLDER_RE = re.compile(r"[<>*${}]|\.\.\.|\b[A-Z]{2,}\b")


def check_paths(repo, problems):
    seen = 0
    for path in doc_files(repo, "README.md", "docs/**/*.md", "tests/**/README.md"):
        for lineno, line in enumerate(path.read_text().splitlines(), 1):
            for ref in PATH_RE.findall(line):
                if PLACEHOLDER_RE.search(ref):
                    continue
                seen += 1
                target = repo / ref.rstrip("/")
                # A program of the build tree is named by its path there: its source is the file.
                if not (target.exists() or target.with_name(target.name + ".cc").exists()):
                    problems.append(f"{path.relative_to(repo)}:{lineno}: {ref} does not exist")
    return seen


def main():
    repo, exporter = pathlib.Path(sys.argv[1]), sys.argv[2]
    problems = []
    flags = check_flags(repo, exporter, problems)
    policies = check_policies(repo, exporter, problems)
    metrics = check_metrics(repo, exporter, problems)
    paths = check_paths(repo, problems)
    for p in problems:
        print(p)
    print(f"docs: {flags} flags, {policies} policy examples, {metrics} metric mentions, "
          f"{paths} repository paths checked; {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
