#!/usr/bin/env bash
# Mutation testing with gremlins on the packages that keep Herald's promises:
# each package's own tests must catch the one-line breakages gremlins makes
# in it (a flipped comparison, a changed boundary, a swapped operator).
#
#   bash scripts/mutation.sh                 # every package below
#   bash scripts/mutation.sh --fast          # the quick ones, as CI runs them
#   bash scripts/mutation.sh store delivery  # just these
#
# Environment: THRESHOLD (test efficacy in percent a package must reach,
# default 85), WORKERS (parallel mutants, default 1: each one builds and
# runs the package's tests), TIMEOUT_COEFFICIENT (how many times its normal
# duration a test run may take before the mutant counts as timed out,
# default 10), MUTATION_OUT (where each package's log and JSON report go,
# default a new temporary directory).
#
# Mutants that cannot be killed because they change nothing that can be
# observed are listed, with the reason, in scripts/mutation-equivalent.md.
set -euo pipefail
cd "$(dirname "$0")/.."

# Pinned: another version makes other mutants, and the figures in the
# README would no longer compare.
gremlins_version=v0.6.0

all=(signature netguard ratelimit auth service delivery store)
# Each under about two minutes on an idle 2-core machine.
fast=(signature netguard ratelimit service)

pkgs=()
case "${1:-}" in
--fast) pkgs=("${fast[@]}") ;;
"") pkgs=("${all[@]}") ;;
*) pkgs=("$@") ;;
esac

threshold="${THRESHOLD:-85}"
workers="${WORKERS:-1}"
coefficient="${TIMEOUT_COEFFICIENT:-10}"
out="${MUTATION_OUT:-$(mktemp -d)}"
mkdir -p "$out"

# gremlins in a directory of its own version, built outside this module so
# that its dependencies never reach go.mod.
bin_dir="${XDG_CACHE_HOME:-$HOME/.cache}/herald/gremlins-$gremlins_version"
gremlins="$bin_dir/gremlins"
if [[ ! -x "$gremlins" ]]; then
	echo "mutation: installing gremlins $gremlins_version"
	mkdir -p "$bin_dir"
	(cd "$bin_dir" && GOBIN="$bin_dir" GOFLAGS=-mod=mod go install "github.com/go-gremlins/gremlins/cmd/gremlins@$gremlins_version")
fi

failed=()
summary=()
for pkg in "${pkgs[@]}"; do
	if [[ ! -d "$pkg" ]]; then
		echo "mutation: no package ./$pkg" >&2
		exit 2
	fi
	echo "=== ./$pkg"
	start=$SECONDS
	status=0
	"$gremlins" unleash --workers "$workers" --timeout-coefficient "$coefficient" \
		--threshold-efficacy "$threshold" --output "$out/$pkg.json" "./$pkg" \
		</dev/null >"$out/$pkg.log" 2>&1 || status=$?
	grep -E 'LIVED|TIMED OUT|Killed:|Timed out:|Test efficacy:|Mutator coverage:|threshold' "$out/$pkg.log" || true
	efficacy=$(sed -n 's/^Test efficacy: \([0-9.]*\)%.*/\1/p' "$out/$pkg.log")
	summary+=("$(printf '%-10s %7s%%  %4ds' "$pkg" "${efficacy:-?}" $((SECONDS - start)))")
	if [[ $status -ne 0 || -z "$efficacy" ]]; then
		failed+=("$pkg")
	fi
done

echo
echo "package    efficacy   time   (logs and JSON reports in $out)"
printf '%s\n' "${summary[@]}"
if [[ ${#failed[@]} -gt 0 ]]; then
	echo "mutation: below $threshold% test efficacy, or failed: ${failed[*]}" >&2
	exit 1
fi
