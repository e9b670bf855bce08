#!/usr/bin/env bash
# veribot demo: build a small git history in a temporary folder and review it. Offline, no key.
#
#   bash examples/demo.sh                      # text report
#   bash examples/demo.sh --format markdown    # any `veribot review` option is passed on
#
# History: `main` has examples/shop/base; branch `feature` renames geometry.py to shapes.py
# and applies examples/shop/feature (an equivalent refactoring, a real behaviour change, an
# unannotated parameter, a renamed and an added function), then a work-in-progress commit
# adds examples/shop/wip/coupons.py.broken as coupons.py, which does not parse.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$here")"
if [ -n "${VERIBOT:-}" ]; then
    veribot=("$VERIBOT")
elif [ -x "$root/.venv/bin/veribot" ]; then
    veribot=("$root/.venv/bin/veribot")
elif command -v veribot >/dev/null 2>&1; then
    veribot=(veribot)
else
    veribot=(python3 -m veribot.bot.cli)
fi

work="$(mktemp -d "${TMPDIR:-/tmp}/veribot-demo.XXXXXX")"
trap 'rm -rf "$work"' EXIT
repo="$work/shop"
mkdir -p "$repo"
g() { git -C "$repo" -c user.name=Demo -c user.email=demo@example.com -c commit.gpgsign=false "$@"; }

g init -q -b main
cp -R "$here/shop/base/." "$repo/"
g add -A && g commit -q -m "shop: prices and parcel shapes"
g checkout -q -b feature
g mv geometry.py shapes.py
cp -R "$here/shop/feature/." "$repo/"
g add -A && g commit -q -m "Refactor pricing; rename area to rect_area"
# Stored as .broken so that linters of this repository do not trip over it.
cp "$here/shop/wip/coupons.py.broken" "$repo/coupons.py"
g add -A && g commit -q -m "WIP: coupons"

extra=()
if ! command -v bwrap >/dev/null 2>&1; then
    # Code under review runs only inside bubblewrap; without it the review is proof-only.
    echo "bubblewrap is not installed, so no code can run: this demo is proof-only (nothing"
    echo "can be refuted). For the full demo: sudo apt-get install bubblewrap"
    extra=(--no-execute)
fi
echo "\$ veribot review ${extra[*]:-}$*    # in a fresh repository, branch 'feature', base: merge base with 'main'"
set +e
(cd "$repo" && "${veribot[@]}" review "${extra[@]}" "$@")
code=$?
set -e
case "$code" in
    0) echo "veribot exited with 0: nothing hit --fail-on." ;;
    1) echo "veribot exited with 1: a function was refuted (the off-by-one in bulk_discount)." ;;
    *) echo "veribot exited with $code: an error."; exit "$code" ;;
esac
