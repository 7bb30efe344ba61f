"""Splits the time of bench/netbw_trace.sh's ranks (threads of the program `nbwtrace`)
by what they were doing, from `perf script -F comm,tid,time,event,trace` on stdin.

Argument: the number of messages the run sent in all (both ways), to print per-message
figures. Each thread's time runs from its first batched send (`sendmsg`: the first
large message; the start-up before it is left out) to its last event; a system call's
time is from its enter to its exit event, time off the CPU from the switch away from it
to the switch back. What is in neither is user space (the library and the program)."""

import re
import sys
from collections import defaultdict

msgs = int(sys.argv[1]) if len(sys.argv) > 1 else 1
LINE = re.compile(r"^\s*(\S+)\s+(\d+)\s+([\d.]+):\s+(\S+):\s*(.*)$")

first, last = {}, {}
enter = {}  # tid -> (syscall, time)
off = {}  # tid -> time switched out
acc = defaultdict(lambda: defaultdict(float))
count = defaultdict(lambda: defaultdict(int))
took = defaultdict(lambda: defaultdict(int))

events = []
start = {}  # tid -> its first batched send
for raw in sys.stdin:
    m = LINE.match(raw)
    if not m:
        continue
    comm, tid, t, ev, rest = m.group(1), int(m.group(2)), float(m.group(3)), m.group(4), m.group(5)
    events.append((comm, tid, t, ev, rest))
    if comm.startswith("nbwtrace") and ev.endswith("sys_enter_sendmsg"):
        start.setdefault(tid, t)

for comm, tid, t, ev, rest in events:
    if ev == "sched:sched_switch":
        # prev_comm=... prev_pid=N ... ==> next_comm=... next_pid=M
        pm = re.search(r"prev_pid=(\d+)", rest)
        nm = re.search(r"next_comm=(\S+) next_pid=(\d+)", rest)
        if pm and comm.startswith("nbwtrace") and t >= start.get(int(pm.group(1)), 1e30):
            off[int(pm.group(1))] = t
            # Why it left the CPU (R: preempted, S/D: blocked) and for whom.
            st = re.search(r"prev_state=(\S+)", rest)
            who = nm.group(1) if nm else "?"
            if not who.startswith("nbwtrace"):
                who = re.sub(r"[\d/:-]+$", "", who) or who
            took[int(pm.group(1))][(st.group(1) if st else "?", who)] += 1
        if nm and nm.group(1).startswith("nbwtrace"):
            n = int(nm.group(2))
            if n in off:
                acc[n]["off cpu"] += t - off.pop(n)
                count[n]["off cpu"] += 1
        continue
    if not comm.startswith("nbwtrace") or t < start.get(tid, 1e30):
        continue
    first.setdefault(tid, t)
    last[tid] = t
    name = ev.split(":")[-1]
    if name.startswith("sys_enter_"):
        enter[tid] = (name[len("sys_enter_"):], t)
    elif name.startswith("sys_exit_") and tid in enter:
        call, t0 = enter.pop(tid)
        ret = re.search(r"0x([0-9a-f]+)$", rest)
        val = int(ret.group(1), 16) if ret else 0
        if val >= 1 << 63:
            val -= 1 << 64
        key = call
        if call in ("recvmsg", "recvfrom"):
            key = "recv (empty)" if val < 0 else "recv (data)"
        elif call in ("sendmsg", "sendto", "sendmmsg"):
            key = "send " + call
        acc[tid][key] += t - t0
        count[tid][key] += 1

order = ["send sendmsg", "send sendto", "send sendmmsg", "recv (data)", "recv (empty)",
         "sched_yield", "clock_nanosleep", "off cpu"]
print(f"# per thread: µs per message ({msgs} messages) and calls per message")
for tid in sorted(first, key=lambda k: -(last[k] - first[k])):
    span = last[tid] - first[tid]
    if span < 1e-3:
        continue
    parts = {k: acc[tid][k] for k in order if acc[tid][k] > 0}
    user = span - sum(parts.values())
    print(f"thread {tid}: {span * 1e6 / msgs:9.1f} µs per message in all")
    for k, v in parts.items():
        print(f"  {k:16s} {v * 1e6 / msgs:9.1f} µs  {count[tid][k] / msgs:7.1f} calls"
              f"  ({100 * v / span:4.1f} %)")
    why = sorted(took[tid].items(), key=lambda kv: -kv[1])[:6]
    print("  left the CPU (state, for whom): " + ", ".join(
        f"{st} {who} {n / msgs:.1f}" for (st, who), n in why))
    print(f"  {'user space':16s} {user * 1e6 / msgs:9.1f} µs            ({100 * user / span:4.1f} %)")
