#!/usr/bin/env bash
# A real server under a real load generator: examples/http-server (hyper, an idle timeout per
# connection and a deadline per request) built twice from one source, with tokio's timers and
# with callwheel's, each loaded by wrk over loopback at 100, 1,000 and 10,000 connections, the
# two builds alternating in one run, ROUNDS times each. Prints the medians over the rounds of
# requests per second, latency p50 / p99 / p99.9, the server's peak resident memory and its
# CPU time per request, and their ratios.
#
# From a fresh clone: `scripts/http-load.sh` (installs wrk from Debian's packages when it is
# missing). DURATION (seconds per run, default 10), ROUNDS (default 3), CONNECTIONS (default
# "100 1000 10000") and THREADS (wrk's, default 2) change the sizes.
set -euo pipefail
cd "$(dirname "$0")/.."

DURATION=${DURATION:-10}
ROUNDS=${ROUNDS:-3}
CONNECTIONS=${CONNECTIONS:-"100 1000 10000"}
THREADS=${THREADS:-2}
PORT=${PORT:-18080}

if ! command -v wrk >/dev/null; then
  if command -v apt-get >/dev/null; then
    apt-get update -qq && apt-get install -y -qq wrk
  fi
  command -v wrk >/dev/null || { echo "wrk is needed (Debian: apt-get install wrk)"; exit 1; }
fi
# 10,000 connections need as many descriptors on each side.
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)"

manifest=examples/http-server/Cargo.toml
cargo build --release --quiet --manifest-path "$manifest" --target-dir target/http-server-tokio
cargo build --release --quiet --manifest-path "$manifest" --target-dir target/http-server-callwheel \
  --features callwheel
bin() { echo "target/http-server-$1/release/callwheel-http-server"; }

ticks=$(getconf CLK_TCK)
# Each measurement's figures over the rounds, space-separated, by "variant/connections".
declare -A rps p50 p99 p999 rss cpu errs

run() { # variant connections
  local variant=$1 conns=$2
  "$(bin "$variant")" "$PORT" 2>/dev/null &
  local pid=$!
  for _ in $(seq 50); do
    (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null && break
    sleep 0.1
  done
  local before after line hwm requests duration
  before=$(awk '{print $14 + $15}' "/proc/$pid/stat")
  line=$(wrk -t"$THREADS" -c"$conns" -d"${DURATION}s" --timeout 5s -s scripts/http-load.lua \
    "http://127.0.0.1:$PORT/" | grep '^RESULT')
  after=$(awk '{print $14 + $15}' "/proc/$pid/stat")
  hwm=$(awk '/VmHWM/ {print $2}' "/proc/$pid/status")
  kill "$pid"; wait "$pid" 2>/dev/null || true
  field() { sed -E "s/.* $1=([0-9]+).*/\1/" <<<" $line"; }
  requests=$(field requests)
  duration=$(field duration_us)
  local key="$variant/$conns"
  rps[$key]+="$(awk -v r="$requests" -v d="$duration" 'BEGIN {printf "%.0f", r / (d / 1e6)}') "
  p50[$key]+="$(field p50) "
  p99[$key]+="$(field p99) "
  p999[$key]+="$(field p999) "
  errs[$key]+="$(field errors) "
  rss[$key]+="$hwm "
  cpu[$key]+="$(awk -v t=$((after - before)) -v hz="$ticks" -v r="$requests" \
    'BEGIN {printf "%.2f", r ? t / hz / r * 1e6 : 0}') "
}

# The median of a space-separated list (the lower middle for an even count).
median() { tr ' ' '\n' <<<"$1" | grep . | sort -g | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }

turn=0
for round in $(seq "$ROUNDS"); do
  for conns in $CONNECTIONS; do
    # Alternate which build goes first, so a drift in the machine's load falls on both.
    if (( turn++ % 2 )); then order="callwheel tokio"; else order="tokio callwheel"; fi
    for variant in $order; do
      echo "== round $round: $variant, $conns connections, ${DURATION} s" >&2
      run "$variant" "$conns"
    done
  done
done

echo
echo "HTTP load: wrk -t$THREADS -d${DURATION}s over loopback, $(nproc) cores shared by server and wrk;"
echo "medians of $ROUNDS rounds, the builds alternating"
echo
echo "| connections | timers | requests/s | p50 µs | p99 µs | p99.9 µs | peak RSS KiB | CPU µs/request | errors (all rounds) |"
echo "|---:|---|---:|---:|---:|---:|---:|---:|---:|"
declare -A m
for conns in $CONNECTIONS; do
  for variant in tokio callwheel; do
    k="$variant/$conns"
    for metric in rps p50 p99 p999 rss cpu; do
      declare -n values=$metric
      m[$metric/$k]=$(median "${values[$k]}")
    done
    total=$(tr ' ' '\n' <<<"${errs[$k]}" | awk '{s += $1} END {print s + 0}')
    echo "| $conns | $variant | ${m[rps/$k]} | ${m[p50/$k]} | ${m[p99/$k]} | ${m[p999/$k]} | ${m[rss/$k]} | ${m[cpu/$k]} | $total |"
  done
done
echo
echo "| connections | requests/s callwheel / tokio (target >= 1) | p99 callwheel / tokio (<= 1) | peak RSS callwheel / tokio (<= 1) | CPU/request callwheel / tokio |"
echo "|---:|---:|---:|---:|---:|"
for conns in $CONNECTIONS; do
  c="callwheel/$conns"; t="tokio/$conns"
  awk -v n="$conns" -v a="${m[rps/$c]}" -v b="${m[rps/$t]}" -v c="${m[p99/$c]}" -v d="${m[p99/$t]}" \
    -v e="${m[rss/$c]}" -v f="${m[rss/$t]}" -v g="${m[cpu/$c]}" -v h="${m[cpu/$t]}" \
    'BEGIN {printf "| %d | %.3f | %.3f | %.3f | %.3f |\n", n, a / b, c / d, e / f, g / h}'
done
