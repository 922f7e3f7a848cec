#!/usr/bin/env bash
# bench/signin.sh: Herald's peak memory under a flood of wrong-password
# sign-ins. See bench/README.md.
#
#   bash bench/signin.sh                       # 80 sign-ins from 4 loopback addresses
#   bash bench/signin.sh -n 200 -addrs 8       # any signinflood flag passes through
#   HERALD_BIN=/tmp/herald-old bash bench/signin.sh   # measure another build
#
# Everything runs on 127.0.0.1 in a temporary directory, removed at the end.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/herald-signin.XXXXXX")
herald_pid=""

cleanup() {
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

echo "building herald and the flood client..." >&2
bin=${HERALD_BIN:-}
if [[ -z $bin ]]; then
	CGO_ENABLED=0 go build -o "$tmp/herald" .
	bin=$tmp/herald
fi
go build -o "$tmp/signinflood" ./bench/signinflood
go build -o "$tmp/loadgen" ./bench/loadgen

port=$("$tmp/loadgen" -free-port)
base="http://127.0.0.1:$port"
cat >"$tmp/herald.toml" <<EOT
listen    = "127.0.0.1:$port"
base_url  = "$base"
data_dir  = "$tmp/data"
log_level = "warn"
EOT

"$bin" --config "$tmp/herald.toml" serve >"$tmp/herald.log" 2>&1 &
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
echo 'correct horse battery' | "$bin" --config "$tmp/herald.toml" user add owner@example.com --password-stdin >/dev/null
# One good sign-in first, so the idle figure includes one password check.
curl -sf -X POST "$base/v1/auth/local" -H 'Content-Type: application/json' \
	-d '{"email":"owner@example.com","password":"correct horse battery"}' >/dev/null

"$tmp/signinflood" -url "$base" -pid "$herald_pid" "$@"
# Still answering?
curl -sf "$base/healthz" >/dev/null && echo "healthz: ok after the flood"
