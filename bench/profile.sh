#!/usr/bin/env bash
# bench/profile.sh: where a send's CPU goes, in the working tree and in an
# earlier commit, part by part, from CPU profiles taken under the same load.
# See bench/README.md.
#
#   bash bench/profile.sh f45c406                 # 2 rounds, 32 connections, 12 s of profile each
#   ROUNDS=3 SECONDS_PROFILED=20 bash bench/profile.sh f45c406
#   KEEP=/tmp/prof bash bench/profile.sh f45c406  # also keep the profiles and binaries, for go tool pprof
#
# Both builds are built with net/http/pprof on a loopback port: the working
# tree with the pprof build tag (cli/pprof_debug.go), the reference the same
# way when it has that file, else with a file added to its temporary
# worktree that does the same. Each round runs each build on a fresh data
# directory under bench/loadgen's closed loop of 32 connections, takes a CPU
# profile of the middle of the run, the reference first in odd rounds and
# the working tree first in even ones; bench/profdiff then merges each
# build's profiles and prints CPU a send by part (HTTP, the store's writer,
# the search indexer, GC, ...) and by function. A profiling build runs a
# little slower than a release build: compare the two columns, not these
# figures with bench/compare.sh's.
set -euo pipefail

if [[ $# -lt 1 || $1 == -* ]]; then
	echo "usage: bash bench/profile.sh REF" >&2
	exit 2
fi
ref=$1
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
rounds=${ROUNDS:-2}
profiled=${SECONDS_PROFILED:-12}
ref_commit=$(git rev-parse --verify "$ref^{commit}")
tmp=$(mktemp -d "${TMPDIR:-/tmp}/herald-profile.XXXXXX")
sync_mode=full
pids=()
loadgen_pid=""
# stop_herald, write_config, start_herald, make_channel, clean_up_ref_run, work_description
source "$root/bench/herald.sh"

trap clean_up_ref_run EXIT
trap 'exit 130' INT TERM

echo "building the reference ($ref, ${ref_commit:0:12}) and the working tree with pprof, and the tools..." >&2
git worktree add --detach --quiet "$tmp/ref-src" "$ref_commit"
if git -C "$tmp/ref-src" grep -q 'go:build pprof' -- cli/pprof_debug.go 2>/dev/null; then
	(cd "$tmp/ref-src" && CGO_ENABLED=0 go build -tags pprof -o "$tmp/herald-ref" .)
else
	# An older build: the same endpoint, from a file of the worktree only.
	cat >"$tmp/ref-src/zz_bench_pprof.go" <<-'GO'
		package main

		import (
			"net/http"
			_ "net/http/pprof"
			"os"
		)

		func init() {
			if addr := os.Getenv("HERALD_PPROF"); addr != "" {
				go func() { _ = http.ListenAndServe(addr, nil) }()
			}
		}
	GO
	(cd "$tmp/ref-src" && CGO_ENABLED=0 go build -o "$tmp/herald-ref" .)
fi
CGO_ENABLED=0 go build -tags pprof -o "$tmp/herald-work" .
go build -o "$tmp/loadgen" ./bench/loadgen
go build -o "$tmp/profdiff" ./bench/profdiff
work_desc=$(work_description)

declare -A profs sends
# measure BUILD ROUND: one run of BUILD with a CPU profile of its middle.
measure() {
	local build=$1 round=$2 port pprof_port ok elapsed prof="$tmp/$1-$2.pprof"
	rm -rf "$tmp/run-$build"
	port=$("$tmp/loadgen" -free-port)
	pprof_port=$("$tmp/loadgen" -free-port)
	herald_bin="$tmp/herald-$build"
	write_config "run-$build" "$port"
	HERALD_PPROF="127.0.0.1:$pprof_port" start_herald "run-$build" "$port"
	make_channel "run-$build" "$port"
	"$tmp/loadgen" -conns 32 -target "$build" -baseline=false -warmup 1s -duration "$((profiled + 4))s" \
		-url "http://127.0.0.1:$port/v1/send/$token" -pid "$started_pid" -json "$tmp/runs-$build.jsonl" >/dev/null &
	loadgen_pid=$!
	sleep 3 # the warm-up and the first second of the run
	curl -sf -o "$prof" "http://127.0.0.1:$pprof_port/debug/pprof/profile?seconds=$profiled"
	wait "$loadgen_pid"
	loadgen_pid=""
	stop_herald "$started_pid"
	# Sends during the profile: the run's rate over the profiled seconds.
	read -r ok elapsed < <(tail -n 1 "$tmp/runs-$build.jsonl" | sed -E 's/.*"ok":([0-9]+).*"elapsed_ns":([0-9]+).*/\1 \2/')
	sends[$build]=$((${sends[$build]:-0} + ok * profiled * 1000000000 / elapsed))
	profs[$build]="${profs[$build]:+${profs[$build]},}$prof"
	echo "$build: $((ok * 1000000000 / elapsed)) sends/s" >&2
}

for round in $(seq "$rounds"); do
	if ((round % 2)); then order=(ref work); else order=(work ref); fi
	echo "--- round $round of $rounds: ${order[0]} first" >&2
	measure "${order[0]}" "$round"
	measure "${order[1]}" "$round"
done

mkdir -p "$root/bench/out"
out="$root/bench/out/profile-$(date -u +%Y%m%d-%H%M%S).md"
{
	echo "# Herald: where a send's CPU goes, the working tree against a reference build, $(date -u +%Y-%m-%dT%H:%M:%SZ)"
	echo
	echo "- ref: $ref (${ref_commit:0:12}); work: $work_desc"
	echo "- $rounds alternating rounds, 32 connections, ${profiled} s of CPU profile in each run; database.synchronous=full; pprof builds"
	echo
	"$tmp/profdiff" -ref "$tmp/herald-ref:${sends[ref]}:${profs[ref]}" -work "$tmp/herald-work:${sends[work]}:${profs[work]}"
} | tee "$out"
echo "report written to $out" >&2
if [[ -n ${KEEP:-} ]]; then
	mkdir -p "$KEEP"
	cp "$tmp"/*.pprof "$tmp/herald-ref" "$tmp/herald-work" "$KEEP/"
	echo "profiles and binaries kept in $KEEP (go tool pprof $KEEP/herald-work $KEEP/work-1.pprof)" >&2
fi
