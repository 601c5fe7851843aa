// Validates Kubernetes objects against their schemas and prints the verdicts as JSON.
//   node validate.mjs MANIFESTS.yaml [CRD.yaml ...]
// Built-in kinds and the Prometheus Operator's and Gateway API's kinds: kubernetes-models (ajv validators
// generated from each project's OpenAPI schemas). A kind whose CRD is given: its openAPIV3Schema through ajv,
// with the API server's structural rules (defaults applied, unknown fields rejected) and its
// x-kubernetes-validations CEL rules. Any other kind is an error: every object must meet a schema.
// Output: {"objects": [...the parsed objects...], "results": [{apiVersion, kind, name, errors: [...]}]}.
import { readFileSync } from "node:fs";
import { parseAllDocuments } from "yaml";
import Ajv from "ajv";
import addFormats from "ajv-formats";
import { run } from "@bufbuild/cel";
import { ObjectMeta } from "@kubernetes-models/apimachinery/apis/meta/v1/ObjectMeta";

// apiVersion -> module of kubernetes-models classes, one export per kind.
const MODEL_MODULES = {
  "v1": "kubernetes-models/v1",
  "apps/v1": "kubernetes-models/apps/v1",
  "rbac.authorization.k8s.io/v1": "kubernetes-models/rbac.authorization.k8s.io/v1",
  "policy/v1": "kubernetes-models/policy/v1",
  "autoscaling/v2": "kubernetes-models/autoscaling/v2",
  "monitoring.coreos.com/v1": "@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1",
  "gateway.networking.k8s.io/v1": "@kubernetes-models/gateway-api/gateway.networking.k8s.io/v1",
};

// YAML 1.1, as Kubernetes reads manifests: an unquoted yes/no/on/off is a boolean there too.
function parseDocuments(text) {
  const objects = [];
  for (const doc of parseAllDocuments(text, { version: "1.1", uniqueKeys: true })) {
    if (doc.errors.length) throw new Error("YAML: " + doc.errors.map(e => e.message).join("; "));
    const value = doc.toJS({ maxAliasCount: 100 });
    if (value !== null && value !== undefined) objects.push(value);
  }
  return objects;
}

function crdSchemas(paths) {
  const byType = new Map();
  for (const p of paths) {
    for (const crd of parseDocuments(readFileSync(p, "utf8"))) {
      for (const v of crd.spec.versions) {
        byType.set(`${crd.spec.group}/${v.name} ${crd.spec.names.kind}`, v.schema.openAPIV3Schema);
      }
    }
  }
  return byType;
}

// A structural schema rejects fields it does not declare (the API server prunes them, or refuses them
// under strict field validation, kubectl's default).
function toJsonSchema(s) {
  if (s === null || typeof s !== "object") return s;
  const out = {};
  for (const [k, v] of Object.entries(s)) {
    if (k.startsWith("x-kubernetes-")) continue;
    if (k === "properties") out.properties = Object.fromEntries(Object.entries(v).map(([n, c]) => [n, toJsonSchema(c)]));
    else if (k === "items" || k === "additionalProperties") out[k] = typeof v === "object" ? toJsonSchema(v) : v;
    else out[k] = v;
  }
  if (s.type === "object" && s.properties !== undefined && s.additionalProperties === undefined
      && !s["x-kubernetes-preserve-unknown-fields"]) {
    out.additionalProperties = false;
  }
  return out;
}

// CEL sees integers as int and objects as maps, as the API server builds them from the schema.
function toCel(value, schema) {
  if (Array.isArray(value)) return value.map(v => toCel(v, schema?.items));
  if (value !== null && typeof value === "object") {
    return new Map(Object.entries(value).map(([k, v]) =>
      [k, toCel(v, schema?.properties?.[k] ?? (typeof schema?.additionalProperties === "object" ? schema.additionalProperties : undefined))]));
  }
  if (typeof value === "number" && schema?.type === "integer") return BigInt(value);
  return value;
}

function celErrors(value, schema, path) {
  const errors = [];
  if (value === undefined || schema === undefined) return errors;
  for (const v of schema["x-kubernetes-validations"] ?? []) {
    let ok, why = "";
    try { ok = run(v.rule, { self: toCel(value, schema) }); } catch (e) { ok = false; why = ` (the rule did not run: ${e.message})`; }
    if (ok !== true) errors.push(`${path || "/"}: ${v.message ?? "failed rule " + v.rule}${why}`);
  }
  if (Array.isArray(value)) value.forEach((item, i) => errors.push(...celErrors(item, schema.items, `${path}/${i}`)));
  else if (value !== null && typeof value === "object") {
    for (const [k, child] of Object.entries(value)) {
      const childSchema = schema.properties?.[k] ?? (typeof schema.additionalProperties === "object" ? schema.additionalProperties : undefined);
      errors.push(...celErrors(child, childSchema, `${path}/${k}`));
    }
  }
  return errors;
}

function ajvErrors(errors) {
  return (errors ?? []).map(e => `${e.instancePath || "/"} ${e.message}${e.params?.additionalProperty ? ": " + e.params.additionalProperty : ""}`);
}

async function validate(obj, crds, ajv) {
  const { apiVersion, kind } = obj;
  const crd = crds.get(`${apiVersion} ${kind}`);
  if (crd) {
    const data = structuredClone(obj);
    const check = ajv.compile(toJsonSchema(crd));
    const errors = check(data) ? [] : ajvErrors(check.errors); // fills in defaults, as the API server does
    try { new ObjectMeta(obj.metadata ?? {}).validate(); } catch (e) { errors.push("metadata: " + e.message); }
    if (!obj.metadata?.name) errors.push("metadata.name is required");
    return errors.length ? errors : celErrors(data, crd, "");
  }
  const module = MODEL_MODULES[apiVersion];
  if (!module) return [`no schema for apiVersion ${apiVersion}`];
  const models = await import(module);
  const Model = models[kind];
  if (!Model) return [`no schema for ${apiVersion} ${kind}`];
  try {
    new Model(obj).validate();
    return [];
  } catch (e) {
    return [e.message];
  }
}

const [manifests, ...crdPaths] = process.argv.slice(2);
const objects = parseDocuments(readFileSync(manifests, "utf8"));
const crds = crdSchemas(crdPaths);
const ajv = new Ajv({ allErrors: true, strict: false, useDefaults: true });
addFormats(ajv);
const results = [];
for (const obj of objects) {
  results.push({ apiVersion: obj.apiVersion, kind: obj.kind, name: obj.metadata?.name ?? null, errors: await validate(obj, crds, ajv) });
}
process.stdout.write(JSON.stringify({ objects, results }));
