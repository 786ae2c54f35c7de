// k8s-validate.mjs NODE_MODULES FILE...: validate every document of each
// YAML FILE against Kubernetes' own JSON schemas (the npm package
// kubernetes-models, which bundles them with a validator; no network).
// Prints "ok FILE: KIND NAME" or "bad FILE: why" per document; exits 1
// when any document is bad or of a kind it does not know.
import fs from "fs";
const root = process.argv[2];
const yaml = (await import(root + "/js-yaml/index.js")).default;
const kinds = {
  Pod: (await import(root + "/kubernetes-models/v1/Pod.js")).Pod,
  ConfigMap: (await import(root + "/kubernetes-models/v1/ConfigMap.js")).ConfigMap,
};
let bad = 0;
for (const f of process.argv.slice(3)) {
  for (const doc of yaml.loadAll(fs.readFileSync(f, "utf8"))) {
    if (!doc) continue;
    const K = kinds[doc.kind];
    if (doc.apiVersion !== "v1" || !K) {
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
