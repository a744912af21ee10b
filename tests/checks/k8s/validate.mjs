// Validates Kubernetes manifests (kustomize output) against the API schemas of the npm package
// kubernetes-models (+ @kubernetes-models/prometheus-operator for ServiceMonitor/PrometheusRule),
// and, because those schemas let unknown fields through, also rejects every field the schema does
// not define (what `kubectl apply --validate=strict` would reject).
//
// Usage: node validate.mjs [--json OUT.json] MANIFEST.yaml...
// Exit status 1 on any YAML, schema or unknown-field error; OUT.json receives all objects.
import { readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { parseAllDocuments } from "yaml";

const require = createRequire(import.meta.url);

function modelFor(apiVersion, kind) {
  const candidates = [];
  if (apiVersion.startsWith("monitoring.coreos.com/")) {
    candidates.push(`@kubernetes-models/prometheus-operator/${apiVersion}/${kind}`);
  } else {
    candidates.push(`kubernetes-models/${apiVersion}/${kind}`);
  }
  for (const id of candidates) {
    try {
      const mod = require(id);
      if (mod[kind]) return mod[kind];
    } catch (e) {
      if (e.code !== "MODULE_NOT_FOUND") throw e;
    }
  }
  return null;
}

// Wraps `value` so that every property the validator reads is recorded. A schema property is
// read as `data.name`; a map (labels, data, resources.limits) is enumerated with for..in. So an
// object that was never enumerated and has a key that was never read carries an unknown field.
function track(value, path, nodes) {
  if (value === null || typeof value !== "object") return value;
  const node = { path, value, read: new Set(), enumerated: false };
  nodes.push(node);
  const children = new Map();
  return new Proxy(value, {
    get(target, prop, receiver) {
      const v = Reflect.get(target, prop, receiver);
      if (typeof prop !== "string" || !Object.prototype.hasOwnProperty.call(target, prop)) return v;
      node.read.add(prop);
      if (v === null || typeof v !== "object") return v;
      if (!children.has(prop)) children.set(prop, track(v, `${path}/${prop}`, nodes));
      return children.get(prop);
    },
    ownKeys(target) {
      node.enumerated = true;
      return Reflect.ownKeys(target);
    },
  });
}

function unknownFields(nodes) {
  const out = [];
  for (const n of nodes) {
    if (Array.isArray(n.value) || n.enumerated) continue;
    for (const key of Object.keys(n.value)) {
      if (!n.read.has(key)) out.push(`${n.path}/${key}`);
    }
  }
  return out;
}

function validate(obj, where) {
  const errors = [];
  if (!obj || typeof obj !== "object" || !obj.apiVersion || !obj.kind) {
    return [`${where}: not a Kubernetes object (apiVersion/kind missing)`];
  }
  const name = `${where}: ${obj.kind}/${obj.metadata?.name ?? "?"}`;
  const Model = modelFor(obj.apiVersion, obj.kind);
  if (!Model) return [`${name}: no schema for ${obj.apiVersion} ${obj.kind}`];
  const nodes = [];
  try {
    // The model's validate() runs the compiled JSON-schema validator on `this`.
    Model.prototype.validate.call(track(structuredClone(obj), "", nodes));
  } catch (e) {
    errors.push(`${name}: schema: ${e.message}`);
  }
  for (const field of unknownFields(nodes)) errors.push(`${name}: unknown field ${field}`);
  return errors;
}

const args = process.argv.slice(2);
let jsonOut = null;
if (args[0] === "--json") {
  jsonOut = args[1];
  args.splice(0, 2);
}
if (args.length === 0) {
  console.error("usage: node validate.mjs [--json OUT.json] MANIFEST.yaml...");
  process.exit(2);
}

const all = [];
const errors = [];
for (const file of args) {
  const docs = parseAllDocuments(readFileSync(file, "utf8"), { uniqueKeys: true, prettyErrors: true });
  docs.forEach((doc, i) => {
    for (const e of [...doc.errors, ...doc.warnings]) errors.push(`${file} doc ${i}: YAML: ${e.message}`);
    const obj = doc.toJS();
    if (obj === null || obj === undefined) return;
    all.push(obj);
    errors.push(...validate(obj, `${file} doc ${i}`));
  });
}
for (const e of errors) console.error(e);
if (jsonOut) writeFileSync(jsonOut, JSON.stringify(all, null, 2));
console.log(`validate.mjs: ${all.length} objects, ${errors.length} errors`);
process.exit(errors.length ? 1 : 0);
