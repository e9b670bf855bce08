"""Trim GitHub's published OpenAPI description to the operations the fake GitHub serves.

Origin: ``generated/api.github.com.json`` from the npm package ``@octokit/openapi``
(MIT licence). Regenerate the committed subset with::

    npm install --prefix /tmp/octokit-openapi @octokit/openapi@23.0.2
    python tests/fakes/openapi/trim_openapi.py \
        /tmp/octokit-openapi/node_modules/@octokit/openapi/generated/api.github.com.json

Only the request side is kept (path, query and body schemas); responses are dropped, and so
are prose fields (descriptions, examples) outside property maps. Every ``$ref`` the kept
parts reach is copied with them, so the subset is self-contained.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

ORIGIN_PACKAGE = "@octokit/openapi"
ORIGIN_VERSION = "23.0.2"
OUTPUT = Path(__file__).with_name("api.github.com.subset.json")

# (method, path template): every operation tests/fakes/github_server.py implements.
OPERATIONS: tuple[tuple[str, str], ...] = (
    ("get", "/app"),
    ("get", "/repos/{owner}/{repo}"),
    ("get", "/repos/{owner}/{repo}/pulls"),
    ("get", "/repos/{owner}/{repo}/pulls/{pull_number}"),
    ("get", "/repos/{owner}/{repo}/pulls/{pull_number}/files"),
    ("get", "/repos/{owner}/{repo}/pulls/{pull_number}/commits"),
    ("get", "/repos/{owner}/{repo}/pulls/{pull_number}/reviews"),
    ("post", "/repos/{owner}/{repo}/pulls/{pull_number}/reviews"),
    ("get", "/repos/{owner}/{repo}/pulls/{pull_number}/comments"),
    ("post", "/repos/{owner}/{repo}/pulls/{pull_number}/comments/{comment_id}/replies"),
    ("post", "/repos/{owner}/{repo}/check-runs"),
    ("get", "/repos/{owner}/{repo}/check-runs/{check_run_id}"),
    ("patch", "/repos/{owner}/{repo}/check-runs/{check_run_id}"),
    ("get", "/repos/{owner}/{repo}/commits/{ref}"),
    ("get", "/repos/{owner}/{repo}/commits/{ref}/check-runs"),
    ("get", "/repos/{owner}/{repo}/commits/{commit_sha}/pulls"),
    ("get", "/repos/{owner}/{repo}/issues/{issue_number}/comments"),
    ("post", "/repos/{owner}/{repo}/issues/{issue_number}/comments"),
    ("patch", "/repos/{owner}/{repo}/issues/comments/{comment_id}"),
    ("post", "/repos/{owner}/{repo}/issues/comments/{comment_id}/reactions"),
    ("post", "/repos/{owner}/{repo}/pulls/comments/{comment_id}/reactions"),
    ("get", "/repos/{owner}/{repo}/collaborators/{username}/permission"),
    ("post", "/app/installations/{installation_id}/access_tokens"),
)

_PROSE = frozenset({"description", "example", "examples", "externalDocs", "summary"})


def _strip(node: Any, in_properties: bool = False) -> Any:
    if isinstance(node, dict):
        return {
            key: _strip(value, in_properties=(key == "properties" and not in_properties))
            for key, value in node.items()
            if in_properties or (key not in _PROSE and not key.startswith("x-"))
        }
    if isinstance(node, list):
        return [_strip(item) for item in node]
    return node


def _refs(node: Any) -> set[str]:
    found: set[str] = set()
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "$ref" and isinstance(value, str):
                found.add(value)
            else:
                found |= _refs(value)
    elif isinstance(node, list):
        for item in node:
            found |= _refs(item)
    return found


def trim(spec: dict[str, Any]) -> dict[str, Any]:
    """Return the self-contained subset of ``spec`` holding :data:`OPERATIONS`."""
    paths: dict[str, dict[str, Any]] = {}
    for method, template in OPERATIONS:
        operation = spec["paths"][template][method]
        kept = {
            k: operation[k] for k in ("operationId", "parameters", "requestBody") if k in operation
        }
        paths.setdefault(template, {})[method] = _strip(kept)
    components: dict[str, dict[str, Any]] = {}
    pending = _refs(paths)
    done: set[str] = set()
    while pending:
        ref = pending.pop()
        done.add(ref)
        _, _, kind, name = ref.split("/", 3)
        target = _strip(spec["components"][kind][name])
        components.setdefault(kind, {})[name] = target
        pending |= _refs(target) - done
    return {
        "openapi": spec["openapi"],
        "info": {
            "title": "GitHub REST API (request-side subset)",
            "version": spec["info"]["version"],
            "x-origin": f"npm {ORIGIN_PACKAGE}@{ORIGIN_VERSION}: generated/api.github.com.json",
        },
        "paths": paths,
        "components": {
            kind: dict(sorted(items.items())) for kind, items in sorted(components.items())
        },
    }


def main(argv: list[str]) -> int:
    source = Path(argv[1])
    subset = trim(json.loads(source.read_text(encoding="utf-8")))
    OUTPUT.write_text(json.dumps(subset, indent=1, sort_keys=False) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
