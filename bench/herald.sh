# bench/herald.sh: starting and stopping Herald for the benchmark scripts
# (load.sh, compare.sh, profile.sh), sourced by them. Each herald NAME lives in $tmp/NAME
# (config, data, log) and runs the binary $herald_bin ($tmp/herald unless
# set); $sync_mode is database.synchronous. Every herald started is added to
# the caller's pids array, for its clean-up.

# work_description: the working tree's commit, and whether files outside
# bench/ differ from it, for a report's header.
work_description() {
	echo "$(git rev-parse --short HEAD)$(git diff --quiet HEAD -- . ':!bench' 2>/dev/null || echo ' with uncommitted changes')"
}

# stop_herald PID stops one herald: SIGTERM, then SIGKILL after 5 s.
stop_herald() {
	local pid=$1
	kill -0 "$pid" 2>/dev/null || return 0
	kill -TERM "$pid" 2>/dev/null || true
	for _ in $(seq 50); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	kill -KILL "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
}

# write_config NAME PORT [DATABASE_URL]: a config for one herald in $tmp/NAME.
# Without a URL the config names none, so that a build from before
# PostgreSQL (bench/compare.sh's references) reads it too.
write_config() {
	local name=$1 port=$2 url=${3:-} url_line=""
	if [[ -n $url ]]; then
		url_line="url         = \"$url\""
	fi
	mkdir -p "$tmp/$name"
	cat >"$tmp/$name/herald.toml" <<-TOML
		listen    = "127.0.0.1:$port"
		base_url  = "http://127.0.0.1:$port"
		data_dir  = "$tmp/$name/data"
		log_level = "warn"

		[database]
		synchronous = "$sync_mode"
		$url_line

		# High enough that the rate limiter never refuses: we measure the send path.
		[plans.free]
		send_per_minute = 100000000
		api_per_minute  = 100000000
	TOML
}

# start_herald NAME PORT: starts herald with $tmp/NAME/herald.toml, waits for
# /healthz and sets started_pid.
start_herald() {
	local name=$1 port=$2
	# Started directly, not through a function: $! must be herald's own pid
	# (for CPU, VmHWM and the kill at exit), not a subshell's.
	"${herald_bin:-$tmp/herald}" --config "$tmp/$name/herald.toml" serve >>"$tmp/$name/herald.log" 2>&1 &
	started_pid=$!
	pids+=("$started_pid")
	for i in $(seq 100); do
		if curl -sf "http://127.0.0.1:$port/healthz" >/dev/null 2>&1; then
			return 0
		fi
		if ! kill -0 "$started_pid" 2>/dev/null || [[ $i == 100 ]]; then
			echo "herald ($name) did not start:" >&2
			cat "$tmp/$name/herald.log" >&2
			exit 1
		fi
		sleep 0.1
	done
}

# make_channel NAME PORT: a user, an API key and a channel through the herald
# of $tmp/NAME; sets token to the channel's webhook token.
make_channel() {
	local name=$1 port=$2 key channel bin=${herald_bin:-$tmp/herald}
	"$bin" --config "$tmp/$name/herald.toml" user add load@example.com --name "Load test" --plan free >/dev/null # the plan [plans.free] above opens up
	key=$("$bin" --config "$tmp/$name/herald.toml" key create load@example.com --name load)
	channel=$(curl -sf -X POST "http://127.0.0.1:$port/v1/channels" \
		-H "Authorization: Bearer $key" -H "Content-Type: application/json" \
		-d '{"name":"Load test"}')
	token=$(printf '%s' "$channel" | grep -o '"webhook_token":"[^"]*"' | cut -d'"' -f4)
	if [[ -z $token ]]; then
		echo "could not create a channel: $channel" >&2
		exit 1
	fi
}

# clean_up_ref_run is the exit trap of the scripts that build an earlier
# commit in $tmp/ref-src (compare.sh, profile.sh): it stops the load
# generator ($loadgen_pid) and every herald started, removes the worktree
# and $tmp.
clean_up_ref_run() {
	if [[ -n $loadgen_pid ]] && kill -0 "$loadgen_pid" 2>/dev/null; then
		kill -TERM "$loadgen_pid" 2>/dev/null || true
		wait "$loadgen_pid" 2>/dev/null || true
	fi
	for pid in "${pids[@]}"; do
		stop_herald "$pid"
	done
	git -C "$root" worktree remove --force "$tmp/ref-src" >/dev/null 2>&1 || true
	rm -rf "$tmp"
}
