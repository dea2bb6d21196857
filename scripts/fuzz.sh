#!/usr/bin/env bash
# fuzz.sh: run every fuzz target of the module for a short fixed time.
#
#   scripts/fuzz.sh            each target for FUZZTIME (default 10s)
#   FUZZTIME=1m scripts/fuzz.sh
#
# Targets are found by their declaration (func FuzzX(f *testing.F)) in the
# module's _test.go files, and each runs alone:
#   go test -run '^$' -fuzz '^FuzzX$' -fuzztime 10s ./pkg
# An input that fails a target is written by go test to
# pkg/testdata/fuzz/FuzzX/; keep it there: it then runs as a regression seed
# in every plain `go test`. The script runs every target and exits non-zero
# when any failed.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

fuzztime=${FUZZTIME:-10s}
failed=()
targets=0

while IFS=: read -r file name; do
	pkg=./$(dirname "$file")
	targets=$((targets + 1))
	echo "== $name ($pkg, $fuzztime)"
	if ! go test -run '^$' -fuzz "^${name}\$" -fuzztime "$fuzztime" "$pkg" </dev/null; then
		failed+=("$name ($pkg)")
	fi
done < <(git ls-files --cached --others --exclude-standard '*_test.go' |
	xargs grep -Ho '^func Fuzz[A-Za-z0-9_]*(f \*testing\.F)' |
	sed 's/^\(.*\):func \(Fuzz[A-Za-z0-9_]*\)(.*/\1:\2/' | sort -u)

if ((targets == 0)); then
	echo "fuzz.sh: no fuzz targets found" >&2
	exit 1
fi
if ((${#failed[@]})); then
	echo "fuzz.sh: ${#failed[@]} of $targets targets failed: ${failed[*]}" >&2
	echo "fuzz.sh: the failing inputs are in the packages' testdata/fuzz/; keep them as regression seeds" >&2
	exit 1
fi
echo "fuzz.sh: $targets targets, $fuzztime each, no failure"
