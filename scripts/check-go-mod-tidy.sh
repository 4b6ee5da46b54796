#!/usr/bin/env bash
# check-go-mod-tidy.sh: fails when a Go module of the repository holding the
# current directory (every tracked go.mod: the main module and
# integration/ferretdb's) is not what `go mod tidy` would make it, and
# prints the change tidy would make (make lint runs it). go.mod once
# listed github.com/prometheus/procfs, imported by internal/telemetry, as
# an indirect requirement.
#
# `go mod tidy -diff` (Go 1.23 and later) changes nothing, prints the diff
# of go.mod and go.sum and exits 1 when they differ from tidy's result.
# Each module is checked on its own (GOWORK=off: a go.work would otherwise
# decide its requirements).
set -euo pipefail
GO="${GO:-go}"

git rev-parse --is-inside-work-tree >/dev/null 2>&1 || {
	echo "check-go-mod-tidy.sh: $PWD is not inside a git work tree" >&2
	exit 2
}
cd "$(git rev-parse --show-toplevel)"

untidy=()
while IFS= read -r -d '' mod; do
	dir="$(dirname "$mod")"
	if ! (cd "$dir" && GOWORK=off GOFLAGS= "$GO" mod tidy -diff); then
		untidy+=("$dir")
	fi
done < <(git ls-files -z -- ":(glob)**/go.mod")

if [ ${#untidy[@]} -gt 0 ]; then
	echo "go.mod/go.sum not tidy in: ${untidy[*]} (the diff above is what tidy changes): run go mod tidy there and commit the result" >&2
	exit 1
fi
