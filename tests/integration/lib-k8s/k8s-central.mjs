// k8s-central.mjs NODE_MODULES DIR OUT: judge the central proxy's
// manifests in DIR (contrib/k8s/central/) beyond their schemas: the
// proxy's pods hold no privilege, the Service, PDB and NetworkPolicies
// select what they should, agents may reach only the proxy's port (and
// kube-dns), and the ConfigMap's sessions find their tokens in the Secret.
// Writes the ConfigMap's postern.ini to OUT/postern.ini, and per session
// "NAME PATH" to OUT/sessions and the Secret's value to OUT/placeholder-NAME.
// Prints "ok: what" or "bad: why" per check; exits 1 when any is bad.
import fs from "fs";
import path from "path";
const [root, dir, out] = process.argv.slice(2);
const yaml = (await import(root + "/js-yaml/index.js")).default;

let bad = 0;
function check(cond, what) {
  console.log((cond ? "ok: " : "bad: ") + what);
  if (!cond) bad = 1;
}

const docs = [];
for (const f of fs.readdirSync(dir).filter((f) => f.endsWith(".yaml")).sort())
  for (const d of yaml.loadAll(fs.readFileSync(path.join(dir, f), "utf8")))
    if (d) docs.push(d);
const all = (kind) => docs.filter((d) => d.kind === kind);
function one(kind, name) {
  const d = docs.find((d) => d.kind === kind && d.metadata.name === name);
  if (!d) {
    console.log("bad: no " + kind + " " + name);
    process.exit(1);
  }
  return d;
}
// A selector's matchLabels all hold in LABELS (no matchExpressions here).
function selects(sel, labels) {
  if (!sel || sel.matchExpressions) return false;
  const m = sel.matchLabels || {};
  return Object.keys(m).length > 0 && Object.keys(m).every((k) => labels[k] === m[k]);
}
const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);

const dep = one("Deployment", "postern-central");
const pod = dep.spec.template;
const plabels = pod.metadata.labels || {};
const agent = one("Pod", "agent-a");
const alabels = agent.metadata.labels || {};

// The proxy's pods: replicas, and the "restricted" profile on every container.
check(dep.spec.replicas >= 2, "the Deployment runs at least 2 replicas");
check(selects(dep.spec.selector, plabels), "the Deployment's selector matches its pods");
check(dep.spec.strategy?.rollingUpdate?.maxUnavailable === 0,
  "a rolling update never takes a serving replica away first");
check(pod.spec.automountServiceAccountToken === false, "the proxy gets no API token");
check(!pod.spec.hostNetwork && !pod.spec.hostPID && !pod.spec.hostIPC,
  "the proxy's pod shares nothing of the node's");
const psc = pod.spec.securityContext || {};
for (const c of pod.spec.containers.concat(pod.spec.initContainers || [])) {
  const sc = c.securityContext || {};
  const n = "container " + c.name + ": ";
  check(/^postern-proxy:/.test(c.image), n + "image postern-proxy (contrib/Containerfile.proxy)");
  check((sc.runAsNonRoot ?? psc.runAsNonRoot) === true, n + "runAsNonRoot");
  const uid = sc.runAsUser ?? psc.runAsUser;
  check(Number.isInteger(uid) && uid !== 0, n + "runAsUser is set and not 0 (" + uid + ")");
  check(sc.allowPrivilegeEscalation === false, n + "allowPrivilegeEscalation: false");
  check(sc.readOnlyRootFilesystem === true, n + "readOnlyRootFilesystem: true");
  check(sc.privileged !== true, n + "not privileged");
  check(same(sc.capabilities?.drop, ["ALL"]) && !sc.capabilities?.add,
    n + "every capability dropped, none added");
  check((sc.seccompProfile ?? psc.seccompProfile)?.type === "RuntimeDefault",
    n + "seccomp RuntimeDefault");
  const r = c.resources || {};
  check(!!(r.requests?.cpu && r.requests?.memory && r.limits?.memory),
    n + "requests cpu and memory, limits memory");
  check(!!c.readinessProbe && !!c.livenessProbe, n + "readiness and liveness probes");
  for (const p of ["readinessProbe", "livenessProbe"]) {
    const pc = c[p]?.exec?.command || [];
    check(pc[0] === "/usr/bin/postern-proxy" && pc[1] === "ctl" && pc[2] === "status",
      n + p + " asks the admin socket (postern-proxy ctl status)");
  }
  for (const m of c.volumeMounts || [])
    check(!m.subPath, n + "mount " + m.name + " without subPath (reloads see edits)");
}
const ctr = pod.spec.containers[0];
const port = (ctr.ports || []).find((p) => p.containerPort === 3128 && p.protocol === "TCP");
check(!!port, "the proxy's container serves TCP 3128");

// Metrics: the pod's prometheus.io annotations point at the container's
// port "metrics", which the config's metrics = listener serves.
const mport = (ctr.ports || []).find((p) => p.name === "metrics");
check(!!mport && mport.containerPort === 9090 && mport.protocol === "TCP",
  "the proxy's container declares its metrics port, TCP 9090");
const ann = pod.metadata.annotations || {};
check(ann["prometheus.io/scrape"] === "true" && ann["prometheus.io/path"] === "/metrics" &&
  ann["prometheus.io/port"] === String(mport?.containerPort),
  "the prometheus.io annotations scrape /metrics on the metrics port");

// Service and PDB select the proxy's pods.
const svc = one("Service", "postern-central");
check((svc.spec.type ?? "ClusterIP") === "ClusterIP", "the Service is a ClusterIP");
check(svc.spec.ports.length === 1 && svc.spec.ports[0].port === 3128 &&
  (svc.spec.ports[0].targetPort === 3128 || svc.spec.ports[0].targetPort === port?.name),
  "the Service serves 3128, to the proxy's port");
check(selects({ matchLabels: svc.spec.selector }, plabels), "the Service selects the proxy's pods");
check(!selects({ matchLabels: svc.spec.selector }, alabels), "the Service does not select agents");
const pdb = one("PodDisruptionBudget", "postern-central");
check(pdb.spec.minAvailable === 1 && selects(pdb.spec.selector, plabels),
  "the PodDisruptionBudget keeps 1 proxy pod");

// The agents' policy: egress to the proxy's pods on TCP 3128, kube-dns on
// 53, nothing else.
const dnsPeer = (p) => same(p, { namespaceSelector: { matchLabels: {
  "kubernetes.io/metadata.name": "kube-system" } }, podSelector: { matchLabels: {
  "k8s-app": "kube-dns" } } });
const proxyPeer = (p) => Object.keys(p).length === 1 && selects(p.podSelector, plabels) &&
  !selects(p.podSelector, alabels);
const ports = (r) => (r.ports || []).map((p) => (p.protocol || "TCP") + "/" + p.port).sort().join(",");
const anp = one("NetworkPolicy", "postern-agents");
check(selects(anp.spec.podSelector, alabels), "postern-agents selects the agent pod");
check(!selects(anp.spec.podSelector, plabels), "postern-agents does not select the proxy");
check((anp.spec.policyTypes || []).includes("Egress"), "postern-agents restricts egress");
const eg = anp.spec.egress || [];
check(eg.length > 0 && eg.every((r) => (r.to || []).length > 0 && (r.ports || []).length > 0),
  "every agent egress rule names its peers and ports");
check(eg.every((r) => r.to.every(proxyPeer) && ports(r) === "TCP/3128" ||
  r.to.every(dnsPeer) && ports(r) === "TCP/53,UDP/53"),
  "agents reach only the proxy's pods on TCP 3128 and kube-dns on 53");
check(eg.filter((r) => r.to.every(proxyPeer)).length === 1, "one agent rule reaches the proxy");
check(!eg.some((r) => r.to.some((p) => p.ipBlock)), "no agent rule names addresses");
for (const np of all("NetworkPolicy"))
  check(np.metadata.name === "postern-agents" || !selects(np.spec.podSelector, alabels),
    "no other policy (" + np.metadata.name + ") widens the agents'");

// The proxy's policy: only agents in, on 3128.
const pnp = one("NetworkPolicy", "postern-central");
check(selects(pnp.spec.podSelector, plabels), "postern-central selects the proxy's pods");
check(same(pnp.spec.policyTypes, ["Ingress", "Egress"]), "postern-central restricts both ways");
const ing = pnp.spec.ingress || [];
// Two rules: the agents' (3128) and the monitoring namespace's (9090).
const agentPeer = (p) => same(p, { podSelector: anp.spec.podSelector });
const monPeer = (p) => same(p, { namespaceSelector: { matchLabels: {
  "kubernetes.io/metadata.name": "monitoring" } } });
const agentIn = ing.filter((r) => (r.from || []).some(agentPeer));
check(ing.length === 2 && agentIn.length === 1 && agentIn[0].from.length === 1 &&
  ports(agentIn[0]) === "TCP/3128", "only agents reach the proxy, on TCP 3128");
const monIn = ing.filter((r) => r !== agentIn[0]);
check(monIn.length === 1 && (monIn[0].from || []).length === 1 && monPeer(monIn[0].from[0]) &&
  ports(monIn[0]) === "TCP/9090",
  "the metrics port is reached from the monitoring namespace only, on TCP 9090");
// A rule without ports or peers opens every port to everyone; a peer
// other than the monitoring namespace's may hold an agent.
check(ing.every((r) => (r.from || []).length > 0 && (r.ports || []).length > 0) &&
  !ing.some((r) => (r.ports || []).some((p) => p.port === 9090 || p.port === "metrics") &&
  r.from.some((p) => !monPeer(p))),
  "agents cannot reach the metrics port (9090)");
for (const r of pnp.spec.egress || [])
  for (const p of r.to || [])
    if (p.ipBlock)
      check(/\/0$/.test(p.ipBlock.cidr) ? (p.ipBlock.except || []).some((e) =>
        e === "10.0.0.0/8" || e === "fc00::/7") : true,
        "the proxy's egress to " + p.ipBlock.cidr + " leaves the private ranges out");

// Config and tokens: each session's token_file is a key of the Secret, at
// its mount; the ini goes to OUT for postern-proxy --check.
const cm = one("ConfigMap", "postern-central-config");
const ini = cm.data["postern.ini"];
fs.writeFileSync(path.join(out, "postern.ini"), ini);
check(/^listen\s*=\s*tcp:\S+:3128\s+auth=token\s*$/m.test(ini),
  "the proxy's listener is on 3128 with auth=token");
const mline = ini.match(/^metrics\s*=\s*tcp:(\S+):(\d+)\s*$/m);
check(!!mline && String(mport?.containerPort) === mline[2] &&
  ann["prometheus.io/port"] === mline[2],
  "the config's metrics listener is on the annotated port");
check(svc.spec.ports.every((p) => p.port !== 9090 && p.targetPort !== "metrics"),
  "the Service does not carry the metrics port");
const vol = (name) => pod.spec.volumes.find((v) => v.name === name);
const cmv = pod.spec.volumes.find((v) => v.configMap?.name === "postern-central-config");
const cmm = ctr.volumeMounts.find((m) => m.name === cmv?.name);
check(!!cmm && cmm.readOnly === true && ctr.args.join(" ").includes(cmm.mountPath + "/postern.ini"),
  "the proxy reads postern.ini from the ConfigMap, read-only");
const sec = one("Secret", "postern-central-tokens");
const secv = pod.spec.volumes.find((v) => v.secret?.secretName === "postern-central-tokens");
const secm = ctr.volumeMounts.find((m) => m.name === secv?.name);
check(!!secm && secm.readOnly === true, "the tokens are mounted read-only");
check(secv?.secret?.defaultMode === 0o440 && psc.fsGroup === (ctr.securityContext.runAsGroup ?? psc.runAsGroup),
  "the token files are 0440 and of the proxy's group alone");
const sessions = [];
let cur = null;
for (const l of ini.split("\n")) {
  const s = l.match(/^\[session\s+([^\]\s]+)\]/);
  if (s) cur = s[1];
  else if (/^\[/.test(l)) cur = null;
  const t = l.match(/^token_file\s*=\s*(\S+)/);
  if (t) {
    check(cur !== null, "token_file " + t[1] + " is in a session");
    sessions.push([cur, t[1]]);
  }
}
check(sessions.length >= 2, "at least two sessions with tokens (" + sessions.length + ")");
const keys = Object.keys(sec.stringData || sec.data || {}).sort();
check(same(sessions.map((s) => path.basename(s[1])).sort(), keys),
  "every session's token is a key of the Secret, and every key a session's");
for (const [name, file] of sessions) {
  check(path.dirname(file) === secm?.mountPath, "session " + name + "'s token_file is in the Secret's mount");
  fs.writeFileSync(path.join(out, "placeholder-" + name), (sec.stringData || {})[path.basename(file)] + "\n");
}
fs.writeFileSync(path.join(out, "sessions"), sessions.map((s) => s.join(" ")).join("\n") + "\n");

// The example agent: selected as one, its URL names a session of the
// proxy and takes the token from a Secret of its own.
const env = Object.fromEntries(agent.spec.containers[0].env.map((e) => [e.name, e]));
const m = (env.HTTPS_PROXY?.value || "").match(/^http:\/\/([^:@]+):\$\(([A-Z_]+)\)@postern-central:3128$/);
check(!!m && sessions.some((s) => s[0] === m[1]), "the agent's HTTPS_PROXY names a session and the Service");
const tok = m && env[m[2]]?.valueFrom?.secretKeyRef;
check(!!tok && tok.name !== "postern-central-tokens" && !!one("Secret", tok.name),
  "the agent's token is from a Secret of its own");
const asc = agent.spec.containers[0].securityContext || {};
check(asc.runAsNonRoot === true && asc.allowPrivilegeEscalation === false &&
  same(asc.capabilities?.drop, ["ALL"]) && !asc.capabilities?.add, "the agent runs restricted");
check(agent.spec.automountServiceAccountToken === false, "the agent gets no API token");
process.exit(bad);
