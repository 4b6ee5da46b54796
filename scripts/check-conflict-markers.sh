#!/usr/bin/env bash
# check-conflict-markers.sh: fails when a tracked text file of the
# repository holding the current directory still holds a merge's conflict
# markers, naming each file and line (make lint runs it). docs/results.md
# once went out with three of them and half its page twice.
#
# A marker is what git writes: "<<<<<<< LABEL", "||||||| LABEL" (diff3)
# and ">>>>>>> LABEL" at the start of a line, seven characters and a
# label. A "=======" line alone is no marker by itself (a Markdown setext
# heading, a separator in a text file): it is shown only between an
# opening and a closing marker, where it is the conflict's middle. Binary
# files are not read.
set -euo pipefail

git rev-parse --is-inside-work-tree >/dev/null 2>&1 || {
	echo "check-conflict-markers.sh: $PWD is not inside a git work tree" >&2
	exit 2
}
top="$(git rev-parse --show-toplevel)"
cd "$top"

# Candidates: tracked text files with an opening or closing marker (git
# grep reads the work tree's copy of every tracked file; -I skips binary
# ones). Its exit status 1 means none; more is an error, never a pass.
list="$(mktemp)"
trap 'rm -f "$list"' EXIT
rc=0
git grep -I -l -z -E '^(<<<<<<<|>>>>>>>|[|]{7}) [^[:space:]]' >"$list" || rc=$?
if [ "$rc" -gt 1 ]; then
	echo "check-conflict-markers.sh: git grep failed (exit $rc)" >&2
	exit 2
fi
files=()
while IFS= read -r -d '' f; do files+=("$f"); done <"$list"
[ ${#files[@]} -gt 0 ] || exit 0

echo "conflict markers in tracked files (a merge left unresolved; resolve them and commit):"
for f in "${files[@]}"; do
	awk -v name="$f" '
		{ sub(/\r$/, "") }
		/^(<<<<<<<|[|][|][|][|][|][|][|]) [^[:space:]]/ { inside = 1; show(); next }
		/^>>>>>>> [^[:space:]]/ { inside = 0; show(); next }
		inside && /^=======$/ { show() }
		# A label can be a whole commit subject: the line stays short.
		function show(line) {
			line = $0
			if (length(line) > 72) line = substr(line, 1, 69) "..."
			printf "  %s:%d: %s\n", name, FNR, line
		}' "$f"
done
exit 1
