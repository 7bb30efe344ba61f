#!/bin/bash
# usage: bash bench/sim_identical.sh BINARY_A BINARY_B
# Runs README simulator commands with two myrix binaries and diffs their outputs; the
# timing columns of `myrix bench sim` (CPU/wall seconds, rates, peak MiB) are cut first.
# Exit status 0 when every output is byte-identical.
set -u
A=$(realpath "$1"); B=$(realpath "$2")
W=$(mktemp -d); trap 'rm -rf "$W"' EXIT
cd "$W"
"$A" topo gen --kind irregular --switches 16 --seed 1 -o net16.toml >/dev/null
cmds=(
  "topo gen --kind irregular --switches 16 --seed 1"
  "sim --topology net16.toml --load 0.01 --routing osud,rmit --sim-time 40ms --fail link:13-5@2ms"
  "sim --topology net16.toml --load 0.01 --routing osud,rmit --sim-time 40ms --fail switch:5@2ms"
  "sim --topology net16.toml --load 0.01 --routing osud,rmit --sim-time 40ms --fail host:63@2ms"
  "sim --topology net16.toml --load 0.01 --routing osud,rmit --sim-time 40ms --join host:10@2ms"
  "sim --topology net16.toml --load 0.08 --routing osud --sim-time 150ms --fail switch:0@2ms --switch-model route-then-request --channel-release send"
  "sim --loads 0.0025:0.025:0.0025 --sim-time 2ms"
  "sim --routing osud,rmit,rrmit-min --loads 0.005:0.035:0.005 --sim-time 1ms"
  "sim --routing osud,omit,rmit,rrmit,pit,rrmit-min --loads 0.005:0.05:0.0025 --sim-time 1ms --format csv"
  "sim --switch-model route-then-request --channel-release send --loads 0.0025:0.07:0.0025 --sim-time 1ms"
  "sim --switch-model hold-output --channel-release send --loads 0.005:0.05:0.005 --sim-time 1ms"
  "sim --switch-model hold-output --channel-release drain --loads 0.005:0.05:0.005 --sim-time 1ms --seed 3"
  "sim --switch-model route-then-request --channel-release drain --loads 0.005:0.05:0.005 --sim-time 1ms --format json"
  "sim --traffic hotspot --routing pit --loads 0.005:0.03:0.005 --sim-time 1ms"
  "sim --traffic local --routing rrmit --loads 0.005:0.03:0.005 --sim-time 1ms"
  "sim --traffic bit-reversal --routing omit --switches 64 --loads 0.005:0.02:0.005 --sim-time 500us"
  "routes --routing rmit"
  "routes --routing rrmit-min"
  "routes --routing pit --format json"
  "routes --routing osud --switches 64 --seed 2"
  "bench sim"
  "bench sim --switch-model route-then-request --channel-release send --sizes 16,256"
  "bench fabric"
)
fail=0
for c in "${cmds[@]}"; do
  for x in A B; do
    bin=$A; [ $x = B ] && bin=$B
    # shellcheck disable=SC2086
    $bin $c >"out.$x" 2>&1; echo "exit $?" >>"out.$x"
    case "$c" in
      "bench sim"*) awk '{ if ($1 ~ /^[0-9]+$/) print $1, $2, $3, $4, ($NF == "saturated" ? $NF : ""); else print }' "out.$x" >"cut.$x"; mv "cut.$x" "out.$x" ;;
    esac
  done
  if cmp -s out.A out.B; then
    echo "same  ($(wc -l <out.A) lines)  myrix $c"
  else
    echo "DIFF  myrix $c"; diff out.A out.B | head -20; fail=1
  fi
done
[ $fail = 0 ] && echo "all outputs identical" || echo "outputs differ"
exit $fail
