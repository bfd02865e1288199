#!/usr/bin/env bash
# A pool in front of a slow API, measured by hand (docs/operations.md, "Sizing the pool"):
# SELLERS sellers x 60 rows queued first, then the pool started; rule 20 per 5 s;
# the mock API answering in LATENCY ms. Prints rows/s and each seller's span.
#   scripts/slow-api-trial.sh [SELLERS=60] [LATENCY=800-1500]
# Starts its own redis-server (REDIS_PORT, default 6420) and mock API (API_PORT,
# default 3917) and stops them at the end. Run `npm run build` first.
set -euo pipefail
SELLERS=${1:-60}
LATENCY=${2:-800-1500}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
CLI="node $ROOT/bin/bulk-register.js"
DIR=$(mktemp -d)
REDIS_PORT=${REDIS_PORT:-6420}
API_PORT=${API_PORT:-3917}
export REDIS_URL=redis://127.0.0.1:$REDIS_PORT RATE_LIMIT_MAX=20 RATE_LIMIT_WINDOW_MS=5000 \
  REGISTRATION_API_URL=http://127.0.0.1:$API_PORT MOCK_API_PORT=$API_PORT MOCK_LATENCY_MS=$LATENCY LOG_LEVEL=warn
redis-server --port "$REDIS_PORT" --save '' --appendonly no --daemonize yes --logfile "$DIR/redis.log"
cleanup() {
  kill "${WORKERS:-}" "${API:-}" 2>/dev/null || true
  wait 2>/dev/null || true
  redis-cli -p "$REDIS_PORT" shutdown nosave >/dev/null 2>&1 || true
  rm -rf "$DIR"
}
trap cleanup EXIT
$CLI mock-api > "$DIR/mock.log" 2>&1 & API=$!
# four uploads at a time, all before the pool starts
for b in $(seq 1 4 "$SELLERS"); do
  pids=()
  for i in $(seq "$b" $(( b + 3 > SELLERS ? SELLERS : b + 3 ))); do
    $CLI upload --seller "S$i" --json "$ROOT/fixtures/seller-b-60-korean.xlsx" > "$DIR/up$i.json" & pids+=($!)
  done
  wait "${pids[@]}"
done
$CLI workers > "$DIR/workers.log" 2>&1 & WORKERS=$!
stats() { curl -s "http://127.0.0.1:$API_PORT/_stats$1"; }
for _ in $(seq 1 300); do
  n=$(stats '' | node -e 'console.log(JSON.parse(require("fs").readFileSync(0)).totals.registered)')
  [ "$n" -ge $(( SELLERS * 60 )) ] && break
  sleep 1
done
stats '?times=1' | node -e '
const j = JSON.parse(require("fs").readFileSync(0));
const spans = Object.values(j.sellers).map((v) => { const t = [...v.times].sort((a, b) => a - b); return [t[0], t.at(-1)]; });
const t0 = Math.min(...spans.map((s) => s[0])), t1 = Math.max(...spans.map((s) => s[1]));
const d = spans.map((s) => s[1] - s[0]).sort((a, b) => a - b);
console.log(`registered ${j.totals.registered}, 429s ${j.totals.tooMany}, ${(j.totals.registered / ((t1 - t0) / 1000)).toFixed(1)} rows/s, seller span median ${d[Math.floor(d.length / 2)]} ms, max ${d.at(-1)} ms`);'
echo "largest worker RSS: $(ps -o rss= --ppid "$WORKERS" | sort -n | tail -1) KB"
