#!/bin/bash
# usage: bash bench/cli_identical.sh BASE_BINARY NEW_BINARY
#
# Runs the same myrix commands with two binaries and diffs what they produce: standard
# output, standard error, the exit code and every file a command writes (plots, the
# experiment's table). Each case runs in its own directory, so relative paths in
# messages match. Commands that measure wall time (bench pingpong, bench sim) are
# compared with their timing columns masked. Prints one line per case and exits
# non-zero when any differs.
set -u
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
# Both named myrix, as clap prints the program's own name in usage lines.
mkdir -p "$W/bin-a" "$W/bin-b"
cp "$1" "$W/bin-a/myrix"
cp "$2" "$W/bin-b/myrix"
A=$W/bin-a/myrix
B=$W/bin-b/myrix
n=0
bad=0

# run SIDE NAME MASK ARGS...: runs one binary; MASK is an awk program applied to stdout.
run() {
  local side=$1 name=$2 mask=$3
  shift 3
  local bin=$A
  [ "$side" = b ] && bin=$B
  local d="$W/$side/$name"
  mkdir -p "$d"
  (cd "$d" && "$bin" "$@" >stdout.raw 2>stderr; echo $? >rc)
  if [ -n "$mask" ]; then
    awk "$mask" "$d/stdout.raw" >"$d/stdout"
    rm "$d/stdout.raw"
  else
    mv "$d/stdout.raw" "$d/stdout"
  fi
}

# check NAME MASK ARGS...: both binaries, then the diff.
check() {
  local name=$1 mask=$2
  shift 2
  n=$((n + 1))
  run a "$name" "$mask" "$@"
  run b "$name" "$mask" "$@"
  if diff -r "$W/a/$name" "$W/b/$name" >"$W/$name.diff"; then
    echo "same   $name (exit $(cat "$W/a/$name/rc")): myrix $*"
  else
    bad=$((bad + 1))
    echo "DIFFER $name: myrix $*"
    head -40 "$W/$name.diff"
  fi
}

# Simulated results: every byte.
check sim-table "" sim --loads 0.0025:0.025:0.0025 --sim-time 2ms
check sim-json "" sim --loads 0.0025:0.025:0.0025 --sim-time 2ms --format json
check sim-csv "" sim --loads 0.0025:0.025:0.0025 --sim-time 2ms --format csv
check sim-policies-plot "" sim --routing osud,rmit --loads 0.005:0.02:0.005 --sim-time 1ms --plot x.svg
check sim-sweep-plot "" sim --sweep --switches 8 --sim-time 200us --plot sweep.svg
check sim-mix "" sim --switches 8 --load 0.01 --sim-time 300us --msg-bytes 32:0.8,1024:0.2 --send-overhead 1us --traffic hotspot
check sim-models "" sim --switches 8 --loads 0.01:0.02:0.01 --sim-time 200us --switch-model hold-output --channel-release send --format csv
check sim-fail "" sim --switches 6 --seed 4 --load 0.02 --sim-time 5ms --fail link:2-5@1ms
check sim-fail-json "" sim --switches 6 --seed 4 --load 0.02 --sim-time 5ms --fail switch:1@1ms --format json
check sim-join "" sim --switches 6 --seed 4 --load 0.02 --sim-time 5ms --join host:3@1ms
check experiment "" experiment minimal-routing --quick --topologies 1 --sim-time 50us --out exp
check experiment-all "" experiment minimal-routing --topologies 2 --sim-time 20us --out exp
check bench-fabric "" bench fabric
check bench-fabric-load "" bench fabric --sizes 8,5000 --iters 2 --load 0.005 --switches 8
# Wall-clock measurements: the layout and the simulated columns, not the times.
check bench-sim 'NR <= 2 { print; next } { $5 = $6 = $7 = $8 = $9 = "T"; print }' \
  bench sim --sizes 16,32 --loads 0.005,0.015 --sim-time 100us --warmup 10us
check bench-pingpong 'NR <= 2 { print; next } { $2 = $3 = "T"; print }' \
  bench pingpong --transport shm --start 8 --end 64 --iterations 1000
check bench-stream-json '{ gsub(/"(bandwidth_mb_s|latency_us)":[0-9.e+-]+/, "T"); print }' \
  bench stream --transport udp --start 0 --end 70000 --increment 35000 --iterations 20 --window 4 --verify --format json
# Help texts.
for c in "sim" "experiment minimal-routing" "bench sim" "bench fabric" "bench pingpong" "bench stream"; do
  # shellcheck disable=SC2086
  check "help-${c// /-}" "" $c --help
done
# Bad input: one error line and the exit code.
check err-load "" sim --load 0
check err-routing "" sim --routing osud,xy
check err-traffic "" sim --traffic tornado
check err-model "" sim --switch-model fast
check err-release "" bench sim --channel-release never
check err-time "" sim --sim-time 5
check err-loads "" sim --loads 0.02:0.01:0.01
check err-modes "" sim --load 0.01 --sweep
check err-mix "" sim --msg-bytes 32:0
check err-plot "" sim --load 0.01 --plot x.gif
check err-fail-load "" sim --fail link:2-5@1ms
check err-fail-spec "" sim --switches 6 --seed 4 --load 0.02 --fail router:3@1ms
check err-fail-link "" sim --switches 6 --seed 4 --load 0.02 --fail link:0-0@1ms
check err-join "" sim --switches 6 --seed 4 --load 0.02 --join switch:2@1ms
check err-exp-topologies "" experiment minimal-routing --topologies 0
check err-exp-model "" experiment minimal-routing --switch-model fast
check err-fabric-hosts "" bench fabric --from 3 --to 3
check err-fabric-sizes "" bench fabric --sizes 8,x
check err-fabric-big "" bench fabric --sizes 999999999
check err-fabric-iters "" bench fabric --iters 0
check err-bench-sizes "" bench sim --sizes 0
check err-pp-range "" bench pingpong --start 10 --end 5
check err-pp-mult "" bench pingpong --multiplier 1
check err-pp-client "" bench pingpong --client nonsense
check err-pp-cpu "" bench stream --cpu x
check err-pp-eth "" bench pingpong --transport eth --interface nosuchif0
check err-pp-window "" bench stream --window 0
check err-pp-listen "" bench pingpong --server --listen 1.2.3.4:5

echo "$((n - bad)) of $n cases identical"
[ "$bad" -eq 0 ]
