#!/usr/bin/env python3
"""Checks a schedlab trace.pftrace with the official `perfetto` package.

usage: perfetto_decode.py TRACE.pftrace EXPECTED.json

EXPECTED.json is {"sched_switch": [...], "print": [...]} (a bare list is
read as the sched_switch list, with no print events expected):
  sched_switch: {"cpu", "ts_ns", "prev_pid", "next_pid", "prev_state",
                 "prev_comm", "next_comm"}
    with prev_state as the kernel prints it ("R", "R+", "S", "D", "Z", ...);
  print (trace_marker writes): {"cpu", "ts_ns", "pid", "buf"}.

The trace is decoded with the package's own Trace/TracePacket classes
(perfetto_trace_pb2), and checked for:
  * a SystemInfo packet naming Linux >= 4.14 (Perfetto then decodes
    prev_state with the TASK_REPORT layout, preemption = 0x100);
  * a trusted_packet_sequence_id on every packet;
  * per-CPU non-decreasing event timestamps across bundles;
  * a ProcessTree thread name for every non-idle pid switched to/from;
  * exactly the expected sched_switch events (CPU, time, pids, state, comms);
  * exactly the expected print events (CPU, time, writer pid, buf), each with
    a nonzero ip.

Prints the perfetto package version, then one line: "OK ..." (exit 0) or
"FAIL: reason" (exit 1). Exit 2 if the package cannot be imported.
"""

import collections
import importlib
import importlib.metadata
import json
import sys

PB2_MODULES = (
    "perfetto.protos.perfetto.trace.perfetto_trace_pb2",
    "perfetto.trace_processor.protos.perfetto.trace.perfetto_trace_pb2",
)

# Kernel >= 4.14 sched_switch print format (include/trace/events/sched.h):
# bits below TASK_REPORT_MAX printed as letters, "+" for TASK_REPORT_MAX.
TASK_REPORT_MAX = 0x100
STATE_LETTERS = ((0x01, "S"), (0x02, "D"), (0x04, "T"), (0x08, "t"),
                 (0x10, "X"), (0x20, "Z"), (0x40, "P"), (0x80, "I"))


def state_str(raw):
    low = raw & (TASK_REPORT_MAX - 1)
    if raw & ~((TASK_REPORT_MAX << 1) - 1):
        return "?0x%x" % raw
    if low == 0:
        return "R+" if raw & TASK_REPORT_MAX else "R"
    s = "|".join(c for bit, c in STATE_LETTERS if low & bit)
    return s + ("+" if raw & TASK_REPORT_MAX else "")


def fail(reason):
    print("FAIL: " + reason)
    sys.exit(1)


def load_pb2():
    try:
        version = importlib.metadata.version("perfetto")
    except importlib.metadata.PackageNotFoundError:
        version = None
    errors = []
    for name in PB2_MODULES:
        try:
            return version, importlib.import_module(name)
        except ImportError as e:
            errors.append("%s: %s" % (name, e))
    print("perfetto package %s" % (version or "not installed"))
    print("FAIL: cannot import perfetto_trace_pb2 (%s); install with: "
          "python3 -m pip install perfetto" % "; ".join(errors))
    sys.exit(2)


def main(argv):
    if len(argv) != 3:
        print("usage: perfetto_decode.py TRACE.pftrace EXPECTED.json")
        return 1
    version, pb2 = load_pb2()
    print("perfetto package %s" % version)

    with open(argv[1], "rb") as f:
        data = f.read()
    trace = pb2.Trace()
    try:
        trace.ParseFromString(data)
    except Exception as e:  # DecodeError and friends
        fail("trace does not parse as perfetto.protos.Trace: %s" % e)
    with open(argv[2]) as f:
        expected = json.load(f)
    if isinstance(expected, list):
        expected = {"sched_switch": expected, "print": []}

    release = None
    names = {}
    last_ts = {}
    kinds = collections.Counter()
    switches = []
    prints = []
    bundles = 0
    for i, pkt in enumerate(trace.packet):
        if not pkt.HasField("trusted_packet_sequence_id"):
            fail("packet %d has no trusted_packet_sequence_id" % i)
        if pkt.HasField("system_info"):
            u = pkt.system_info.utsname
            if u.sysname != "Linux":
                fail("utsname.sysname is %r, not Linux" % u.sysname)
            release = u.release
        if pkt.HasField("process_tree"):
            for t in pkt.process_tree.threads:
                names[t.tid] = t.name
                if t.tgid != t.tid:
                    fail("thread %d has tgid %d" % (t.tid, t.tgid))
        if not pkt.HasField("ftrace_events"):
            continue
        bundles += 1
        b = pkt.ftrace_events
        if not b.HasField("cpu"):
            fail("bundle in packet %d has no cpu" % i)
        for ev in b.event:
            kind = ev.WhichOneof("event")
            kinds[kind] += 1
            if ev.timestamp < last_ts.get(b.cpu, 0):
                fail("cpu %d goes back in time at %d ns" % (b.cpu, ev.timestamp))
            last_ts[b.cpu] = ev.timestamp
            if kind == "sched_switch":
                s = ev.sched_switch
                switches.append((b.cpu, ev.timestamp, s.prev_pid, s.next_pid,
                                 state_str(s.prev_state), s.prev_comm,
                                 s.next_comm))
            elif kind == "print":
                if not ev.print.ip:
                    fail("print event at %d ns has no ip" % ev.timestamp)
                prints.append((b.cpu, ev.timestamp, ev.pid, ev.print.buf))

    if release is None:
        fail("no SystemInfo.utsname packet: Perfetto would assume kernel 4.4 "
             "and misread prev_state")
    try:
        major, minor = (int(x) for x in release.split("-")[0].split(".")[:2])
    except ValueError:
        fail("unparsable utsname.release %r" % release)
    if (major, minor) < (4, 14):
        fail("utsname.release %s < 4.14: prev_state layout differs" % release)

    want = collections.Counter(
        (e["cpu"], e["ts_ns"], e["prev_pid"], e["next_pid"], e["prev_state"],
         e["prev_comm"], e["next_comm"]) for e in expected["sched_switch"])
    got = collections.Counter(switches)
    missing = want - got
    if missing:
        m = sorted(missing)[0]
        near = [s for s in switches if s[0] == m[0] and s[1] == m[1]]
        fail("%d expected sched_switch missing, first %r (trace has %r at that "
             "cpu/time)" % (sum(missing.values()), m, near))
    extra = got - want
    if extra:
        fail("%d unexpected sched_switch, first %r"
             % (sum(extra.values()), sorted(extra)[0]))
    want = collections.Counter(
        (e["cpu"], e["ts_ns"], e["pid"], e["buf"]) for e in expected["print"])
    got = collections.Counter(prints)
    missing = want - got
    if missing:
        fail("%d expected print events missing, first %r"
             % (sum(missing.values()), sorted(missing)[0]))
    extra = got - want
    if extra:
        fail("%d unexpected print events, first %r"
             % (sum(extra.values()), sorted(extra)[0]))
    for s in switches:
        for pid in (s[2], s[3]):
            if pid != 0 and pid not in names:
                fail("pid %d has no ProcessTree thread name" % pid)

    print("OK %d sched_switch match, %d print match; %d bundles, %d events "
          "(%s); %d named threads; kernel %s" % (
              len(switches), len(prints), bundles, sum(kinds.values()),
              " ".join("%s=%d" % kv for kv in sorted(kinds.items())),
              len(names), release))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
