#!/usr/bin/env python3
"""Figures of a scale run (scripts/scale-run.sh) from its raw samples and
its run bundle. Prints `scale-figure: NAME key=value ...` lines; exits 1
when the run did not complete or its merged counts are not exact.

Usage: scale-figures.py DIR DURATION_S TARGET AGENTS THREADS RECORDCOUNT COORD_RC
"""
import csv
import json
import os
import sys


def fig(name, **kv):
    print("scale-figure: " + name + " " + " ".join(f"{k}={v}" for k, v in kv.items()), flush=True)


def slope(points):
    """Least-squares slope of (x, y) points; 0 for fewer than two."""
    n = len(points)
    if n < 2:
        return 0.0
    mx = sum(x for x, _ in points) / n
    my = sum(y for _, y in points) / n
    sxx = sum((x - mx) ** 2 for x, _ in points)
    return 0.0 if sxx == 0 else sum((x - mx) * (y - my) for x, y in points) / sxx


def at(points, t):
    """The value of the last sample taken at or before t seconds."""
    best = None
    for x, y in points:
        if x <= t:
            best = y
    return best


def main():
    d, dur_s, target, agents, threads, records, coord_rc = sys.argv[1:8]
    dur_s, target, agents, threads, coord_rc = int(dur_s), int(target), int(agents), int(threads), int(coord_rc)
    ok = True
    fig("config", agents=agents, threads_per_agent=threads, target_ops_per_s=target or "unthrottled",
        duration_s=dur_s, recordcount=records, interval_s=10)

    by_role = {}
    with open(os.path.join(d, "samples.tsv")) as f:
        for row in csv.DictReader(f, delimiter="\t"):
            by_role.setdefault(row["role"], []).append(
                (float(row["t_s"]), int(row["rss_kib"]), float(row["cpu_s"]), int(row["wchar_bytes"])))
    spool = []
    with open(os.path.join(d, "spool.tsv")) as f:
        for row in csv.DictReader(f, delimiter="\t"):
            spool.append((float(row["t_s"]), int(row["spool_bytes"])))

    run_path = os.path.join(d, "results", "run.json")
    if coord_rc != 0 or not os.path.exists(run_path):
        fig("outcome", coordinator_exit=coord_rc, run_json="present" if os.path.exists(run_path) else "missing")
        ok = False
    run = json.load(open(run_path)) if os.path.exists(run_path) else None
    intervals = len(run["intervals"]) if run else 0

    # Exact merged counts: the summary's count, the sum of every interval's,
    # the sum of what each agent said it did (its final account) and of what
    # the coordinator received from it must all be one number.
    if run:
        summary_ops = run["summary"]["operations"]
        interval_ops = sum(i["operations"] for i in run["intervals"])
        agent_final = sum((a.get("final") or {}).get("operations", -1) for a in run["agents"])
        agent_recv = sum(a["operations_received"] for a in run["agents"])
        exact = summary_ops == interval_ops == agent_final == agent_recv
        ok = ok and exact and run["status"] == "complete"
        runtime_s = run["summary"]["runtime_ms"] / 1000
        fig("counts", status=run["status"], summary_ops=summary_ops, intervals_sum=interval_ops,
            agents_final_sum=agent_final, agents_received_sum=agent_recv, exact="yes" if exact else "NO",
            agents_finished=sum(a["state"] == "finished" for a in run["agents"]), late_records=run.get("late_records", 0))
        fig("throughput", ops_per_time_budget=f"{summary_ops / dur_s:.1f}", ops_per_runtime=f"{summary_ops / runtime_s:.1f}",
            target=target or "unthrottled",
            of_target=f"{summary_ops / dur_s / target * 100:.2f}%" if target else "n/a", runtime_s=f"{runtime_s:.1f}",
            intervals=intervals)

    # Coordinator CPU: the total (from time(1), exact at exit) per interval,
    # and the per-10s increments, whose slope says whether merging one
    # interval gets dearer as the run goes on.
    coord = by_role.get("coordinator", [])
    tm = open(os.path.join(d, "coordinator.time")).read().split() if os.path.exists(os.path.join(d, "coordinator.time")) else []
    try:
        wall, cu, cs, maxrss = float(tm[-4]), float(tm[-3]), float(tm[-2]), int(tm[-1])
    except (IndexError, ValueError):
        # time(1) did not report (the coordinator was killed): the last sample.
        wall, cu, cs, maxrss = (coord[-1][0], coord[-1][2], 0.0, max(r for _, r, _, _ in coord)) if coord else (0, 0, 0, 0)
    inc = [(coord[i][0] / 60, coord[i][2] - coord[i - 1][2]) for i in range(1, len(coord))]
    third = len(inc) // 3
    first, last = inc[:max(third, 1)], inc[-max(third, 1):]
    mean = lambda xs: sum(y for _, y in xs) / len(xs) if xs else 0.0  # noqa: E731
    fig("coordinator-cpu", total_s=f"{cu + cs:.2f}", per_interval_ms=f"{(cu + cs) / max(intervals, 1) * 1000:.1f}",
        first_third_ms_per_10s=f"{mean(first) * 1000:.1f}", last_third_ms_per_10s=f"{mean(last) * 1000:.1f}",
        slope_ms_per_10s_per_min=f"{slope(inc[len(inc) // 3:]) * 1000:.3f}", wall_s=f"{wall:.1f}", max_rss_kib=maxrss)

    # Spool: bytes per interval per agent, and whether the increments stay
    # those of the records themselves (flat) or grow.
    if len(spool) >= 2:
        final = spool[-1][1]
        sinc = [(spool[i][0] / 60, spool[i][1] - spool[i - 1][1]) for i in range(1, len(spool))]
        st = len(sinc) // 3
        # The rate over the sampled span, so that the header and the
        # records of the last seconds (spooled after the last sample) do
        # not skew it.
        rate = (spool[-1][1] - spool[0][1]) / (spool[-1][0] - spool[0][0]) * 10
        fig("spool", last_sampled_bytes=final, per_interval_bytes=f"{rate:.0f}",
            per_agent_per_interval_bytes=f"{rate / agents:.0f}",
            first_third_bytes_per_10s=f"{mean(sinc[:max(st, 1)]):.0f}", last_third_bytes_per_10s=f"{mean(sinc[-max(st, 1):]):.0f}",
            slope_bytes_per_10s_per_min=f"{slope(sinc[st:]):.1f}")

    # Bytes on each agent's TCP connection to the coordinator (ss) per
    # 10 s: the records, gRPC framing, heartbeats and acknowledgements.
    wire_path = os.path.join(d, "wire.tsv")
    per_port = {}
    if os.path.exists(wire_path):
        with open(wire_path) as f:
            for row in csv.DictReader(f, delimiter="\t"):
                per_port.setdefault(row["agent_port"], []).append(
                    (float(row["t_s"]), int(row["bytes_sent"]), int(row["bytes_received"])))
    sent, recv = [], []
    for pts in per_port.values():
        if len(pts) >= 2 and pts[-1][0] > pts[0][0]:
            span = (pts[-1][0] - pts[0][0]) / 10
            sent.append((pts[-1][1] - pts[0][1]) / span)
            recv.append((pts[-1][2] - pts[0][2]) / span)
    if sent:
        fig("agent-wire", agents_sampled=len(sent), sent_mean_bytes_per_interval=f"{sum(sent) / len(sent):.0f}",
            sent_max_bytes_per_interval=f"{max(sent):.0f}", received_mean_bytes_per_interval=f"{sum(recv) / len(recv):.0f}",
            source="ss-tcp-bytes")
    # What each agent passed to write(2) and friends per 10 s (/proc/PID/io
    # wchar): its gRPC stream plus the Go runtime's own wake-up writes.
    wchar = [(s[-1][3] - s[0][3]) / ((s[-1][0] - s[0][0]) / 10) for r, s in by_role.items()
             if r.startswith("agent") and len(s) >= 2 and s[-1][0] > s[0][0]]
    if wchar:
        fig("agent-writes", mean_bytes_per_interval=f"{sum(wchar) / len(wchar):.0f}", source="proc-io-wchar")

    # RSS at fixed minutes, and whether it grows after the first third of
    # the run. A Go process's RSS is a sawtooth (the heap grows to twice
    # what is live, then a collection brings it back), and a point sampled
    # every 10 s lands anywhere on it: 64 threads' histograms swung an
    # agent between 176 and 236 MB, and a slope fitted to the raw points
    # went either way by up to 800 KiB/min; the lowest points are no
    # better (the kernel took 9 MB of the coordinator's back once, for a
    # few minutes), and a third's single highest point moved ±15 MB from
    # one third to the next on agents with no trend. So the middle and the
    # last third are compared by their medians: flat is when the median
    # grew by at most 5% (or 2 MiB). A leak that outgrows the sawtooth
    # raises the median; the peaks and the raw slope are printed beside it.
    marks = [m for m in (1, 5, 10, 20, 30) if m * 60 <= dur_s + 10]
    span = dur_s / 3

    def median(v):
        v = sorted(v)
        return v[len(v) // 2] if v else 0

    for role in ["coordinator"] + sorted((r for r in by_role if r.startswith("agent")), key=lambda r: int(r[5:])):
        pts = [(t, rss) for t, rss, _, _ in by_role[role]]
        mid = [rss for t, rss in pts if span <= t < 2 * span]
        last = [rss for t, rss in pts if t >= 2 * span]
        tail = [(t / 60, rss) for t, rss in pts if t >= span]
        m_mid, m_last = median(mid), median(last)
        p_mid, p_last = max(mid, default=0), max(last, default=0)
        flat = m_last - m_mid <= max(0.05 * m_mid, 2048)
        fig("rss", role=role, **{f"at_{m}min_kib": at(pts, m * 60) for m in marks},
            median_kib_middle_third=m_mid, median_kib_last_third=m_last,
            peak_kib_middle_third=p_mid, peak_kib_last_third=p_last,
            slope_kib_per_min_last_two_thirds=f"{slope(tail):.1f}", flat="yes" if flat else "NO")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
