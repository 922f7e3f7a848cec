#!/usr/bin/env bash
# Mutation testing with gremlins on the packages that keep Herald's promises:
# each package's own tests must catch the one-line breakages gremlins makes
# in it (a flipped comparison, a changed boundary, a swapped operator).
#
#   bash scripts/mutation.sh                 # every package below
#   bash scripts/mutation.sh --fast          # the quick ones, as CI runs them
#   bash scripts/mutation.sh store delivery  # just these
#   SHARDS=2 bash scripts/mutation.sh store  # store's files in 2 runs at once
#   FILES='approvals.go channels.go' bash scripts/mutation.sh store
#
# Environment: THRESHOLD (test efficacy in percent a package must reach,
# default 85), WORKERS (parallel mutants per gremlins run, default 1: each
# one builds and runs the package's tests), TIMEOUT_COEFFICIENT (how many
# times its normal duration a test run may take before the mutant counts as
# timed out, default 10), MUTATION_OUT (where each package's log and JSON
# report go, default a new temporary directory).
#
# SHARDS (default 1) splits each package's files into that many groups of
# about as many mutants each and runs one gremlins per group, all at once;
# the package's figure adds them up. FILES (names of files in the package)
# mutates only those files: to check the tests of a few files in minutes.
# A shard's mutants are the same as in one run; only the timeout, measured
# by each run for itself, differs.
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
shards="${SHARDS:-1}"
only_files="${FILES:-}"
out="${MUTATION_OUT:-$(mktemp -d)}"
mkdir -p "$out"
if [[ -n "$only_files" && ${#pkgs[@]} -ne 1 ]]; then
	echo "mutation: FILES needs exactly one package" >&2
	exit 2
fi

# gremlins times each mutant's test run against its own first run of the
# tests with coverage. A cached result of that run (after a dry run, or a
# second run of the script) takes a fraction of a second, and then every
# mutant times out instead of being killed or living: never cache.
export GOFLAGS="${GOFLAGS:+$GOFLAGS }-count=1"

# gremlins in a directory of its own version, built outside this module so
# that its dependencies never reach go.mod.
bin_dir="${XDG_CACHE_HOME:-$HOME/.cache}/herald/gremlins-$gremlins_version"
gremlins="$bin_dir/gremlins"
if [[ ! -x "$gremlins" ]]; then
	echo "mutation: installing gremlins $gremlins_version"
	mkdir -p "$bin_dir"
	(cd "$bin_dir" && GOBIN="$bin_dir" GOFLAGS=-mod=mod go install "github.com/go-gremlins/gremlins/cmd/gremlins@$gremlins_version")
fi

# unleash runs gremlins on ./$1 with the remaining arguments, writing
# $out/$2.log and $out/$2.json.
unleash() {
	local pkg=$1 name=$2
	shift 2
	"$gremlins" unleash --workers "$workers" --timeout-coefficient "$coefficient" \
		--output "$out/$name.json" "$@" "./$pkg" </dev/null >"$out/$name.log" 2>&1
}

# shard_excludes prints, one per line, the files of package $1 to leave out
# of each shard: shard i's line lists every file not in it, as gremlins
# --exclude-files patterns. Files go, most mutants first, to the shard with
# the fewest so far; the counts come from a dry run.
shard_excludes() {
	local pkg=$1 dry="$out/$1.dry.log"
	"$gremlins" unleash --dry-run "./$pkg" </dev/null >"$dry" 2>&1
	local files
	files=$(cd "$pkg" && ls -- *.go | grep -v '_test\.go$')
	if [[ -n "$only_files" ]]; then
		local f
		for f in $only_files; do
			if ! grep -qxF "$f" <<<"$files"; then
				echo "mutation: no file $pkg/$f" >&2
				return 2
			fi
		done
	fi
	awk -v shards="$shards" -v only=" $only_files " '
		FNR == NR { all[$0] = 1; next }
		/RUNNABLE/ { f = $NF; sub(/:.*/, "", f); n[f]++ }
		END {
			for (f in all) if (only == "  " || index(only, " " f " ")) { files[++k] = f; c[k] = n[f] + 0 }
			# most mutants first (k is small: a simple sort)
			for (i = 1; i <= k; i++) for (j = i + 1; j <= k; j++)
				if (c[j] > c[i] || (c[j] == c[i] && files[j] < files[i])) {
					t = c[i]; c[i] = c[j]; c[j] = t; t = files[i]; files[i] = files[j]; files[j] = t
				}
			for (i = 1; i <= k; i++) {
				best = 1
				for (s = 2; s <= shards; s++) if (load[s] < load[best]) best = s
				load[best] += c[i]; shard[files[i]] = best
			}
			for (s = 1; s <= shards; s++) {
				line = ""
				for (f in all) if (shard[f] != s) { p = f; gsub(/\./, "\\.", p); line = line " ^" p "$" }
				print line
			}
		}' <(printf '%s\n' "$files") "$dry"
}

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
	if [[ "$shards" -le 1 && -z "$only_files" ]]; then
		unleash "$pkg" "$pkg" --threshold-efficacy "$threshold" || status=$?
		logs=("$out/$pkg.log")
	else
		mapfile -t excludes < <(shard_excludes "$pkg")
		pids=()
		logs=()
		for i in "${!excludes[@]}"; do
			args=()
			for p in ${excludes[$i]}; do
				args+=(--exclude-files "$p")
			done
			unleash "$pkg" "$pkg.$((i + 1))" "${args[@]}" &
			pids+=($!)
			logs+=("$out/$pkg.$((i + 1)).log")
		done
		for pid in "${pids[@]}"; do
			wait "$pid" || status=$?
		done
	fi
	grep -hE 'LIVED|TIMED OUT|Killed:|Timed out:|Test efficacy:|Mutator coverage:|threshold' "${logs[@]}" || true
	# The package's figure, over every run: killed of killed + lived.
	read -r killed lived timedout < <(awk '
		/^Killed:/ { gsub(/,/, ""); k += $2; l += $4 }
		/^Timed out:/ { gsub(/,/, ""); t += $3 }
		END { print k + 0, l + 0, t + 0 }' "${logs[@]}")
	efficacy=$(awk -v k="$killed" -v l="$lived" 'BEGIN { if (k + l > 0) printf "%.2f", 100 * k / (k + l) }')
	for log in "${logs[@]}"; do
		grep -q '^Test efficacy:' "$log" || efficacy="" # a run that did not finish
	done
	summary+=("$(printf '%-10s %7s%%  %4ds  killed %d, lived %d, timed out %d' "$pkg" "${efficacy:-?}" $((SECONDS - start)) "$killed" "$lived" "$timedout")")
	if [[ -z "$efficacy" ]] || awk -v e="$efficacy" -v t="$threshold" 'BEGIN { exit !(e < t) }'; then
		failed+=("$pkg")
	elif [[ "$shards" -le 1 && -z "$only_files" && $status -ne 0 ]]; then
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
