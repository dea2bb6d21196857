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

# inputs counts the saved inputs of a fuzz target (0 when it has none).
inputs() {
	if [[ -d $1 ]]; then
		find "$1" -type f | wc -l
	else
		echo 0
	fi
}
failed=()
targets=0

while IFS=: read -r file name; do
	pkg=./$(dirname "$file")
	targets=$((targets + 1))
	echo "== $name ($pkg, $fuzztime)"
	corpus="$pkg/testdata/fuzz/$name"
	before=$(inputs "$corpus")
	if ! out=$(go test -run '^$' -fuzz "^${name}\$" -fuzztime "$fuzztime" "$pkg" </dev/null 2>&1); then
		after=$(inputs "$corpus")
		# go test -fuzz sometimes ends "context deadline exceeded" when its
		# time runs out while a worker is busy, with no failing input: only a
		# new input in testdata/fuzz is a finding.
		if ((after == before)) && grep -q 'context deadline exceeded' <<<"$out"; then
			echo "$out" | tail -3
			echo "fuzz.sh: $name: the fuzzer's own time-out, no failing input: not a finding"
		else
			echo "$out"
			failed+=("$name ($pkg)")
		fi
	else
		echo "$out" | tail -2
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
