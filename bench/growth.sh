#!/usr/bin/env bash
# bench/growth.sh: how Herald holds up as its data grows. Fills a channel
# with 1 and 5 million expired messages, then measures sends before, during
# and after the sweep that deletes them, list and search latency, and the
# database, WAL and search index sizes. See bench/README.md.
#
#   bash bench/growth.sh                        # 1M and 5M, 8 senders
#   bash bench/growth.sh -sizes 200000 -phase 5s
#
# Arguments are passed to the benchmark (go run ./bench/growth -h). It runs
# on 127.0.0.1 in temporary directories, removed at the end; it needs about
# 3 GB of free disk for 5 million messages.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/herald-growth.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

echo "building herald and the benchmark..." >&2
CGO_ENABLED=0 go build -o "$tmp/herald" .
go build -o "$tmp/growth" ./bench/growth
mkdir -p bench/out
"$tmp/growth" -herald "$tmp/herald" "$@" | tee "bench/out/growth-$(date +%Y%m%d-%H%M%S).md"
