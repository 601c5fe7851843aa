#!/usr/bin/env bash
# Measures what the router adds: the same wrk load (a second process) against one server directly, then
# through `patchbay route` in front of it. Reports wrk's latency distribution for both.
#   scripts/proxy-overhead.sh [duration-seconds] [connections]
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
duration="${1:-15}"
conns="${2:-16}"
sport=18090
rport=18091
command -v wrk >/dev/null || { echo "needs wrk (apt-get install wrk)" >&2; exit 1; }
"$here/patchbay" build -q >/dev/null
"$here/patchbay" serve --port "$sport" --host 127.0.0.1 --sim-eos-probability 0 >/tmp/patchbay-proxy-server.log 2>&1 &
server=$!
"$here/patchbay" route --endpoints "127.0.0.1:$sport" --port "$rport" --host 127.0.0.1 >/tmp/patchbay-proxy-router.log 2>&1 &
router=$!
trap 'kill $server $router 2>/dev/null; wait 2>/dev/null' EXIT
for _ in $(seq 1 120); do curl -sf "http://127.0.0.1:$sport/health" >/dev/null && break; sleep 0.5; done
for _ in $(seq 1 120); do curl -sf "http://127.0.0.1:$rport/v1/models" >/dev/null && break; sleep 0.5; done
lua=$(mktemp --suffix .lua)
cat > "$lua" <<LUA
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.body = '{"model": "sql-lora", "prompt": "the water people", "max_tokens": 16, "ignore_eos": true}'
LUA
run() { wrk -t2 -c"$conns" -d"${duration}s" --latency -s "$lua" "$1/v1/completions"; }
run "http://127.0.0.1:$sport" >/dev/null; run "http://127.0.0.1:$rport" >/dev/null   # warm-up both paths
echo "== direct to the server ($conns connections, ${duration}s)"; run "http://127.0.0.1:$sport"
echo "== through the router ($conns connections, ${duration}s)"; run "http://127.0.0.1:$rport"
