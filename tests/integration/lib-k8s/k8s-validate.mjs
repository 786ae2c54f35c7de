// k8s-validate.mjs NODE_MODULES FILE...: validate every document of each
// YAML FILE against Kubernetes' own JSON schemas (the npm package
// kubernetes-models, which bundles them with a validator; no network).
// Prints "ok FILE: KIND NAME" or "bad FILE: why" per document; exits 1
// when any document is bad or of a kind it does not know.
import fs from "fs";
const root = process.argv[2];
const yaml = (await import(root + "/js-yaml/index.js")).default;
const kinds = {
  "v1 Pod": (await import(root + "/kubernetes-models/v1/Pod.js")).Pod,
  "v1 ConfigMap": (await import(root + "/kubernetes-models/v1/ConfigMap.js")).ConfigMap,
  "v1 Secret": (await import(root + "/kubernetes-models/v1/Secret.js")).Secret,
  "v1 Service": (await import(root + "/kubernetes-models/v1/Service.js")).Service,
  "apps/v1 Deployment": (await import(root + "/kubernetes-models/apps/v1/Deployment.js")).Deployment,
  "networking.k8s.io/v1 NetworkPolicy":
    (await import(root + "/kubernetes-models/networking.k8s.io/v1/NetworkPolicy.js")).NetworkPolicy,
  "policy/v1 PodDisruptionBudget":
    (await import(root + "/kubernetes-models/policy/v1/PodDisruptionBudget.js")).PodDisruptionBudget,
};
let bad = 0;
for (const f of process.argv.slice(3)) {
  for (const doc of yaml.loadAll(fs.readFileSync(f, "utf8"))) {
    if (!doc) continue;
    const K = kinds[doc.apiVersion + " " + doc.kind];
    if (!K) {
      console.log("bad " + f + ": " + doc.apiVersion + " " + doc.kind + " is not checked here");
      bad = 1;
      continue;
    }
    try {
      new K(doc).validate();
      console.log("ok " + f + ": " + doc.kind + " " + doc.metadata.name);
    } catch (e) {
      console.log("bad " + f + ": " + e.message);
      bad = 1;
    }
  }
}
process.exit(bad);
