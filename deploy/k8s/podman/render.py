#!/usr/bin/env python3
"""Renders deploy/k8s/ into the Pods that Debian 12's podman (4.3) plays, for scripts/kube-demo.

    render.py pods --out DIR --image IMAGE --postgres-image IMAGE --port-base N --workers N [--manifests DIR]
    render.py secret-env ENV_FILE               a Secret for env valueFrom.secretKeyRef, on stdout
    render.py secret-files NAME KEY=PATH...     a Secret for a secret volume, on stdout

`pods` writes, in DIR: one file per Pod (a Deployment's replica i is Pod NAME-i, a Job and a CronJob's job are
a Pod of their own name, the Postgres and simulator Pods of this folder are added), each with its own
herald-config (POD.config.yaml, for --configmap: overlay.yaml's settings and the pod's ports), and plan.json,
which tells scripts/kube-demo each pod's containers, ports, probes (as URLs), volumes and grace period, the
settings of herald-config (none secret), and which manifests podman does not run, and why. It runs on the
Python of scripts/setup's venv, which has PyYAML (kubernetes-validate brings it).

What changes from the manifests, and why (docs/deployment.md, "The manifests, run with podman"):
- hostNetwork, and each pod's ports moved with the setting that chooses them (overlay.yaml), in the pod's own
  herald-config (podman 4.3 lets envFrom win over env, so env cannot override it): no pod network here, and
  two pods must not share a port; the ports list itself is left out (podman 4.3 makes each entry a
  port mapping, which host networking refuses), and kept in plan.json;
- the image is the one the demo built;
- an httpGet liveness probe becomes `heraldctl probe URL`: podman runs probes inside the container, as
  `curl`, which the image does not have; readiness and startup probes, which podman 4.3 ignores, are left
  out of the pod and run by the script;
- the preStop hook is left out (its sleep waits for a Service's endpoints to drop the pod; there are none);
- an emptyDir is named after its pod: podman 4.3 makes it a named volume by the volume's name alone, which
  every pod with a volume of that name would share;
- a secret volume says `optional: false` (podman 4.3 crashes on one that does not say).
"""

import argparse
import base64
import copy
import json
import string
import sys
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent
PROBES = ("livenessProbe", "readinessProbe", "startupProbe")


class RenderError(Exception):
    pass


def load_template(path, variables):
    try:
        return string.Template(path.read_text()).substitute(variables)
    except KeyError as missing:
        raise RenderError(f"{path.name}: no value for ${{{missing.args[0]}}}") from None


def named_port(container, port):
    """The containerPort a probe's port (a number or a port's name) means."""
    if isinstance(port, int):
        return port
    for entry in container.get("ports", []):
        if entry.get("name") == port:
            return entry["containerPort"]
    raise RenderError(f"container {container['name']}: no port named {port}")


def move_ports(pod_name, container, offsets, base, index, settings, chosen):
    """Gives each container port its host port, and the setting that chooses it its value (in `chosen`);
    returns {old port: new port}."""
    moved = {}
    for entry in container.get("ports", []):
        name, old = entry.get("name"), entry["containerPort"]
        if not isinstance(offsets, dict) or name not in offsets:
            raise RenderError(f"{pod_name}: overlay.yaml has no port offset for port {name}")
        keys = [k for k, v in settings.items() if k.endswith("_PORT") and str(v) == str(old)]
        if len(keys) != 1:
            raise RenderError(f"{pod_name}: port {name} ({old}) is chosen by no single setting in herald-config")
        new = base + offsets[name] + index
        entry["containerPort"] = new
        chosen[keys[0]] = str(new)
        moved[old] = new
    return moved


def convert_probes(container, moved):
    """httpGet probes as URLs on the host network; the liveness probe as heraldctl probe."""
    urls = {}
    for kind in PROBES:
        probe = container.pop(kind, None)
        if probe is None:
            continue
        http = probe.get("httpGet")
        if http is None:
            raise RenderError(f"container {container['name']}: {kind} is not httpGet")
        port = named_port(container, http["port"])
        urls[kind] = f"http://127.0.0.1:{moved.get(port, port)}{http.get('path', '/')}"
        if kind == "livenessProbe":
            timeout = str(probe.get("timeoutSeconds", 1))
            command = ["/opt/herald/bin/heraldctl", "probe", "--timeout", timeout, urls[kind]]
            kept = {k: v for k, v in probe.items() if k != "httpGet"}
            container[kind] = {"exec": {"command": command}, **kept}
    return urls


def fix_volumes(pod_name, spec):
    names = {}
    for volume in spec.get("volumes", []):
        if "emptyDir" in volume:
            names[volume["name"]] = f"{pod_name}-{volume['name']}"
            volume["name"] = names[volume["name"]]
        elif "secret" in volume:
            volume["secret"].setdefault("optional", False)
    for container in spec["containers"]:
        for mount in container.get("volumeMounts", []):
            mount["name"] = names.get(mount["name"], mount["name"])
    return sorted(names.values()) + sorted(
        v["secret"]["secretName"] for v in spec.get("volumes", []) if "secret" in v)


def make_pod(name, source, template, image, offsets, base, index, settings, env=None):
    spec = copy.deepcopy(template["spec"])
    spec["hostNetwork"] = True
    containers, chosen = [], {}
    for container in spec["containers"]:
        if image is not None:
            container["image"] = image
        moved = move_ports(name, container, offsets, base, index, settings, chosen)
        for key, value in (env or {}).items():
            container.setdefault("env", []).append({"name": key, "value": str(value)})
        urls = convert_probes(container, moved)
        container.pop("lifecycle", None)
        ports = {e.get("name"): e["containerPort"] for e in container.pop("ports", [])}
        containers.append({"name": f"{name}-{container['name']}", "probes": urls, "ports": ports})
    volumes = fix_volumes(name, spec)
    metadata = {"name": name, "labels": dict(template.get("metadata", {}).get("labels", {}))}
    annotations = template.get("metadata", {}).get("annotations")
    if annotations:
        metadata["annotations"] = dict(annotations)
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": spec}
    entry = {"name": name, "file": f"{name}.yaml", "configmap": f"{name}.config.yaml", "source": source,
             "containers": containers, "volumes": volumes,
             "stopSeconds": spec.get("terminationGracePeriodSeconds", 30)}
    return pod, entry, chosen


def render_pods(args):
    manifests = Path(args.manifests)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    base = args.port_base
    offsets = yaml.safe_load((HERE / "overlay.yaml").read_text())["ports"]
    variables = {"image": args.image, "postgres_image": args.postgres_image,
                 "pg_port": base + offsets["herald-postgres"], "sim_port": base + offsets["herald-sim"],
                 "intake_port": base + offsets["herald-intake"]["http"]}
    overlay = yaml.safe_load(load_template(HERE / "overlay.yaml", variables))

    documents = []
    for path in sorted(manifests.glob("*.yaml")):
        for document in yaml.safe_load_all(path.read_text()):
            if document:
                documents.append((path.name, document))
    configs = [d for _, d in documents if d["kind"] == "ConfigMap"]
    if len(configs) != 1:
        raise RenderError(f"expected one ConfigMap in {manifests}, found {len(configs)}")
    config = copy.deepcopy(configs[0])
    config["data"].update(overlay["settings"])
    settings = config["data"]

    plan = {"pods": [], "skipped": [], "ports": variables | {"base": base}, "settings": settings}
    pods = []
    for source, document in documents:
        kind, name = document["kind"], document["metadata"]["name"]
        if kind == "ConfigMap":
            continue
        if kind in overlay["not_run"]:
            plan["skipped"].append({"file": source, "kind": kind, "name": name, "why": overlay["not_run"][kind]})
        elif kind == "Deployment":
            replicas = args.workers if name == "herald-worker" else document["spec"].get("replicas", 1)
            for index in range(replicas):
                pods.append(make_pod(f"{name}-{index}", source, document["spec"]["template"], args.image,
                                     offsets.get(name, {}), base, index, settings, overlay["env"].get(name)))
        elif kind == "Job":
            pods.append(make_pod(name, source, document["spec"]["template"], args.image, {}, base, 0, settings))
        elif kind == "CronJob":
            template = document["spec"]["jobTemplate"]["spec"]["template"]
            pods.append(make_pod(name, source, template, args.image, {}, base, 0, settings))
        else:
            raise RenderError(f"{source}: podman cannot run a {kind} and overlay.yaml says nothing about it")
    for extra in ("postgres.yaml", "herald-sim.yaml"):
        template = yaml.safe_load(load_template(HERE / extra, variables))
        pods.append(make_pod(template["metadata"]["name"], f"podman/{extra}", template, None,
                             {}, base, 0, settings))
    for pod, entry, chosen in pods:
        (out / entry["file"]).write_text(yaml.safe_dump(pod, sort_keys=False))
        own = copy.deepcopy(config)
        own["data"].update(chosen)
        (out / entry["configmap"]).write_text(yaml.safe_dump(own, sort_keys=False))
        plan["pods"].append(entry)
    (out / "plan.json").write_text(json.dumps(plan, indent=2) + "\n")


def secret_env(args):
    """podman 4.3 reads a secretKeyRef's podman secret as a JSON object of base64 values."""
    values = {}
    for line in Path(args.env_file).read_text().splitlines():
        if line and not line.startswith("#"):
            key, _, value = line.partition("=")
            values[key] = base64.b64encode(value.encode()).decode()
    json.dump(values, sys.stdout)


def secret_files(args):
    """podman 4.3 writes a secret volume's `data` values into the files as they are (it decodes no base64)."""
    data = {}
    for pair in args.files:
        key, _, path = pair.partition("=")
        data[key] = Path(path).read_text()
    json.dump({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": args.name}, "data": data}, sys.stdout)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    pods = commands.add_parser("pods")
    pods.add_argument("--manifests", default=str(HERE.parent))
    pods.add_argument("--out", required=True)
    pods.add_argument("--image", required=True)
    pods.add_argument("--postgres-image", required=True)
    pods.add_argument("--port-base", type=int, required=True)
    pods.add_argument("--workers", type=int, required=True)
    env = commands.add_parser("secret-env")
    env.add_argument("env_file")
    files = commands.add_parser("secret-files")
    files.add_argument("name")
    files.add_argument("files", nargs="+")
    args = parser.parse_args()
    try:
        {"pods": render_pods, "secret-env": secret_env, "secret-files": secret_files}[args.command](args)
    except RenderError as error:
        print(f"render.py: {error}", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
