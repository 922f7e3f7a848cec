#!/usr/bin/env bash
# Runs every native Go fuzz target for FUZZTIME each (default 5s), one at a
# time, and stops at the first failure. Targets are found in the code: every
# "func FuzzXxx(f *testing.F)" in a *_fuzz_test.go file.
#
#   FUZZTIME=5s bash scripts/fuzz.sh
#   FUZZTIME=10m bash scripts/fuzz.sh -parallel 1   # extra flags go to go test
#
# A failing input is written to the package's testdata/fuzz/FuzzXxx/; once
# the bug is fixed, commit it there as a regression seed.
set -euo pipefail
cd "$(dirname "$0")/.."

fuzztime="${FUZZTIME:-5s}"

# A target outside a *_fuzz_test.go file would be missed below: refuse it.
if stray=$(grep -rl --include='*_test.go' --exclude='*_fuzz_test.go' '^func Fuzz[A-Za-z0-9_]*(f \*testing\.F)' .); then
	echo "fuzz: fuzz targets outside *_fuzz_test.go files:" $stray >&2
	exit 1
fi

# "pkg target" pairs, e.g. "./server FuzzParseSend".
targets=$(grep -rl --include='*_fuzz_test.go' 'func Fuzz' . |
	xargs grep -Ho '^func Fuzz[A-Za-z0-9_]*(f \*testing\.F)' |
	sed -E 's#^(.*)/[^/]+_fuzz_test\.go:func (Fuzz[A-Za-z0-9_]*)\(.*#\1 \2#' |
	sort)
if [[ -z "$targets" ]]; then
	echo "fuzz: no fuzz targets found" >&2
	exit 1
fi

n=$(wc -l <<<"$targets")
echo "fuzz: $n targets, $fuzztime each"
# Go 1.26's fuzzing coordinator can report "context deadline exceeded" as a
# failure when -fuzztime ends while a worker is mid-call on a busy machine,
# with no failing input found. Such a run, and only such a run, is tried
# once more; a real failure writes its input to testdata/fuzz and fails.
log=$(mktemp)
trap 'rm -f "$log"' EXIT
while read -r pkg target; do
	for try in 1 2; do
		echo "=== $target ($pkg)"
		if go test -run '^$' -fuzz "^${target}\$" -fuzztime "$fuzztime" "$@" "$pkg/" </dev/null 2>&1 | tee "$log"; then
			break
		fi
		if ((try == 2)) || ! grep -q '^    context deadline exceeded$' "$log" || grep -q 'Failing input written' "$log"; then
			exit 1
		fi
		echo "fuzz: $target stopped at the end of its time with no failing input (the coordinator's deadline race); once more"
	done
done <<<"$targets"
echo "fuzz: all $n targets passed"
