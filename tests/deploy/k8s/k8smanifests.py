"""The manifests under deploy/k8s, loaded once for the tests beside this module, and the checks they share:
Kubernetes' own kinds against the API schemas (``kubernetes-validate``), the custom resources against the
openAPIV3Schema of their CRDs, vendored in ``crds/`` (the Prometheus Operator's and Strimzi's)."""

from __future__ import annotations

import functools
import tomllib
from pathlib import Path

import jsonschema
import kubernetes_validate
import yaml

ROOT = Path(__file__).resolve().parents[3]
K8S = ROOT / "deploy" / "k8s"
CRDS = Path(__file__).resolve().parent / "crds"
# The Kubernetes versions the manifests must fit: the oldest still common in managed offerings, and the newest
# kubernetes-validate knows
KUBERNETES_VERSIONS = ("1.30", kubernetes_validate.latest_version())
IMAGE_REPOSITORY = "localhost/kafka-compaction-monitor"  # what the images' build tags (Dockerfile, `collector`)


def files() -> list[Path]:
    return sorted(K8S.rglob("*.yaml"))


@functools.cache
def documents() -> tuple[tuple[Path, dict], ...]:
    return tuple((p, d) for p in files() for d in yaml.safe_load_all(p.read_text()) if d is not None)


def of_kind(kind: str, name: str | None = None) -> list[dict]:
    return [d for _, d in documents() if d["kind"] == kind and (name is None or d["metadata"]["name"] == name)]


def one(kind: str, name: str) -> dict:
    (doc,) = of_kind(kind, name)
    return doc


@functools.cache
def crd_schemas() -> dict[tuple[str, str], dict]:
    """(apiVersion, kind) -> the vendored openAPIV3Schema, strict as ``kubectl apply`` is (its default field
    validation since Kubernetes 1.27 rejects a field the schema does not name, where the API server would
    drop it silently)."""
    out = {}
    for p in sorted(CRDS.glob("*.yaml")):
        d = yaml.load(p.read_text(), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
        out[(d["apiVersion"], d["kind"])] = _strict(d["openAPIV3Schema"])
    return out


def _strict(schema):
    """``schema`` with ``additionalProperties: false`` on every object schema that names its properties and
    keeps no unknown field."""
    if isinstance(schema, list):
        return [_strict(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: ({n: _strict(s) for n, s in v.items()} if k in ("properties", "patternProperties") else _strict(v))
           for k, v in schema.items()}
    if ("properties" in out and "additionalProperties" not in out
            and not out.get("x-kubernetes-preserve-unknown-fields")):
        out["additionalProperties"] = False
    return out


def problems(doc: dict) -> list[str]:
    """Every way ``doc`` does not fit its schema: a custom resource its CRD's, a Kubernetes kind the API's
    (strict: an unknown field is an error) at each of KUBERNETES_VERSIONS."""
    key = (doc.get("apiVersion"), doc.get("kind"))
    if key in crd_schemas():
        validator = jsonschema.Draft7Validator(crd_schemas()[key])
        return [f"{'.'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(doc)]
    out = []
    for version in KUBERNETES_VERSIONS:
        try:
            kubernetes_validate.validate(doc, version, strict=True)
        except kubernetes_validate.ValidationError as exc:
            out.append(f"Kubernetes {version}: {'.'.join(map(str, exc.path))}: {exc.message}")
        except kubernetes_validate.SchemaNotFoundError:
            out.append(f"no schema for {key} (neither Kubernetes {version} nor a vendored CRD)")
    return out


def pods() -> list[tuple[dict, dict]]:
    """(workload, its pod spec) of every workload."""
    return [(d, d["spec"]["template"]["spec"]) for _, d in documents()
            if d["kind"] in ("Deployment", "DaemonSet", "StatefulSet")]


def collectors() -> list[tuple[dict, dict, dict]]:
    """(workload, pod spec, container) of every container that runs this project's image."""
    return [(w, spec, c) for w, spec in pods() for c in spec["containers"]
            if c["image"].startswith(IMAGE_REPOSITORY + ":")]


def arg(container: dict, flag: str) -> str | None:
    args = container["args"]
    return args[args.index(flag) + 1] if flag in args else None


def version() -> str:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
