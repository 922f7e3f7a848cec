#!/usr/bin/env bash
# bench/fanout.sh: measure the live stream's fan-out, this tree's Herald and
# the previous one side by side in one run. See bench/README.md.
#
#   bash bench/fanout.sh                        # 10, 200, 1000, 5000 streams; 1 and 100 users
#   STREAMS="10 1000" USERS="1" bash bench/fanout.sh
#   PREV=<git ref> bash bench/fanout.sh         # compare with another commit
#   ROUNDS=2 bash bench/fanout.sh               # every pair twice
#   NTFY=1 bash bench/fanout.sh                 # also this build's ntfy JSON subscriptions
#   NTFY_SERVER=/path/to/ntfy bash bench/fanout.sh  # and an ntfy server's, the same way
#   NTFY_CACHE=memory NTFY_SERVER=... bash bench/fanout.sh  # that server keeping messages in memory
#
# Each run starts a fresh server on a copy of one prepared database (100
# users, an API key and a channel each), opens the streams, weighs them idle,
# then sends 50 messages a second for 8 s and waits up to 10 s for the last
# events. The two builds alternate, their order swapping from one scenario
# to the next, so that the machine's noise falls on both. Everything runs on
# 127.0.0.1 in a temporary directory, removed at the end; the JSON lines are
# also written to bench/out/ (gitignored).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
streams_list=${STREAMS:-"10 200 1000 5000"}
users_list=${USERS:-"1 100"}
rounds=${ROUNDS:-1}
ntfy=${NTFY:-0}
ntfy_server=${NTFY_SERVER:-}
ntfy_cache=${NTFY_CACHE:-file}
if [[ -n $ntfy_server ]]; then
	ntfy=1
	"$ntfy_server" --help >/dev/null || {
		echo "NTFY_SERVER=$ntfy_server does not run" >&2
		exit 2
	}
fi
rate=${RATE:-50}
duration=${DURATION:-8s}
prev=${PREV:-$(git merge-base HEAD main)}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/herald-fanout.XXXXXX")
herald_pid=""

stop_herald() {
	if [[ -n $herald_pid ]] && kill -0 "$herald_pid" 2>/dev/null; then
		kill -TERM "$herald_pid" 2>/dev/null || true
		for _ in $(seq 100); do
			kill -0 "$herald_pid" 2>/dev/null || break
			sleep 0.1
		done
		kill -KILL "$herald_pid" 2>/dev/null || true
		wait "$herald_pid" 2>/dev/null || true
	fi
	herald_pid=""
}
cleanup() {
	stop_herald
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

echo "building this tree's herald, the previous one ($(git rev-parse --short "$prev")) and the load generator..." >&2
CGO_ENABLED=0 go build -o "$tmp/herald-new" .
mkdir -p "$tmp/prev-src"
git archive "$prev" | tar -x -C "$tmp/prev-src"
(cd "$tmp/prev-src" && CGO_ENABLED=0 go build -o "$tmp/herald-prev" .)
go build -o "$tmp/fanout" ./bench/fanout
go build -o "$tmp/loadgen" ./bench/loadgen

port=$("$tmp/loadgen" -free-port)
base="http://127.0.0.1:$port"
config() { # data_dir
	cat <<EOF
listen    = "127.0.0.1:$port"
base_url  = "$base"
data_dir  = "$1"
log_level = "warn"

# High enough that the rate limiter never refuses: we measure the stream.
# "herald user add" puts users on the pro plan, so both plans get them.
[plans.free]
send_per_minute = 100000000
api_per_minute  = 100000000
max_streams     = 100000

[plans.pro]
send_per_minute = 100000000
api_per_minute  = 100000000
max_streams     = 100000
EOF
}

# start_ntfy data_dir: the ntfy server, anonymous topics, its cache in a
# SQLite file as a homelab runs it (NTFY_CACHE=memory: in memory, ntfy's
# default without a cache file), its per-visitor limits lifted (every
# stream comes from 127.0.0.1).
start_ntfy() {
	local cache=(--cache-file "$1/cache.db")
	if [[ $ntfy_cache == memory ]]; then cache=(); fi
	mkdir -p "$1"
	"$ntfy_server" serve --config /dev/null --listen-http "127.0.0.1:$port" --base-url "$base" \
		"${cache[@]}" --log-level warn \
		--visitor-subscription-limit 1000000 --visitor-request-limit-exempt-hosts 127.0.0.1 \
		>>"$tmp/ntfy.log" 2>&1 &
	herald_pid=$!
	wait_up /v1/health ntfy "$tmp/ntfy.log"
}

# wait_up PATH NAME LOG: waits until the server just started ($herald_pid)
# answers PATH, or fails showing its LOG.
wait_up() {
	for i in $(seq 200); do
		if curl -sf "$base$1" >/dev/null 2>&1; then
			return
		fi
		if ! kill -0 "$herald_pid" 2>/dev/null || [[ $i == 200 ]]; then
			echo "$2 did not start:" >&2
			cat "$3" >&2
			exit 1
		fi
		sleep 0.1
	done
}

start() { # binary data_dir
	config "$2" >"$tmp/herald.toml"
	"$1" --config "$tmp/herald.toml" serve >>"$tmp/herald.log" 2>&1 &
	herald_pid=$!
	wait_up /healthz herald "$tmp/herald.log"
}

# The prepared database, made by the previous build (the newer one migrates
# it forward when it opens a copy).
echo "preparing 100 users, each with an API key and a channel..." >&2
start "$tmp/herald-prev" "$tmp/template"
: >"$tmp/users.txt"
for i in $(seq 100); do
	"$tmp/herald-prev" --config "$tmp/herald.toml" user add "u$i@example.com" --name "u$i" >/dev/null
	key=$("$tmp/herald-prev" --config "$tmp/herald.toml" key create "u$i@example.com" --name fanout)
	channel=$(curl -sf -X POST "$base/v1/channels" -H "Authorization: Bearer $key" \
		-H "Content-Type: application/json" -d '{"name":"fanout"}')
	token=$(printf '%s' "$channel" | grep -o '"webhook_token":"[^"]*"' | cut -d'"' -f4)
	if [[ -z $token ]]; then
		echo "could not create a channel: $channel" >&2
		exit 1
	fi
	echo "$key $token" >>"$tmp/users.txt"
done
stop_herald
# The ntfy server's topics are the same tokens, read without a key.
awk '{print "-", $2}' "$tmp/users.txt" >"$tmp/users-ntfy.txt"

mkdir -p "$root/bench/out"
out="$root/bench/out/fanout-$(date +%Y%m%d-%H%M%S).jsonl"
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores" | tee "$tmp/load.txt" >&2
flip=0
for round in $(seq "$rounds"); do
	for users in $users_list; do
		for n in $streams_list; do
			order="prev new"
			if ((flip % 2)); then order="new prev"; fi
			flip=$((flip + 1))
			# ntfy: this build again, its streams ntfy JSON subscriptions
			# and its sends ntfy publishes; ntfyd: the ntfy server, the same.
			if [[ $ntfy == 1 ]]; then order="$order ntfy"; fi
			if [[ -n $ntfy_server ]]; then order="$order ntfyd"; fi
			for which in $order; do
				rm -rf "$tmp/run"
				binary=$which flags=() users_file=$tmp/users.txt
				case $which in
				ntfy) binary=new flags=(-ntfy) ;;
				ntfyd) flags=(-ntfy) users_file=$tmp/users-ntfy.txt ;;
				esac
				if [[ $which == ntfyd ]]; then
					start_ntfy "$tmp/run"
				else
					cp -r "$tmp/template" "$tmp/run"
					start "$tmp/herald-$binary" "$tmp/run"
				fi
				echo "round $round: $which, $n streams of $users users..." >&2
				"$tmp/fanout" -url "$base" -pid "$herald_pid" -users "$users_file" -n-users "$users" \
					-streams "$n" -rate "$rate" -duration "$duration" -label "$which" "${flags[@]}" | tee -a "$out"
				stop_herald
			done
		done
	done
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$tmp/load.txt" >&2
echo "results: $out" >&2

# A table with this build's figures beside the previous one's, and ratios.
go run ./bench/fanout/report "$out"
cat "$tmp/load.txt"
if grep -qv '^$' "$tmp/herald.log" 2>/dev/null; then
	echo >&2
	echo "herald log (warnings and errors, last 20 lines):" >&2
	tail -n 20 "$tmp/herald.log" >&2
fi
