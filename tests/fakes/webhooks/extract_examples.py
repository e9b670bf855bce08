"""Copy the webhook payload examples the tests use out of ``@octokit/webhooks-examples``.

Regenerate with::

    npm install --prefix /tmp/octokit-webhooks @octokit/webhooks-examples@7.6.1
    python tests/fakes/webhooks/extract_examples.py \
        /tmp/octokit-webhooks/node_modules/@octokit/webhooks-examples/api.github.com/index.json

Each example is written unchanged as ``<event>.<action>.<n>.json`` (``<event>.<n>.json`` for
events without an action) beside this script.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

HERE = Path(__file__).parent

# event -> actions to keep (None: the event has no action). Handled events first, then a few
# the bot must ignore cleanly.
WANTED: dict[str, tuple[str | None, ...]] = {
    "pull_request": ("opened", "synchronize", "reopened", "ready_for_review", "closed"),
    "issue_comment": ("created", "deleted"),
    "pull_request_review_comment": ("created", "edited"),
    "check_run": ("rerequested", "completed"),
    "check_suite": ("rerequested",),
    "installation": ("created", "deleted"),
    "ping": (None,),
    "push": (None,),
}


def main(argv: list[str]) -> int:
    index = json.loads(Path(argv[1]).read_text(encoding="utf-8"))
    for event in index:
        actions = WANTED.get(event["name"])
        if actions is None:
            continue
        counts: dict[str | None, int] = {}
        for example in event["examples"]:
            action = example.get("action")
            if action not in actions:
                continue
            counts[action] = counts.get(action, 0) + 1
            stem = event["name"] if action is None else f"{event['name']}.{action}"
            target = HERE / f"{stem}.{counts[action]}.json"
            target.write_text(json.dumps(example, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
