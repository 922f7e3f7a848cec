#!/usr/bin/env bash
# bench/load.sh: measure POST /v1/send/{token} of a real Herald binary against
# the ceiling of a bare net/http handler. See bench/README.md.
#
#   bash bench/load.sh                          # 8 and 32 connections, 10 s each
#   bash bench/load.sh -conns 1,8,32,64 -duration 20s
#   SYNCHRONOUS=normal bash bench/load.sh       # compare with synchronous=normal
#   PERF=1 bash bench/load.sh                   # also record herald's CPU with perf
#
# Arguments are passed to the load generator (go run ./bench/loadgen -h).
# Everything runs on 127.0.0.1 in a temporary directory, removed at the end;
# the report is also written to bench/out/ (gitignored).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
sync_mode=${SYNCHRONOUS:-full}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/herald-load.XXXXXX")
herald_pid=""
perf_pid=""
loadgen_pid=""

cleanup() {
	if [[ -n $loadgen_pid ]] && kill -0 "$loadgen_pid" 2>/dev/null; then
		kill -TERM "$loadgen_pid" 2>/dev/null || true
		wait "$loadgen_pid" 2>/dev/null || true
	fi
	if [[ -n $perf_pid ]] && kill -0 "$perf_pid" 2>/dev/null; then
		kill -INT "$perf_pid" 2>/dev/null || true
		wait "$perf_pid" 2>/dev/null || true
	fi
	if [[ -n $herald_pid ]] && kill -0 "$herald_pid" 2>/dev/null; then
		kill -TERM "$herald_pid" 2>/dev/null || true
		for _ in $(seq 50); do
			kill -0 "$herald_pid" 2>/dev/null || break
			sleep 0.1
		done
		kill -KILL "$herald_pid" 2>/dev/null || true
		wait "$herald_pid" 2>/dev/null || true
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

echo "building herald and the load generator..." >&2
CGO_ENABLED=0 go build -o "$tmp/herald" .
go build -o "$tmp/loadgen" ./bench/loadgen

port=$("$tmp/loadgen" -free-port)
base="http://127.0.0.1:$port"
cat >"$tmp/herald.toml" <<EOF
listen    = "127.0.0.1:$port"
base_url  = "$base"
data_dir  = "$tmp/data"
log_level = "warn"

[database]
synchronous = "$sync_mode"

# High enough that the rate limiter never refuses: we measure the send path.
[plans.free]
send_per_minute = 100000000
api_per_minute  = 100000000
EOF

herald() { "$tmp/herald" --config "$tmp/herald.toml" "$@"; }

# Started directly, not through the function: $! must be herald's own pid
# (for VmHWM and for the kill at exit), not a subshell's.
"$tmp/herald" --config "$tmp/herald.toml" serve >"$tmp/herald.log" 2>&1 &
herald_pid=$!
for i in $(seq 100); do
	if curl -sf "$base/healthz" >/dev/null 2>&1; then
		break
	fi
	if ! kill -0 "$herald_pid" 2>/dev/null || [[ $i == 100 ]]; then
		echo "herald did not start:" >&2
		cat "$tmp/herald.log" >&2
		exit 1
	fi
	sleep 0.1
done

herald user add load@example.com --name "Load test" --plan free >/dev/null  # the plan [plans.free] above opens up
key=$(herald key create load@example.com --name load)
channel=$(curl -sf -X POST "$base/v1/channels" \
	-H "Authorization: Bearer $key" -H "Content-Type: application/json" \
	-d '{"name":"Load test"}')
token=$(printf '%s' "$channel" | grep -o '"webhook_token":"[^"]*"' | cut -d'"' -f4)
if [[ -z $token ]]; then
	echo "could not create a channel: $channel" >&2
	exit 1
fi

if [[ ${PERF:-} == 1 ]] && command -v perf >/dev/null; then
	mkdir -p "$root/bench/out"
	perf_data="$root/bench/out/perf-$(date +%Y%m%d-%H%M%S).data"
	# Herald is idle while the ceiling runs, so this is its send path only.
	perf record -q -F 499 --call-graph fp -p "$herald_pid" -o "$perf_data" 2>/dev/null &
	perf_pid=$!
	echo "perf recording herald to $perf_data" >&2
fi

version=$(herald version)
# In the background and waited for, so that a signal to this script runs the
# clean-up at once instead of after the whole measurement.
"$tmp/loadgen" -url "$base/v1/send/$token" -pid "$herald_pid" -out "$root/bench/out" \
	-note "$version; database.synchronous=$sync_mode; log_level=warn; rate limits off" "$@" &
loadgen_pid=$!
wait "$loadgen_pid"
loadgen_pid=""

if [[ -n $perf_pid ]]; then
	kill -INT "$perf_pid" 2>/dev/null || true
	wait "$perf_pid" 2>/dev/null || true
	perf_pid=""
	echo "perf: perf report -i $perf_data --children --sort sym -g none | head -60" >&2
fi

if [[ -s $tmp/herald.log ]]; then
	echo >&2
	echo "herald log (warnings and errors, last 20 lines):" >&2
	tail -n 20 "$tmp/herald.log" >&2
fi
