#!/usr/bin/env bash
# bench/compare.sh: the send path of the working tree against an earlier
# commit, in one alternating run on this machine. See bench/README.md.
#
#   bash bench/compare.sh f45c406                 # 3 rounds, 32 connections, 10 s each
#   ROUNDS=5 bash bench/compare.sh f45c406 -conns 8,32 -duration 15s
#
# Both builds are built the same way (CGO_ENABLED=0, as shipped). Each round
# starts each build on a fresh data directory, runs the storage ceiling
# (bench/storeceiling: one group-committed SQLite insert a send, FULL sync;
# STORAGE=0 skips it), the ceiling (a bare net/http handler) and the two
# builds one after the other, the reference first in odd rounds and the
# working tree first in even ones, so that neither always runs on a warmer
# or busier machine. Arguments after REF go
# to the load generator (go run ./bench/loadgen -h). It prints each round's
# ratios and their range; the report is also written to bench/out/.
set -euo pipefail

if [[ $# -lt 1 || $1 == -* ]]; then
	echo "usage: bash bench/compare.sh REF [loadgen flags...]" >&2
	exit 2
fi
ref=$1
shift
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
rounds=${ROUNDS:-3}
ref_commit=$(git rev-parse --verify "$ref^{commit}")
load_before=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo '?')
tmp=$(mktemp -d "${TMPDIR:-/tmp}/herald-compare.XXXXXX")
sync_mode=full
pids=() # every herald started, for the clean-up
loadgen_pid=""
# stop_herald, write_config, start_herald, make_channel, clean_up_ref_run, work_description
source "$root/bench/herald.sh"

trap clean_up_ref_run EXIT
trap 'exit 130' INT TERM

echo "building the reference ($ref, ${ref_commit:0:12}), the working tree and the load generator..." >&2
git worktree add --detach --quiet "$tmp/ref-src" "$ref_commit"
(cd "$tmp/ref-src" && CGO_ENABLED=0 go build -o "$tmp/herald-ref" .)
CGO_ENABLED=0 go build -o "$tmp/herald-work" .
go build -o "$tmp/loadgen" ./bench/loadgen
go build -o "$tmp/storeceiling" ./bench/storeceiling
work_desc=$(work_description)

# measure BUILD BASELINE: one run of the load generator against herald-BUILD
# on a fresh data directory, appended to the runs file as target BUILD.
measure() {
	local build=$1 baseline=$2 port
	rm -rf "$tmp/run-$build"
	port=$("$tmp/loadgen" -free-port)
	herald_bin="$tmp/herald-$build"
	write_config "run-$build" "$port"
	start_herald "run-$build" "$port"
	make_channel "run-$build" "$port"
	"$tmp/loadgen" -conns 32 -target "$build" -baseline="$baseline" -url "http://127.0.0.1:$port/v1/send/$token" \
		-pid "$started_pid" -json "$tmp/runs.jsonl" "${loadgen_args[@]}" >/dev/null &
	loadgen_pid=$!
	wait "$loadgen_pid"
	loadgen_pid=""
	stop_herald "$started_pid"
}
loadgen_args=("$@")

# measure_storage: one run of the storage ceiling on a fresh file, appended
# to the runs file as target storage.
measure_storage() {
	local port
	rm -rf "$tmp/storage"
	mkdir -p "$tmp/storage"
	port=$("$tmp/loadgen" -free-port)
	"$tmp/storeceiling" -addr "127.0.0.1:$port" -db "$tmp/storage/ceiling.db" 2>>"$tmp/storage/log" &
	local pid=$!
	pids+=("$pid")
	for _ in $(seq 50); do
		curl -s -o /dev/null "http://127.0.0.1:$port/" && break
		sleep 0.1
	done
	"$tmp/loadgen" -conns 32 -target storage -baseline=false -url "http://127.0.0.1:$port/v1/send/ceiling" \
		-pid "$pid" -json "$tmp/runs.jsonl" "${loadgen_args[@]}" >/dev/null &
	loadgen_pid=$!
	wait "$loadgen_pid"
	loadgen_pid=""
	stop_herald "$pid"
}

for round in $(seq "$rounds"); do
	if ((round % 2)); then order=(ref work); else order=(work ref); fi
	echo "--- round $round of $rounds: ${order[0]} first" >&2
	if [[ ${STORAGE:-1} != 0 ]]; then
		measure_storage
	fi
	measure "${order[0]}" true
	measure "${order[1]}" false
done

"$tmp/loadgen" -compare "$tmp/runs.jsonl" -out "$root/bench/out" \
	-note "ref: $ref (${ref_commit:0:12}); work: $work_desc" \
	-note "$rounds alternating rounds, each build on a fresh data directory; database.synchronous=full; log_level=warn; rate limits off; storage ceiling: bench/storeceiling" \
	-note "loadgen arguments: ${loadgen_args[*]:-none (32 connections, 10 s after a 1 s warm-up)}; load average before the run: $load_before"
