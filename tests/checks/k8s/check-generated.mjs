// Semantic check that the built manifests carry exactly the repository's sources:
//  - PrometheusRule roce-qos-exporter: spec.groups == the groups of every rule file under alerts/
//    (files whose top-level key is `groups:`), in file-name order;
//  - one ConfigMap per dashboards/grafana/*.json, labelled app.kubernetes.io/component:
//    grafana-dashboard (base; components/kube-prometheus-stack adds the sidecar's label), whose data is
//    that JSON (parsed, so only whitespace may differ), and small enough for client-side apply.
// Usage: node check-generated.mjs REPO_ROOT BUILT.json   (BUILT.json from validate.mjs --json)
import { readFileSync, readdirSync, statSync } from "node:fs";
import { join, relative, basename } from "node:path";
import { isDeepStrictEqual } from "node:util";
import { parse } from "yaml";

const [root, built] = process.argv.slice(2);
const objects = JSON.parse(readFileSync(built, "utf8"));
const errors = [];

function walk(dir) {
  let out = [];
  for (const e of readdirSync(dir)) {
    const p = join(dir, e);
    if (statSync(p).isDirectory()) out = out.concat(walk(p));
    else if (/\.ya?ml$/.test(e)) out.push(p);
  }
  return out;
}

const ruleGroups = [];
let ruleFiles = [];
try {
  ruleFiles = walk(join(root, "alerts")).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
} catch (e) {
  if (e.code !== "ENOENT") throw e;
}
for (const f of ruleFiles) {
  const doc = parse(readFileSync(f, "utf8"));
  if (doc && typeof doc === "object" && Object.keys(doc)[0] === "groups") {
    ruleGroups.push(...(doc.groups ?? []));
  }
}
const rules = objects.filter((o) => o.kind === "PrometheusRule");
if (rules.length !== 1) {
  errors.push(`expected 1 PrometheusRule, found ${rules.length}`);
} else if (!isDeepStrictEqual(rules[0].spec.groups ?? [], ruleGroups)) {
  errors.push("PrometheusRule spec.groups differ from alerts/ (run deploy/kubernetes/generate)");
} else {
  console.log(`ok: PrometheusRule = alerts/ (${ruleGroups.length} groups, ` +
    `${ruleGroups.reduce((n, g) => n + (g.rules?.length ?? 0), 0)} rules)`);
}

const dashDir = join(root, "dashboards", "grafana");
let dashboards = [];
try {
  dashboards = readdirSync(dashDir).filter((f) => f.endsWith(".json")).sort();
} catch (e) {
  if (e.code !== "ENOENT") throw e;
}
const maps = objects.filter((o) => o.kind === "ConfigMap" && o.metadata?.labels?.["app.kubernetes.io/component"] === "grafana-dashboard");
if (maps.length !== dashboards.length) {
  errors.push(`${maps.length} dashboard ConfigMaps for ${dashboards.length} files in dashboards/grafana`);
}
for (const file of dashboards) {
  const key = file;
  const cm = maps.find((m) => m.data && key in m.data);
  const rel = relative(root, join(dashDir, file));
  if (!cm) {
    errors.push(`no ConfigMap carries ${rel}`);
    continue;
  }
  const want = JSON.parse(readFileSync(join(dashDir, file), "utf8"));
  if (!isDeepStrictEqual(JSON.parse(cm.data[key]), want)) {
    errors.push(`ConfigMap ${cm.metadata.name} differs from ${rel}`);
  }
  // kubectl apply (client side) stores the object in an annotation limited to 256 KiB.
  const size = Buffer.byteLength(JSON.stringify(cm));
  if (size > 256 * 1024 - 4096) errors.push(`ConfigMap ${cm.metadata.name} is ${size} bytes: too big for kubectl apply`);
  else console.log(`ok: ConfigMap ${cm.metadata.name} = ${rel} (${size} bytes)`);
}

for (const e of errors) console.error(`FAIL: ${e}`);
process.exit(errors.length ? 1 : 0);
