#!/usr/bin/env bash
# Measures the server's HTTP path: requests/s and latency at concurrency 64 against the simulated model
# with zero latency, with wrk (Debian's package) as the load generator in its own process.
#   scripts/http-load.sh [duration-seconds] [max_tokens]
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
duration="${1:-15}"
max_tokens="${2:-16}"
port=18080
command -v wrk >/dev/null || { echo "needs wrk (apt-get install wrk)" >&2; exit 1; }
"$here/patchbay" build -q >/dev/null
"$here/patchbay" serve --port "$port" --host 127.0.0.1 --sim-latency-ms 0,0,0,0,0,0 --sim-eos-probability 0 \
  >/tmp/patchbay-http-load.log 2>&1 &
server=$!
trap 'kill $server 2>/dev/null; wait $server 2>/dev/null' EXIT
for _ in $(seq 1 120); do curl -sf "http://127.0.0.1:$port/health" >/dev/null && break; sleep 0.5; done
lua=$(mktemp --suffix .lua)
cat > "$lua" <<LUA
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.body = '{"model": "sql-lora", "prompt": "the water people", "max_tokens": $max_tokens, "ignore_eos": true}'
LUA
echo "== warm-up"; wrk -t2 -c64 -d5s -s "$lua" "http://127.0.0.1:$port/v1/completions" >/dev/null
echo "== /v1/completions, 64 connections, max_tokens=$max_tokens, ${duration}s"
wrk -t2 -c64 -d"${duration}s" --latency -s "$lua" "http://127.0.0.1:$port/v1/completions"
echo "== /metrics, 4 connections, ${duration}s"
wrk -t1 -c4 -d"${duration}s" --latency "http://127.0.0.1:$port/metrics"
echo "== /metrics?name[]= (the router's families), 4 connections, ${duration}s"
wrk -t1 -c4 -d"${duration}s" --latency \
  "http://127.0.0.1:$port/metrics?name%5B%5D=vllm:num_requests_waiting&name%5B%5D=vllm:num_requests_running&name%5B%5D=vllm:kv_cache_usage_perc&name%5B%5D=vllm:lora_adapter_loaded&name%5B%5D=vllm:num_lora_requests_running&name%5B%5D=vllm:num_lora_requests_waiting"
