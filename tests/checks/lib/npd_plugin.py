#!/usr/bin/env python3
"""node-problem-detector's custom plugin monitor, offline: config validation and one invocation.

  npd_plugin.py validate CONFIG PLUGIN_DIR   check CONFIG as NPD would load it; print the errors
  npd_plugin.py run CONFIG PLUGIN_DIR        run the rules' plugins once as NPD does; print one
                                             line per rule: "<status>\t<message>"

The rules follow NPD's code (kubernetes/node-problem-detector):
  pkg/custompluginmonitor/types/config.go  pluginConfig keys and defaults (invoke_interval 30s,
      timeout 5s, max_output_length 80, concurrency 3), plugin must be "custom", a rule's
      timeout may not exceed the global one, a permanent rule's condition needs a default
      condition, the rule's path must exist;
  pkg/custompluginmonitor/types/types.go   rule keys (type, condition, reason, path, args,
      timeout, invoke_interval), statuses OK=0, NonOK=1, Unknown=2;
  pkg/types/types.go                       rule type "temporary" | "permanent";
  pkg/custompluginmonitor/plugin/plugin.go the invocation: the smaller of rule and global
      timeout, stdout read up to 4 KiB, whitespace-trimmed, replaced by a "Timeout when running
      plugin" text when killed, cut at max_output_length bytes; exit 0 OK, 1 NonOK, else Unknown.
NPD decodes with encoding/json, which ignores unknown keys: here an unknown key is an error, since
it is a typo NPD would silently drop. A rule path is looked up by its base name in PLUGIN_DIR (the
directory that is mounted at the path's directory on the node).
"""
import json
import os
import re
import subprocess
import sys

GO_DURATION = re.compile(r"^([0-9]+(\.[0-9]*)?(ns|us|µs|ms|s|m|h))+$")
UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}
TOP_KEYS = {"plugin", "pluginConfig", "source", "conditions", "rules", "metricsReporting"}
PLUGIN_CONFIG = {
    "invoke_interval": "duration", "timeout": "duration", "max_output_length": "int",
    "concurrency": "int", "enable_message_change_based_condition_update": "bool",
    "skip_initial_status": "bool",
}
CONDITION_KEYS = {"type", "reason", "message"}
RULE_KEYS = {"type", "condition", "reason", "path", "args", "timeout", "invoke_interval"}
DEFAULTS = {"timeout": "5s", "invoke_interval": "30s", "max_output_length": 80, "concurrency": 3}
MAX_PLUGIN_BYTES = 4096  # plugin.go maxCustomPluginBufferBytes


def seconds(text):
    """A Go duration string in seconds (time.ParseDuration's grammar, no sign)."""
    return sum(float(n) * UNITS[u] for n, _, u in re.findall(r"([0-9]+(\.[0-9]*)?)(ns|us|µs|ms|s|m|h)", text))


def check_type(errors, where, value, kind):
    ok = {
        "duration": isinstance(value, str) and GO_DURATION.match(value) is not None,
        "int": isinstance(value, int) and not isinstance(value, bool) and value > 0,
        "bool": isinstance(value, bool),
        "string": isinstance(value, str) and value != "",
    }[kind]
    if not ok:
        errors.append(f"{where}: {value!r} is not a {'positive int' if kind == 'int' else kind}")
    return ok


def validate(config, plugin_dir):
    errors = []
    if not isinstance(config, dict):
        return ["the config is not a JSON object"]
    for key in sorted(set(config) - TOP_KEYS):
        errors.append(f"unknown top-level key {key!r} (NPD would ignore it)")
    if config.get("plugin") != "custom":
        errors.append(f"plugin is {config.get('plugin')!r}, NPD supports only \"custom\"")
    check_type(errors, "source", config.get("source"), "string")
    if "metricsReporting" in config:
        check_type(errors, "metricsReporting", config["metricsReporting"], "bool")
    pc = config.get("pluginConfig", {})
    if not isinstance(pc, dict):
        errors.append("pluginConfig is not an object")
        pc = {}
    for key, value in pc.items():
        if key not in PLUGIN_CONFIG:
            errors.append(f"unknown pluginConfig key {key!r} (NPD would ignore it)")
        else:
            check_type(errors, f"pluginConfig.{key}", value, PLUGIN_CONFIG[key])
    global_timeout = pc.get("timeout", DEFAULTS["timeout"])
    conditions = config.get("conditions")
    if not isinstance(conditions, list):
        errors.append("conditions is not a list")
        conditions = []
    condition_types = set()
    for i, cond in enumerate(conditions):
        if not isinstance(cond, dict):
            errors.append(f"conditions[{i}] is not an object")
            continue
        for key in sorted(set(cond) - CONDITION_KEYS):
            errors.append(f"conditions[{i}]: unknown key {key!r}")
        for key in sorted(CONDITION_KEYS):
            check_type(errors, f"conditions[{i}].{key}", cond.get(key), "string")
        condition_types.add(cond.get("type"))
    rules = config.get("rules")
    if not isinstance(rules, list) or not rules:
        errors.append("rules is not a non-empty list")
        rules = []
    for i, rule in enumerate(rules):
        errors += validate_rule(i, rule, condition_types, global_timeout, plugin_dir)
    return errors


def validate_rule(i, rule, condition_types, global_timeout, plugin_dir):
    errors = []
    if not isinstance(rule, dict):
        return [f"rules[{i}] is not an object"]
    for key in sorted(set(rule) - RULE_KEYS):
        errors.append(f"rules[{i}]: unknown key {key!r} (NPD would ignore it)")
    if rule.get("type") not in ("temporary", "permanent"):
        errors.append(f"rules[{i}].type {rule.get('type')!r} is not temporary or permanent")
    check_type(errors, f"rules[{i}].reason", rule.get("reason"), "string")
    if rule.get("type") == "permanent" and rule.get("condition") not in condition_types:
        errors.append(f"rules[{i}]: permanent problem {rule.get('condition')!r} has no default condition")
    args = rule.get("args", [])
    if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
        errors.append(f"rules[{i}].args is not a list of strings")
    for key in ("timeout", "invoke_interval"):
        if key in rule:
            check_type(errors, f"rules[{i}].{key}", rule[key], "duration")
    if ("timeout" in rule and GO_DURATION.match(str(rule["timeout"])) and GO_DURATION.match(str(global_timeout))
            and seconds(rule["timeout"]) > seconds(global_timeout)):
        errors.append(f"rules[{i}]: timeout {rule['timeout']} is greater than the global timeout {global_timeout}")
    path = rule.get("path")
    if not isinstance(path, str) or not os.path.isabs(path):
        errors.append(f"rules[{i}].path {path!r} is not an absolute path")
    else:
        local = os.path.join(plugin_dir, os.path.basename(path))
        if not os.path.isfile(local):
            errors.append(f"rules[{i}].path {path}: no {os.path.basename(path)} in {plugin_dir}")
        elif not os.access(local, os.X_OK):
            errors.append(f"rules[{i}].path {path}: {local} is not executable")
    return errors


def run_rule(config, rule, plugin_dir):
    """One invocation as plugin.go's run(): returns (status, message)."""
    pc = config.get("pluginConfig", {})
    timeout = seconds(pc.get("timeout", DEFAULTS["timeout"]))
    if "timeout" in rule:
        timeout = min(timeout, seconds(rule["timeout"]))
    max_len = pc.get("max_output_length", DEFAULTS["max_output_length"])
    path = os.path.join(plugin_dir, os.path.basename(rule["path"]))
    try:
        proc = subprocess.Popen([path] + rule.get("args", []), stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, start_new_session=True)
    except OSError as error:
        return "Unknown", f"Error in starting plugin: {error}"
    killed = False
    try:
        stdout, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        killed = True
        os.killpg(proc.pid, 9)  # util.Kill: the plugin's process group
        stdout, _ = proc.communicate()
    output = stdout[:MAX_PLUGIN_BYTES].decode("utf-8", "replace").strip()
    if killed:
        output = f"Timeout when running plugin {rule['path']!r}: output - {output!r}"
    output = output[:max_len]
    status = {0: "OK", 1: "NonOK"}.get(proc.returncode, "Unknown")
    return status, output


def main(argv):
    if len(argv) != 4 or argv[1] not in ("validate", "run"):
        print(__doc__, file=sys.stderr)
        return 2
    try:
        with open(argv[2], encoding="utf-8") as f:
            config = json.load(f)
    except (OSError, ValueError) as error:
        print(f"{argv[2]}: {error}")
        return 1
    errors = validate(config, argv[3])
    if argv[1] == "validate" or errors:
        for error in errors:
            print(f"{argv[2]}: {error}")
        return 1 if errors else 0
    for rule in config["rules"]:
        status, message = run_rule(config, rule, argv[3])
        print(f"{status}\t{message}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
