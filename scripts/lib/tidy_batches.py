#!/usr/bin/env python3
"""Batches translation units for clang-tidy (scripts/check-style).

clang-tidy 14 runs its matchers over every declaration of a translation unit, system headers
included, so a unit of ours costs ~12 s of which our own code is a small part. A batch is one
generated file that #includes several units compiled with the same flags (same target and
directory): the system headers are walked once per batch instead of once per unit.

Usage: tidy_batches.py BUILD_DIR OUT_DIR MAX_PER_BATCH UNIT...
       tidy_batches.py --split BATCH
The first writes OUT_DIR/compile_commands.json and one OUT_DIR/batch-N.cc per batch, and prints, per
batch, a line "OUT_DIR/batch-N.cc<TAB>unit unit ...". A unit without a compile command is an error.
The build compiles the libraries in unity batches (cmake/unity.cmake), so its database names the
batch files: each of their units gets the batch's command, written to OUT_DIR/units/
compile_commands.json for the runs on one unit alone.
--split halves a batch that reported something: each half is a batch of its own, in a directory
beside it with its own compile_commands.json, printed the same way. Two units whose file-local
names collide fail their batch with a redefinition; halving separates them in a few runs where
checking every unit alone costs one header walk per unit.
"""

import json
import os
import re
import shlex
import sys

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
UNITY_BATCH = re.compile(r"/unity/roceqos_\w+_\d+\.cc$")


def flags_without_io(arguments, source):
    """The compile flags of one unit, without its output and its input."""
    kept, skip = [], False
    for arg in arguments:
        if skip:
            skip = False
        elif arg == "-o":
            skip = True
        elif arg not in ("-c", source):
            kept.append(arg)
    return kept


def main():
    build_dir, out_dir, per_batch = sys.argv[1], sys.argv[2], int(sys.argv[3])
    units = [os.path.abspath(u) for u in sys.argv[4:]]
    with open(os.path.join(build_dir, "compile_commands.json"), encoding="utf-8") as f:
        commands = unit_commands(json.load(f))
    os.makedirs(os.path.join(out_dir, "units"), exist_ok=True)
    write_database(os.path.join(out_dir, "units"), list(commands.values()))
    groups = {}
    for unit in units:
        entry = commands.get(unit)
        if entry is None:
            sys.exit(f"tidy_batches: no compile command for {unit} (rerun scripts/build)")
        arguments = entry.get("arguments") or shlex.split(entry["command"])
        flags = flags_without_io(arguments, entry["file"])
        key = (entry["directory"], os.path.dirname(unit), tuple(flags))
        groups.setdefault(key, []).append(unit)
    database = []
    batch = 0
    for (directory, _, flags), members in sorted(groups.items()):
        for start in range(0, len(members), per_batch):
            path = os.path.join(out_dir, f"batch-{batch}.cc")
            batch += 1
            database.append(write_batch(path, directory, flags, members[start:start + per_batch]))
    write_database(out_dir, database)


def unit_commands(database):
    """Each unit's compile command by its absolute path, a unity batch's spread to its units."""
    commands = {}
    for entry in database:
        arguments = entry.get("arguments") or shlex.split(entry["command"])
        source = entry["file"]
        if not UNITY_BATCH.search(source):
            commands[os.path.abspath(source)] = {**entry, "arguments": arguments}
            continue
        with open(source, encoding="utf-8") as f:
            units = [line.split('"')[1] for line in f if line.startswith("#include")]
        for unit in units:
            path = os.path.join(REPO_ROOT, unit)
            commands[path] = {"directory": entry["directory"], "file": path,
                              "arguments": [path if a == source else a for a in arguments]}
    return commands


def write_batch(path, directory, flags, members):
    """Writes the batch file and prints its line; returns its compile command."""
    with open(path, "w", encoding="utf-8") as f:
        f.writelines(f'#include "{unit}"\n' for unit in members)
    print(path + "\t" + " ".join(members))
    return {"directory": directory, "file": path, "arguments": [*flags, "-c", path, "-o", "/dev/null"]}


def write_database(out_dir, database):
    with open(os.path.join(out_dir, "compile_commands.json"), "w", encoding="utf-8") as f:
        json.dump(database, f, indent=1)


def split(batch_path):
    """Halves a batch into two batches, each in its own directory beside it."""
    with open(os.path.join(os.path.dirname(batch_path), "compile_commands.json"),
              encoding="utf-8") as f:
        entry = next(e for e in json.load(f) if e["file"] == batch_path)
    with open(batch_path, encoding="utf-8") as f:
        members = [line.split('"')[1] for line in f if line.startswith("#include")]
    flags = flags_without_io(entry["arguments"], batch_path)
    middle = (len(members) + 1) // 2
    for index, half in enumerate((members[:middle], members[middle:])):
        out_dir = batch_path.removesuffix(".cc") + f".{index}"
        os.makedirs(out_dir, exist_ok=True)
        path = os.path.join(out_dir, "batch.cc")
        write_database(out_dir, [write_batch(path, entry["directory"], flags, half)])

if __name__ == "__main__":
    if sys.argv[1:2] == ["--split"]:
        split(sys.argv[2])
    else:
        main()
