#!/usr/bin/env python3
"""Checks what schemas cannot: that the rendered Kubernetes objects of one
kustomization fit together and fit the gateway's interface.

    check_manifests.py RENDERED.yaml    (the output of `kubectl kustomize DIR`)

Selectors match the pod's labels, probes hit /healthz and /readyz on the
named port, the pod is locked down (non-root, read-only root, no
capabilities), the grace period covers preStop + --shutdown-grace, the
ConfigMap the pod mounts is the generated one and holds servers.json,
settings.json and team.json that parse and refer to each other, the Ingress
serves the --resource URL. Prints one line per failed check and exits 1 if
any failed.
"""

import json
import re
import sys
from urllib.parse import urlparse

import yaml

failures = []
passed = 0


def check(ok, what):
    global passed
    if ok:
        passed += 1
    else:
        failures.append(what)
    return ok


def one(objs, kind):
    found = [o for o in objs if o.get("kind") == kind]
    check(len(found) == 1, f"exactly one {kind} (found {len(found)})")
    return found[0] if found else None


def matches(selector, labels):
    return bool(selector) and all(labels.get(k) == v for k, v in selector.items())


def arg_value(args, flag):
    for i, a in enumerate(args):
        if a == flag and i + 1 < len(args):
            return args[i + 1]
        if a.startswith(flag + "="):
            return a.split("=", 1)[1]
    return None


def seconds(text):
    m = re.fullmatch(r"(\d+)(ms|s|m)?", text or "")
    if not m:
        return None
    n, unit = int(m.group(1)), m.group(2) or "s"
    return {"ms": n / 1000, "s": n, "m": n * 60}[unit]


def mem_bytes(q):
    m = re.fullmatch(r"(\d+)(Ki|Mi|Gi)?", str(q))
    if not m:
        return None
    return int(m.group(1)) * {None: 1, "Ki": 1 << 10, "Mi": 1 << 20, "Gi": 1 << 30}[m.group(2)]


def check_config(cm, secret_mount):
    data = cm.get("data") or {}
    files = {}
    for name in ("servers.json", "settings.json", "team.json"):
        if not check(name in data, f"ConfigMap {cm['metadata']['name']} has {name}"):
            continue
        try:
            files[name] = json.loads(data[name])
            check(True, f"{name} parses")
        except json.JSONDecodeError as e:
            check(False, f"{name} parses: {e}")
    servers = (files.get("servers.json") or {}).get("mcpServers")
    if not check(isinstance(servers, dict) and servers, "servers.json has a non-empty mcpServers object"):
        servers = {}
    for name, d in servers.items():
        check(("command" in d) != ("url" in d), f"server {name}: exactly one of command or url")
        if "url" in d:
            check(urlparse(d["url"]).scheme in ("http", "https"), f"server {name}: url is http(s)")
        values = list((d.get("env") or {}).values()) + list((d.get("headers") or {}).values()) + list(d.get("args") or [])
        for v in values:
            for path in re.findall(r"\$\{file:([^}]*)\}", str(v)):
                check(path.startswith(secret_mount + "/"),
                      f"server {name}: ${{file:{path}}} is under the mounted Secret folder {secret_mount}")
    profiles = ((files.get("settings.json") or {}).get("profiles") or {}).get("list")
    if not check(isinstance(profiles, list) and profiles, "settings.json has profiles.list (profile.rs ProfileSettings)"):
        profiles = []
    names = [p.get("name") for p in profiles]
    check(len(set(n.lower() for n in names if n)) == len(names), f"profile names are set and unique: {names}")
    for p in profiles:
        for s in p.get("servers") or []:
            check(s.get("name") in servers, f"profile {p.get('name')}: server {s.get('name')} is in servers.json")
            rule = s.get("tools")
            if rule is not None:
                check(isinstance(rule, dict) and len(rule) == 1 and next(iter(rule)) in ("allow", "deny")
                      and isinstance(next(iter(rule.values())), list),
                      f"profile {p.get('name')}: server {s.get('name')}: tools is {{\"allow\": [..]}} or {{\"deny\": [..]}}")
    # team/access.rs: {"access": [{"group"|"scope"|"subject": ..., "profiles": [...]}]},
    # no other keys; "Everything" is the built-in profile.
    team = files.get("team.json") or {}
    check(set(team) == {"access"}, f"team.json has only the key access ({sorted(team)})")
    access = team.get("access")
    if check(isinstance(access, list) and access, "team.json has a non-empty access list"):
        known = {n.lower() for n in names if n} | {"everything"}
        for a in access:
            who = [k for k in ("group", "scope", "subject") if k in a]
            check(len(who) == 1 and set(a) == {who[0], "profiles"},
                  f"team.json rule {a}: exactly one of group, scope, subject, and profiles")
            check(isinstance(a.get("profiles"), list) and a.get("profiles"), f"team.json rule {a}: profiles listed")
            for p in a.get("profiles") or []:
                check(p.lower() in known, f"team.json: profile {p} is defined in settings.json (or Everything)")

def main(path):
    with open(path) as f:
        objs = [o for o in yaml.safe_load_all(f) if o]
    dep = one(objs, "Deployment")
    svc = one(objs, "Service")
    cm = one(objs, "ConfigMap")
    hpa = one(objs, "HorizontalPodAutoscaler")
    pdb = one(objs, "PodDisruptionBudget")
    np = one(objs, "NetworkPolicy")
    sa = one(objs, "ServiceAccount")
    if not dep:
        return
    spec = dep["spec"]
    pod = spec["template"]["spec"]
    labels = spec["template"]["metadata"]["labels"]
    check(matches(spec["selector"]["matchLabels"], labels), "Deployment selector matches its pod labels")
    if svc:
        check(matches(svc["spec"].get("selector"), labels), "Service selector matches the pod labels")
        check(svc["spec"].get("sessionAffinity", "None") == "None", "Service has no session affinity (replicas are stateless)")
        ports = svc["spec"]["ports"]
        check(any(p.get("name") == "http" and p.get("port") == 80 and p.get("targetPort") == "http" for p in ports),
              "Service port 80 (http) -> the pod's named port http")
    if pdb:
        check(matches(pdb["spec"]["selector"]["matchLabels"], labels), "PodDisruptionBudget selector matches the pod labels")
    if np:
        check(matches(np["spec"]["podSelector"]["matchLabels"], labels), "NetworkPolicy podSelector matches the pod labels")
        in_ports = {p.get("port") for r in np["spec"].get("ingress", []) for p in r.get("ports", [])}
        out_ports = {p.get("port") for r in np["spec"].get("egress", []) for p in r.get("ports", [])}
        check(in_ports == {8080}, f"NetworkPolicy lets traffic in on 8080 only ({in_ports})")
        check({53, 443} <= out_ports, f"NetworkPolicy lets DNS (53) and HTTPS (443) out ({out_ports})")
    replicas = spec.get("replicas", 1)
    if hpa:
        ref = hpa["spec"]["scaleTargetRef"]
        check(ref["kind"] == "Deployment" and ref["name"] == dep["metadata"]["name"], "HPA scales the Deployment")
        lo, hi = hpa["spec"].get("minReplicas", 1), hpa["spec"]["maxReplicas"]
        check(lo <= replicas <= hi, f"Deployment replicas {replicas} within the HPA's {lo}..{hi}")
        if pdb:
            check(pdb["spec"].get("minAvailable", 0) < lo, "PDB minAvailable below the HPA's minReplicas (nodes can drain)")
    check(replicas >= 2, f"at least 2 replicas ({replicas})")
    check(pod.get("enableServiceLinks") is False, "enableServiceLinks: false (no SWITCHBOARD_* variables from Services)")
    check(pod.get("automountServiceAccountToken") is False, "no service account token in the pod")
    if sa:
        check(pod.get("serviceAccountName") == sa["metadata"]["name"], "pod uses the ServiceAccount")
    psc = pod.get("securityContext", {})
    check(psc.get("runAsNonRoot") is True and psc.get("runAsUser") == 65532, "pod runs as non-root uid 65532")
    check(psc.get("seccompProfile", {}).get("type") == "RuntimeDefault", "seccomp RuntimeDefault")

    cs = pod["containers"]
    check(len(cs) >= 1, "a container")
    c = next((c for c in cs if c["name"] == "switchboard"), cs[0])
    csc = c.get("securityContext", {})
    check(csc.get("allowPrivilegeEscalation") is False, "allowPrivilegeEscalation: false")
    check(csc.get("readOnlyRootFilesystem") is True, "readOnlyRootFilesystem: true")
    check(csc.get("capabilities", {}).get("drop") == ["ALL"], "capabilities drop ALL")
    check(not csc.get("capabilities", {}).get("add"), "no capabilities added")
    check(any(p.get("name") == "http" and p.get("containerPort") == 8080 for p in c.get("ports", [])),
          "container port 8080 named http")

    args = c.get("args") or []
    check(arg_value(args, "--http") == "0.0.0.0:8080", "--http 0.0.0.0:8080")
    config_dir = arg_value(args, "--config")
    check(config_dir == "/etc/switchboard", "--config /etc/switchboard")
    issuer = arg_value(args, "--oidc-issuer") or ""
    resource = arg_value(args, "--resource") or ""
    check(urlparse(issuer).scheme == "https" and urlparse(issuer).netloc, f"--oidc-issuer is an https URL ({issuer!r})")
    check(urlparse(resource).scheme == "https" and urlparse(resource).netloc, f"--resource is an https URL ({resource!r})")
    check(c.get("command") is None, "no command override (the image's entrypoint is `switchboard serve`)")

    for probe, path in (("startupProbe", "/healthz"), ("livenessProbe", "/healthz"), ("readinessProbe", "/readyz")):
        g = (c.get(probe) or {}).get("httpGet") or {}
        check(g.get("path") == path and g.get("port") in ("http", 8080), f"{probe} GET {path} on port http")

    grace = seconds(arg_value(args, "--shutdown-grace") or "25s")
    pre = ((c.get("lifecycle") or {}).get("preStop") or {}).get("sleep", {}).get("seconds", 0)
    tgps = pod.get("terminationGracePeriodSeconds", 30)
    check(grace is not None and tgps >= pre + grace + 5,
          f"terminationGracePeriodSeconds {tgps} >= preStop {pre} + --shutdown-grace {grace} + 5 to stop the servers")
    check(tgps >= 30, "terminationGracePeriodSeconds >= 30")

    res = c.get("resources") or {}
    for k in ("cpu", "memory"):
        check(k in (res.get("requests") or {}), f"resources.requests.{k}")
    check("memory" in (res.get("limits") or {}), "resources.limits.memory")
    rq, lm = mem_bytes(res.get("requests", {}).get("memory")), mem_bytes(res.get("limits", {}).get("memory"))
    check(rq and lm and lm >= rq and rq >= 64 << 20, f"memory request >= 64Mi and <= limit ({rq}, {lm})")

    mounts = {m["mountPath"]: m for m in c.get("volumeMounts", [])}
    vols = {v["name"]: v for v in pod.get("volumes", [])}
    state = arg_value(args, "--state") or "/var/lib/switchboard"
    for p in (state, "/tmp"):
        m = mounts.get(p)
        check(m and "emptyDir" in vols.get(m["name"], {}), f"{p} is an emptyDir")
    m = mounts.get(config_dir or "/etc/switchboard")
    if check(m is not None, "the config folder is mounted"):
        check(m.get("readOnly") is True and "subPath" not in m, "config mounted read-only, whole (no subPath: updates arrive)")
        v = vols.get(m["name"], {})
        if cm:
            check(v.get("configMap", {}).get("name") == cm["metadata"]["name"],
                  f"the pod mounts the rendered ConfigMap {cm['metadata']['name']}")
    secret_mount = None
    for p, m in mounts.items():
        v = vols.get(m["name"], {})
        if "secret" in v:
            secret_mount = p.rstrip("/")
            check(v["secret"].get("optional") is True, "the Secret files volume is optional")
            check(m.get("readOnly") is True, "Secret files mounted read-only")
    check(secret_mount is not None, "a Secret is mounted for ${file:...} values")
    env_from = c.get("envFrom") or []
    check(any("secretRef" in e and e["secretRef"].get("optional") is True for e in env_from),
          "envFrom an optional Secret for ${env:...} values")
    if cm:
        check_config(cm, secret_mount or "/var/run/secrets/switchboard")

    ing = [o for o in objs if o.get("kind") == "Ingress"]
    for i in ing:
        r = urlparse(resource)
        rules = i["spec"].get("rules", [])
        rule = next((x for x in rules if x.get("host") == r.hostname), None)
        if not check(rule is not None, f"Ingress {i['metadata']['name']} has a rule for the --resource host {r.hostname}"):
            continue
        tls_hosts = {h for t in i["spec"].get("tls", []) for h in t.get("hosts", [])}
        check(r.hostname in tls_hosts, f"Ingress serves {r.hostname} with TLS")
        paths = rule["http"]["paths"]
        for p in paths:
            b = p["backend"]["service"]
            check(svc and b["name"] == svc["metadata"]["name"], f"Ingress path {p['path']} -> the Service")
            check(svc and any(b["port"].get("name") == sp.get("name") or b["port"].get("number") == sp["port"]
                              for sp in svc["spec"]["ports"]), f"Ingress path {p['path']} -> a port of the Service")
        served = [p["path"] for p in paths]
        check(any(r.path == s or r.path.startswith(s.rstrip("/") + "/") for s in served),
              f"Ingress serves the resource path {r.path}")
        check("/.well-known/oauth-protected-resource" in served, "Ingress serves /.well-known/oauth-protected-resource")
        check(not any(s in ("/", "/metrics") for s in served), "Ingress does not publish / or /metrics")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
    for f in failures:
        print(f"  FAIL {f}")
    print(f"  {sys.argv[1]}: {passed} checks passed, {len(failures)} failed")
    sys.exit(1 if failures else 0)
