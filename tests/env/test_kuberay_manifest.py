"""The shipped KubeRay manifest (``examples/kuberay/raycluster.yaml``) against KubeRay's own
RayCluster v1 schema (the CRD's OpenAPI v3 schema, ``tests/fixtures/kuberay``): valid as the
API server validates it, and without a field the server would prune (a misspelt key is dropped
silently by Kubernetes, so it is an error here); its worker group declares the custom resource
the docs' pool settings ask for."""

from __future__ import annotations

import copy
import gzip
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema  # inspect_ai's dependency
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
MANIFEST = ROOT / "examples" / "kuberay" / "raycluster.yaml"
SCHEMA = ROOT / "tests" / "fixtures" / "kuberay" / "raycluster-v1.schema.json.gz"


def schema() -> dict[str, Any]:
    return json.loads(gzip.decompress(SCHEMA.read_bytes()))


def manifest() -> dict[str, Any]:
    return yaml.safe_load(MANIFEST.read_text(encoding="utf-8"))


def pruned(value: Any, node: dict[str, Any], path: str = "") -> Iterator[str]:
    """The paths of fields a structural schema does not know (the API server drops them)."""
    if (
        node.get("x-kubernetes-preserve-unknown-fields")
        or node.get("type") == "object"
        and not ("properties" in node or "additionalProperties" in node)
    ):
        return  # kept as written (metadata: the API server's own ObjectMeta check)
    if isinstance(value, dict):
        known = node.get("properties", {})
        extra = node.get("additionalProperties")
        for key, item in value.items():
            if key in known:
                yield from pruned(item, known[key], f"{path}.{key}")
            elif isinstance(extra, dict):
                yield from pruned(item, extra, f"{path}.{key}")
            elif extra is not True:
                yield f"{path}.{key}"
    elif isinstance(value, list) and "items" in node:
        for i, item in enumerate(value):
            yield from pruned(item, node["items"], f"{path}[{i}]")


def problems(document: dict[str, Any]) -> list[str]:
    validator = jsonschema.Draft7Validator(schema())
    errors = [f"{'.'.join(map(str, e.path))}: {e.message}" for e in validator.iter_errors(document)]
    return errors + [f"{p}: unknown field" for p in pruned(document, schema())]


def test_the_manifest_is_a_valid_raycluster() -> None:
    document = manifest()
    assert (document["apiVersion"], document["kind"]) == ("ray.io/v1", "RayCluster")
    assert problems(document) == []
    head = document["spec"]["headGroupSpec"]
    assert head["rayStartParams"]["num-cpus"] == "0"  # no environment actor on the head
    (group,) = document["spec"]["workerGroupSpecs"]
    declared = json.loads(json.loads(group["rayStartParams"]["resources"]))
    assert declared == {"sandmle_env": 1}


@pytest.mark.parametrize(
    ("where", "change", "expected"),
    [
        ("spec", lambda s: s.pop("headGroupSpec"), "'headGroupSpec' is a required property"),
        ("spec", lambda s: s["workerGroupSpecs"][0].update(replicas="two"), "is not of type"),
        ("spec", lambda s: s["workerGroupSpecs"][0].update(groupname="x"), "groupname: unknown"),
        ("spec", lambda s: s["headGroupSpec"]["template"]["spec"].pop("containers"), "containers"),
    ],
)
def test_the_check_catches_what_kubernetes_would_refuse_or_drop(where, change, expected) -> None:
    document = copy.deepcopy(manifest())
    change(document[where])
    assert any(expected in p for p in problems(document)), problems(document)
