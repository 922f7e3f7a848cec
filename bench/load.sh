#!/usr/bin/env bash
# bench/load.sh: measure POST /v1/send/{token} of a real Herald binary against
# the ceiling of a bare net/http handler. See bench/README.md.
#
#   bash bench/load.sh                          # 8 and 32 connections, 10 s each
#   bash bench/load.sh -conns 1,8,32,64 -duration 20s
#   SYNCHRONOUS=normal bash bench/load.sh       # compare with synchronous=normal
#   PERF=1 bash bench/load.sh                   # also record herald's CPU with perf
#   POSTGRES=1 bash bench/load.sh               # SQLite, PostgreSQL with one and two replicas
#   POSTGRES=1 PROFILE=1 bash bench/load.sh     # also a CPU profile of a replica on PostgreSQL
#   NTFY=1 bash bench/load.sh                   # ntfy's PUT /<token> (text body) beside /v1/send
#   IMAGE=1 bash bench/load.sh                  # a 200 KB picture sent multipart beside a text send
#
# Arguments are passed to the load generator (go run ./bench/loadgen -h).
# Everything runs on 127.0.0.1 in a temporary directory, removed at the end;
# with POSTGRES=1 a fresh database on the server HERALD_BENCH_DATABASE_URL
# names, dropped at the end. The report is also written to bench/out/
# (gitignored).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
sync_mode=${SYNCHRONOUS:-full}
postgres=${POSTGRES:-}
load_before=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo '?')
tmp=$(mktemp -d "${TMPDIR:-/tmp}/herald-load.XXXXXX")
pids=()         # every herald started, for the clean-up
perf_pid=""
loadgen_pid=""
pg_admin_url="" # set once the benchmark database exists: drop it at exit
bench_db=""

# stop_herald, write_config, start_herald, make_channel
source "$root/bench/herald.sh"

cleanup() {
	if [[ -n $loadgen_pid ]] && kill -0 "$loadgen_pid" 2>/dev/null; then
		kill -TERM "$loadgen_pid" 2>/dev/null || true
		wait "$loadgen_pid" 2>/dev/null || true
	fi
	if [[ -n $perf_pid ]] && kill -0 "$perf_pid" 2>/dev/null; then
		kill -INT "$perf_pid" 2>/dev/null || true
		wait "$perf_pid" 2>/dev/null || true
	fi
	for pid in "${pids[@]}"; do
		stop_herald "$pid"
	done
	if [[ -n $pg_admin_url ]]; then
		psql -q "$pg_admin_url" -c "DROP DATABASE IF EXISTS $bench_db WITH (FORCE)" >/dev/null 2>&1 ||
			echo "could not drop database $bench_db" >&2
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

build_tags=()
if [[ ${PROFILE:-} == 1 ]]; then
	build_tags=(-tags pprof) # cli/pprof_debug.go: HERALD_PPROF serves net/http/pprof
fi
echo "building herald and the load generator..." >&2
CGO_ENABLED=0 go build "${build_tags[@]}" -o "$tmp/herald" .
go build -o "$tmp/loadgen" ./bench/loadgen

# loadgen ARGS...: in the background and waited for, so that a signal to this
# script runs the clean-up at once instead of after the whole measurement.
loadgen() {
	"$tmp/loadgen" "$@" &
	loadgen_pid=$!
	wait "$loadgen_pid"
	loadgen_pid=""
}

# flag_value NAME ARGS...: the last value given to loadgen's -NAME or --NAME
# (as "-NAME VALUE" or "-NAME=VALUE"), empty if none.
flag_value() {
	local name=$1
	shift
	printf '%s\n' "$@" | awk -v f="$name" '
		prev == "-" f || prev == "--" f {v = $0}
		index($0, "-" f "=") == 1 || index($0, "--" f "=") == 1 {v = substr($0, index($0, "=") + 1)}
		{prev = $0}
		END {print v}'
}

port=$("$tmp/loadgen" -free-port)
write_config sqlite "$port"
if [[ ${IMAGE:-} == 1 ]]; then
	# The last table of the config is [plans.free]: no quota refuses a picture.
	echo 'attachment_quota = "1000GB"' >>"$tmp/sqlite/herald.toml"
fi
start_herald sqlite "$port"
herald_pid=$started_pid
make_channel sqlite "$port"
sqlite_token=$token
version=$("$tmp/herald" --config "$tmp/sqlite/herald.toml" version)

# --- NTFY=1: the ntfy publish path beside Herald's own, one run after the
# other at each connection count, on the same server and channel ---------
if [[ ${NTFY:-} == 1 ]]; then
	ntfy_body="Backup finished: 42 GB in 3 minutes"
	runs="$tmp/runs.jsonl"
	IFS=, read -r -a conns_list <<<"$(flag_value conns "$@")"
	[[ ${#conns_list[@]} -gt 0 ]] || conns_list=(8 32)
	for n in "${conns_list[@]}"; do
		echo "--- $n connections: ceiling, POST /v1/send/<token>, then ntfy's PUT /<token>" >&2
		loadgen "$@" -conns "$n" -target "POST /v1/send" -url "http://127.0.0.1:$port/v1/send/$token" \
			-pid "$herald_pid" -json "$runs" >/dev/null
		loadgen "$@" -conns "$n" -baseline=false -target "ntfy PUT /<token>" -url "http://127.0.0.1:$port/$token" \
			-method PUT -content-type text/plain -body "$ntfy_body" -pid "$herald_pid" -json "$runs" >/dev/null
	done
	"$tmp/loadgen" -report "$runs" -out "$root/bench/out" \
		-note "$version; database.synchronous=$sync_mode; log_level=warn; rate limits off" \
		-note "POST /v1/send: Herald's JSON payload (loadgen's default -body); ntfy PUT /<token>: the text body \"$ntfy_body\" (Content-Type: text/plain), the same channel" \
		-note "a build without ntfy's publish answers PUT /<token> with 404: those rows then count every request as an error"
	exit 0
fi

# --- IMAGE=1: a camera snapshot sent multipart beside a text send, one run
# after the other at each connection count, on the same server and channel --
if [[ ${IMAGE:-} == 1 ]]; then
	image_kb=${IMAGE_KB:-200}
	"$tmp/loadgen" -make-jpeg "$image_kb" "$tmp/snapshot.jpg"
	image_payload='{"title":"Person at the gate","body":"Front camera","priority":"high"}'
	runs="$tmp/runs.jsonl"
	IFS=, read -r -a conns_list <<<"$(flag_value conns "$@")"
	[[ ${#conns_list[@]} -gt 0 ]] || conns_list=(8 32)
	# Every text run first: peak RSS is the process's high-water mark, so
	# a picture run before a text one would be counted against it.
	for n in "${conns_list[@]}"; do
		echo "--- $n connections: ceiling, then POST /v1/send/<token>" >&2
		loadgen "$@" -conns "$n" -target "POST /v1/send" -url "http://127.0.0.1:$port/v1/send/$token" \
			-pid "$herald_pid" -json "$runs" >/dev/null
	done
	for n in "${conns_list[@]}"; do
		echo "--- $n connections: POST /v1/send/<token> with a $image_kb KB picture" >&2
		loadgen "$@" -conns "$n" -baseline=false -target "image $image_kb KB" -url "http://127.0.0.1:$port/v1/send/$token" \
			-file "$tmp/snapshot.jpg" -body "$image_payload" -pid "$herald_pid" -json "$runs" >/dev/null
	done
	"$tmp/loadgen" -report "$runs" -out "$root/bench/out" \
		-note "$version; database.synchronous=$sync_mode; log_level=warn; rate limits and the attachment quota off" \
		-note "POST /v1/send: Herald's JSON payload (loadgen's default -body); image $image_kb KB: multipart/form-data, part payload $image_payload, part file snapshot.jpg, a 1280×720 JPEG of $(stat -c %s "$tmp/snapshot.jpg") bytes (Herald stores it and makes its thumbnail); the ceiling reads the text send" \
		-note "loadgen arguments: ${*:-none (8 and 32 connections, 10 s each after a 1 s warm-up)}; load average before the run: $load_before"
	du -sh "$tmp/sqlite/data" >&2
	exit 0
fi

if [[ -z $postgres ]]; then
	if [[ ${PERF:-} == 1 ]] && command -v perf >/dev/null; then
		mkdir -p "$root/bench/out"
		perf_data="$root/bench/out/perf-$(date +%Y%m%d-%H%M%S).data"
		# Herald is idle while the ceiling runs, so this is its send path only.
		perf record -q -F 499 --call-graph fp -p "$herald_pid" -o "$perf_data" 2>/dev/null &
		perf_pid=$!
		echo "perf recording herald to $perf_data" >&2
	fi

	loadgen -url "http://127.0.0.1:$port/v1/send/$token" -pid "$herald_pid" -out "$root/bench/out" \
		-note "$version; database.synchronous=$sync_mode; log_level=warn; rate limits off" "$@"

	if [[ -n $perf_pid ]]; then
		kill -INT "$perf_pid" 2>/dev/null || true
		wait "$perf_pid" 2>/dev/null || true
		perf_pid=""
		echo "perf: perf report -i $perf_data --children --sort sym -g none | head -60" >&2
	fi
	if [[ -s $tmp/sqlite/herald.log ]]; then
		echo >&2
		echo "herald log (warnings and errors, last 20 lines):" >&2
		tail -n 20 "$tmp/sqlite/herald.log" >&2
	fi
	exit 0
fi

# --- POSTGRES=1: SQLite, then PostgreSQL with one replica, then two --------

command -v psql >/dev/null || {
	echo "POSTGRES=1 needs psql" >&2
	exit 1
}
# On this machine's loopback, without TLS: the driver's default (sslmode=prefer)
# takes TLS whenever the server offers it, which costs Herald and PostgreSQL CPU
# that a send over a Unix socket or a private network does not pay.
pg_url=${HERALD_BENCH_DATABASE_URL:-postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable}
# The benchmark's database: the same server and credentials, another name.
query=""
if [[ $pg_url == *\?* ]]; then
	query="?${pg_url#*\?}"
fi
rest=${pg_url%%\?*}
scheme=${rest%%://*}
rest=${rest#*://}
authority=${rest%%/*}
bench_db="herald_bench_$$"
db_url="$scheme://$authority/$bench_db$query"
psql -q "$pg_url" -c "CREATE DATABASE $bench_db" >/dev/null
pg_admin_url=$pg_url
echo "database $bench_db created on $scheme://${authority#*@}" >&2

# The postmaster, for the server's CPU: the checkpointer's parent. Only if
# the server runs on this machine (its processes are in our /proc).
pg_pid=""
checkpointer=$(psql -Atq "$db_url" -c "SELECT pid FROM pg_stat_activity WHERE backend_type = 'checkpointer'")
if [[ -n $checkpointer && -r /proc/$checkpointer/stat ]]; then
	pg_pid=$(awk '{print $4}' "/proc/$checkpointer/stat")
else
	echo "PostgreSQL's processes are not on this machine: its CPU is not measured" >&2
fi
pg_cpu=()
if [[ -n $pg_pid ]]; then
	pg_cpu=(-pg-pid "$pg_pid" -pg-db "$bench_db")
fi

port_a=$("$tmp/loadgen" -free-port)
port_b=$("$tmp/loadgen" -free-port)
write_config pg-a "$port_a" "$db_url"
write_config pg-b "$port_b" "$db_url"
pprof_port=""
if [[ ${PROFILE:-} == 1 ]]; then
	pprof_port=$("$tmp/loadgen" -free-port)
	HERALD_PPROF=127.0.0.1:$pprof_port start_herald pg-a "$port_a"
else
	start_herald pg-a "$port_a"
fi
pid_a=$started_pid
make_channel pg-a "$port_a"
pg_token=$token

# The hook runs right before and after each measured run on PostgreSQL: it
# records the server's statistics (pg-stats.tsv, read by loadgen -report),
# and with PROFILE=1 takes a CPU profile of replica A during the one-replica
# run at the largest connection count.
conns_arg=$(flag_value conns "$@")
max_conns=${conns_arg:-8,32}
max_conns=$(tr ',' '\n' <<<"$max_conns" | sort -n | tail -1)
duration=$(flag_value duration "$@")
seconds=${duration:-10s}
seconds=${seconds%s}
seconds=${seconds%.*}
if ! [[ $seconds =~ ^[0-9]+$ ]]; then
	seconds=10
fi
mkdir -p "$root/bench/out"
stamp=$(date +%Y%m%d-%H%M%S)
profile="$root/bench/out/cpu-postgres-$stamp.pprof"
cat >"$tmp/hook.sh" <<HOOK
phase=\$1 target=\$2 conns=\$3
if [[ \$phase == end ]]; then
	sleep 1.2 # a busy backend sends its statistics at most once a second
fi
psql -Atq "$db_url" -F \$'\\t' -c "SELECT '\$phase', '\$target', \$conns,
	extract(epoch FROM clock_timestamp()), d.xact_commit, w.wal_bytes, w.wal_write, w.wal_sync
	FROM pg_stat_database d, pg_stat_wal w WHERE d.datname = '$bench_db'" >>"$tmp/pg-stats.tsv"
if [[ -n "$pprof_port" && \$phase == start && \$target == "pg 1 replica" && \$conns == $max_conns ]]; then
	curl -so "$profile" "http://127.0.0.1:$pprof_port/debug/pprof/profile?seconds=$((seconds > 3 ? seconds - 2 : 1))" &
fi
HOOK
hook="bash $tmp/hook.sh \"\$@\""

IFS=, read -r -a conns_list <<<"${conns_arg:-8,32}"
runs="$tmp/runs.jsonl"
for n in "${conns_list[@]}"; do
	echo "--- $n connections: ceiling and SQLite, then PostgreSQL with one replica, then two" >&2
	loadgen "$@" -conns "$n" -target sqlite -url "http://127.0.0.1:$port/v1/send/$sqlite_token" \
		-pid "$herald_pid" -json "$runs" >/dev/null
	loadgen "$@" -conns "$n" -baseline=false -target "pg 1 replica" -url "http://127.0.0.1:$port_a/v1/send/$pg_token" \
		-pid "$pid_a" "${pg_cpu[@]}" -hook "$hook" -json "$runs" >/dev/null
	start_herald pg-b "$port_b"
	pid_b=$started_pid
	loadgen "$@" -conns "$n" -baseline=false -target "pg 2 replicas" \
		-url "http://127.0.0.1:$port_a/v1/send/$pg_token,http://127.0.0.1:$port_b/v1/send/$pg_token" \
		-pid "$pid_a,$pid_b" "${pg_cpu[@]}" -hook "$hook" -json "$runs" >/dev/null
	stop_herald "$pid_b"
done

pg_version=$(psql -Atq "$db_url" -c "SHOW server_version")
"$tmp/loadgen" -report "$runs" -pg-stats "$tmp/pg-stats.tsv" -out "$root/bench/out" \
	-note "$version; database.synchronous=$sync_mode; log_level=warn; rate limits off" \
	-note "loadgen arguments: ${*:-none (8 and 32 connections, 10 s each after a 1 s warm-up)}; closed loop, one request in flight per connection; load average before the run: $load_before" \
	-note "PostgreSQL $pg_version on the same machine, database $bench_db (fresh); 'pg 2 replicas': two herald serve on it, the connections spread over both" \
	-note "CPU from /proc: herald = the Herald processes; postgres = the postmaster and its children but other databases' backends (Herald's connections, WAL writer, checkpointer, ...)"
if [[ -s $profile ]]; then
	cp "$tmp/herald" "$root/bench/out/herald-pprof-$stamp"
	echo "CPU profile of replica A (pg 1 replica, $max_conns conns): go tool pprof -top -cum $root/bench/out/herald-pprof-$stamp $profile" >&2
fi
for name in sqlite pg-a pg-b; do
	if [[ -s $tmp/$name/herald.log ]]; then
		echo >&2
		echo "herald $name log (warnings and errors, last 10 lines):" >&2
		tail -n 10 "$tmp/$name/herald.log" >&2
	fi
done
