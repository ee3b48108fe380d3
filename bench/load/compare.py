#!/usr/bin/env python3
"""cqlbench vs latte, side by side against the same local Cassandra node (a figure, not a test).

For each tool and scenario it prints: client CPU µs per completed operation (user+sys, from the kernel's
rusage of the whole client process), peak RSS, offered vs achieved rate, p50/p99/p99.9.

Scenarios (same workload shape for both: single-row inserts with a tiny value, 1 thread, 128 in flight,
1 connection):
  fixed        3000 ops/s for 60 s (cqlbench also once more with --tick 0: every operation released at its
               own time instead of in groups every 2 ms)
  unthrottled  as fast as possible for 30 s
  stall        2000 ops/s for 40 s with the node SIGSTOPped for 2 s at 15 s; both tools' p99/p99.9 are
               printed beside the truth the schedule implies (an op due t seconds into a stall of length S
               cannot complete before S - t).

  slow-ops     (--slow-ops-cost only) cqlbench at 3000 ops/s with and without slow-ops.csv (--no-slow-ops),
               alternated twice each: what keeping the tail's operations for the GC join costs per op.
  prometheus   (--prometheus-cost only) cqlbench at 3000 ops/s with --prometheus (scraped once a second,
               as a Prometheus with a 1 s interval would) and without, alternated three times each.

Usage: python3 bench/load/compare.py [--quick] [--skip-stall] [--slow-ops-cost] [--prometheus-cost]
It builds cqlbench, installs latte 0.29.0 into bench/load/.tools (git-ignored) if missing, starts a 1-node
cluster `load-bench` on 127.0.3.1 with `cqlbench cluster up`, and stops it at the end.
Targets (issue 3): cqlbench CPU/op <= 0.5x latte at the fixed rate, <= 0.6x unthrottled; peak RSS <= 32 MB
at 3000 ops/s; achieved rate within 1%.
"""
import argparse
import glob
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TOOLS = os.path.join(ROOT, "bench", "load", ".tools")
RESULTS = os.path.join(ROOT, "bench", "load", "results", time.strftime("%Y%m%d-%H%M%S"))
CQLBENCH = os.path.join(ROOT, "target", "release", "cqlbench")
LATTE = os.path.join(TOOLS, "bin", "latte")
CLUSTER = "load-bench"
HOST = "127.0.3.1"


def sh(cmd, **kw):
    print("+ " + " ".join(cmd), file=sys.stderr)
    return subprocess.run(cmd, check=True, **kw)


def ensure_tools(latte=True):
    sh(["cargo", "build", "--release", "-p", "cqlbench"], cwd=ROOT)
    if latte and not os.path.exists(LATTE):
        sh(["nice", "-n", "19", "cargo", "install", "latte-cli", "--version", "0.29.0", "--locked", "--root", TOOLS])


def latte_workload():
    home = os.environ.get("CARGO_HOME", os.path.expanduser("~/.cargo"))
    pattern = os.path.join(home, "registry", "src", "*", "latte-cli-0.29.0", "workloads", "basic", "write.rn")
    if not glob.glob(pattern):
        # latte is installed but its sources are gone (a cleaned registry): `cargo fetch` of a throwaway
        # package that depends on it unpacks them again, without building anything.
        with tempfile.TemporaryDirectory() as package:
            os.makedirs(os.path.join(package, "src"))
            with open(os.path.join(package, "Cargo.toml"), "w") as f:
                f.write('[package]\nname = "latte-sources"\nversion = "0.0.0"\nedition = "2021"\n\n'
                        '[dependencies]\nlatte-cli = "=0.29.0"\n')
            with open(os.path.join(package, "src", "main.rs"), "w") as f:
                f.write("fn main() {}\n")
            sh(["cargo", "fetch", "--quiet"], cwd=package)
    found = glob.glob(pattern)
    if not found:
        sys.exit("latte's workloads/basic/write.rn not found in the cargo registry sources, even after cargo fetch")
    return found[0]


def node_pid():
    home = os.environ.get("CQLBENCH_HOME") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "cqlbench")
    with open(os.path.join(home, "clusters", CLUSTER, "cluster.json")) as f:
        state = json.load(f)
    return state["nodes"][0]["pid"]


def timed(cmd, label, stall=None):
    """Runs cmd under GNU time; optionally SIGSTOPs the node (at, length) into the run."""
    os.makedirs(RESULTS, exist_ok=True)
    rusage = os.path.join(RESULTS, label + ".time")
    log = open(os.path.join(RESULTS, label + ".log"), "w")
    stall_info = {}

    def pause(at, length):
        time.sleep(at)
        pid = node_pid()
        os.kill(pid, signal.SIGSTOP)
        t0 = time.monotonic()
        time.sleep(length)
        os.kill(pid, signal.SIGCONT)
        stall_info["length"] = time.monotonic() - t0

    thread = None
    if stall:
        thread = threading.Thread(target=pause, args=stall)
        thread.start()
    print(f"+ [{label}] " + " ".join(cmd), file=sys.stderr)
    # latte writes a log file into its working directory: keep it with the results, not in the repository.
    subprocess.run(["/usr/bin/time", "-f", "%U %S %M %w %c", "-o", rusage] + cmd, stdout=log,
                   stderr=subprocess.STDOUT, check=True, cwd=RESULTS)
    if thread:
        thread.join()
    user, system, max_rss_kb, voluntary, involuntary = open(rusage).read().split()[-5:]
    # Voluntary context switches: each is a sleep that ended in a wake-up.
    LAST_SWITCHES[:] = [int(voluntary), int(involuntary)]
    return float(user) + float(system), int(max_rss_kb) / 1024.0, stall_info.get("length")


LAST_SWITCHES = [0, 0]


def alternated_cost(name, with_args, without_args, seconds, pairs, during_with=None):
    """cqlbench at 3000 ops/s with and without some options, alternated (A B A B ...) so that drift on a
    shared machine falls on both alike; returns the runs. `during_with` runs in a thread beside each
    "with" run (given a stop event)."""
    run_cqlbench("warm-cqlbench", 3000, 10)
    runs = {"with": [], "without": []}
    for i in range(pairs):
        stop = threading.Event()
        helper = threading.Thread(target=during_with, args=(stop,)) if during_with else None
        if helper:
            helper.start()
        try:
            runs["with"].append(run_cqlbench(f"{name}-with-{i}", 3000, seconds, extra=with_args))
        finally:
            stop.set()
            if helper:
                helper.join()
        runs["without"].append(run_cqlbench(f"{name}-without-{i}", 3000, seconds, extra=without_args))
    us = print_cost(name, runs)
    print(f"{name} with / without: {us['with'] / us['without']:.3f}x")
    return runs


def print_cost(name, runs):
    """Prints each label's client CPU per operation over its runs (and each run's); returns them by label."""
    print()
    us = {}
    for label, results in runs.items():
        cpu = sum(r["cpu"] for r in results)
        ops = sum(r["ops"] for r in results)
        us[label] = cpu * 1e6 / max(ops, 1)
        each = ", ".join("%.2f" % (r["cpu"] * 1e6 / max(r["ops"], 1)) for r in results)
        rss = max(r["rss"] for r in results)
        print(f"{name} {label:<9} {us[label]:.2f} us/op over {ops} ops, peak RSS {rss:.0f} MB (runs: {each})")
    return us


def slow_ops_cost(seconds):
    alternated_cost("slow-ops", (), ("--no-slow-ops",), seconds, 2)
    lines = sum(count_lines(os.path.join(RESULTS, f"slow-ops-with-{i}", "slow-ops.csv")) - 1 for i in range(2))
    print(f"{lines} operations kept in slow-ops.csv")


EXPORTER = "127.0.3.2:9464"


def prometheus_cost(seconds):
    """--prometheus's cost per operation, scraped once a second like a Prometheus with a 1 s interval."""
    scrapes = []

    def scrape(stop):
        while not stop.wait(1.0):
            try:
                with urllib.request.urlopen(f"http://{EXPORTER}/metrics", timeout=2) as answer:
                    scrapes.append(len(answer.read()))
            except OSError:
                pass  # before the exporter listens, or after it stopped

    alternated_cost("prometheus", ("--prometheus", EXPORTER, "--prometheus-linger", "0s"), (), seconds, 3,
                    during_with=scrape)
    if scrapes:
        print(f"{len(scrapes)} scrapes of /metrics, {sum(scrapes) / len(scrapes) / 1024:.0f} KiB each")


def file_cost(seconds, pairs=3):
    """Issue 21's bound: a workload read from a file against the same workload built in (KeyValue, one-row
    writes and point reads, 50/50), at 3000 ops/s on one thread each, alternated (A B A B ...)."""
    file = os.path.join(os.path.dirname(os.path.abspath(__file__)), "keyvalue.yaml")

    def run(label, workload, extra):
        out = os.path.join(RESULTS, label)
        cmd = [CQLBENCH, "run", workload, "--host", HOST, "--keyspace", "bench", "-c", "128",
               "--connections-per-host", "1", "-d", f"{seconds}s", "-t", "1", "--rate", "3000", "-o", out, *extra]
        cpu, rss, _ = timed(cmd, label)
        s = json.load(open(os.path.join(out, "summary.json")))
        return dict(cpu=cpu, rss=rss, ops=sum(op["count"] for op in s["ops"].values()))

    runs = {"built-in": [], "file": []}
    run("warm-built-in", "KeyValue", ("-r", "0.5"))
    run("warm-file", file, ())
    for i in range(pairs):
        runs["built-in"].append(run(f"built-in-{i}", "KeyValue", ("-r", "0.5")))
        runs["file"].append(run(f"file-{i}", file, ()))
    us = print_cost("KeyValue", runs)
    print(f"file / built-in: {us['file'] / us['built-in']:.3f}x (issue 21 asks for at most 1.15x)")


def count_lines(path):
    try:
        with open(path) as f:
            return sum(1 for _ in f)
    except OSError:
        return 1


def cqlbench_command(label, rate, seconds, extra=(), threads=1):
    out = os.path.join(RESULTS, label)
    cmd = [CQLBENCH, "run", "KeyValue", "--host", HOST, "--keyspace", "bench", "-r", "0", "--workload.value_size=1",
           "-c", "128", "--connections-per-host", "1", "-d", f"{seconds}s", "-p", "1B", "-o", out, *extra]
    if threads:
        cmd += ["-t", str(threads)]
    if rate:
        cmd += ["--rate", str(rate)]
    return cmd, out


def run_cqlbench(label, rate, seconds, stall=None, extra=(), threads=1):
    cmd, out = cqlbench_command(label, rate, seconds, extra, threads)
    cpu, rss, stall_len = timed(cmd, label, stall)
    s = json.load(open(os.path.join(out, "summary.json")))
    w = s["ops"]["write"]
    return dict(tool="cqlbench", ops=w["count"], achieved=s["achieved_rate"], cpu=cpu, rss=rss,
                p50=w["latency_ms"]["p50"], p99=w["latency_ms"]["p99"], p999=w["latency_ms"]["p999"],
                svc_p99=w["service_time_ms"]["p99"], stall=stall_len, wakeups=LAST_SWITCHES[0])


def latte_command(label, rate, seconds, threads=1):
    report = os.path.join(RESULTS, label + ".json")
    workload = latte_workload()
    os.makedirs(RESULTS, exist_ok=True)
    sh([LATTE, "schema", workload, HOST], stdout=subprocess.DEVNULL, cwd=RESULTS)
    cmd = [LATTE, "run", workload, "-p", "128", "-d", f"{seconds}s", "-o", report, HOST]
    if threads:
        cmd += ["-t", str(threads)]
    if rate:
        cmd += ["-r", str(rate)]
    return cmd, report


def run_latte(label, rate, seconds, stall=None, threads=1):
    cmd, report = latte_command(label, rate, seconds, threads)
    cpu, rss, stall_len = timed(cmd, label, stall)
    r = json.load(open(report))
    res = r["result"]
    pct = dict(zip(r["percentiles"], [p["value"] for p in res["cycle_latency"]["percentiles"]]))
    return dict(tool="latte", ops=res["cycle_count"], achieved=res["cycle_count"] / res["elapsed_time_s"], cpu=cpu,
                rss=rss, p50=pct[50.0], p99=pct[99.0], p999=pct[99.9], svc_p99=None, stall=stall_len,
                wakeups=LAST_SWITCHES[0])


def syscalls_per_op(tool, label, rate, seconds, threads):
    """System calls per operation, from a separate run under strace -f -c (strace slows the client, so
    its CPU figures are not used; the calls it makes per operation are what the loop does)."""
    if tool == "cqlbench":
        cmd, out = cqlbench_command(label, rate, seconds, threads=threads)
    else:
        cmd, out = latte_command(label, rate, seconds, threads=threads)
    counts = os.path.join(RESULTS, label + ".strace")
    subprocess.run(["strace", "-f", "-c", "-o", counts] + cmd, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, check=True, cwd=RESULTS)
    calls = 0
    for line in open(counts):
        fields = line.split()
        if fields and fields[-1] == "total":
            calls = int(fields[3])
    if tool == "cqlbench":
        ops = json.load(open(os.path.join(out, "summary.json")))["ops"]["write"]["count"]
    else:
        ops = json.load(open(out))["result"]["cycle_count"]
    return calls / max(ops, 1)


def rates_table(seconds):
    """Issue 24's table: client CPU per operation at 1000, 3000 and 10000 ops/s, one thread and each tool's
    default, start-up excluded (a SECONDS run minus a 2 s run), with wake-ups and system calls per op."""
    print(f"{'rate':>6} {'threads':<8} {'tool':<9} {'achieved':>9} {'cpu us/op':>9} {'wakeups/op':>10} "
          f"{'syscalls/op':>11} {'rss MB':>7} {'p99 ms':>8}")
    ratios = []
    for rate in (1000, 3000, 10000):
        for threads in (1, None):
            figures = {}
            for tool, run in (("cqlbench", run_cqlbench), ("latte", run_latte)):
                name = f"rate{rate}-t{threads or 'default'}-{tool}"
                short = run(name + "-short", rate, 2, threads=threads)
                long_ = run(name, rate, seconds, threads=threads)
                ops = max(long_["ops"] - short["ops"], 1)
                cpu_us = (long_["cpu"] - short["cpu"]) * 1e6 / ops
                wakeups = (long_["wakeups"] - short["wakeups"]) / ops
                calls = syscalls_per_op(tool, name + "-strace", rate, 5, threads)
                figures[tool] = cpu_us
                print(f"{rate:>6} {threads or 'default':<8} {tool:<9} {long_['achieved']:>9.1f} {cpu_us:>9.2f} "
                      f"{wakeups:>10.3f} {calls:>11.2f} {long_['rss']:>7.1f} {long_['p99']:>8.2f}", flush=True)
            ratio = figures["cqlbench"] / figures["latte"]
            ratios.append(ratio)
            print(f"{rate:>6} {threads or 'default':<8} cqlbench / latte CPU per op: {against_target(ratio)}",
                  flush=True)
    print(f"worst ratio: {against_target(max(ratios))}")


def against_target(ratio):
    """Three decimals, so that 0.3035 does not print as a met 0.30."""
    verdict = "met" if ratio <= 0.3 else "MISSED"
    return f"{ratio:.3f}x (target <= 0.3: {verdict})"


def truth(rate, seconds, stall_at, stall_len, base_ms):
    """Latency percentiles the schedule implies: ops due during the stall wait for its end."""
    n = int(rate * seconds)
    lat = []
    for i in range(n):
        t = i / rate
        extra = (stall_at + stall_len - t) * 1000.0 if stall_at <= t < stall_at + stall_len else 0.0
        lat.append(base_ms + extra)
    lat.sort()
    return {q: lat[min(n - 1, int(q / 100.0 * n))] for q in (50.0, 99.0, 99.9)}


def row(scenario, r, offered):
    us_per_op = r["cpu"] * 1e6 / max(r["ops"], 1)
    off = f"{offered:>7}" if offered else "  unthr"
    print(f"{scenario:<12} {r['tool']:<9} {off} {r['achieved']:>9.1f} {us_per_op:>9.1f} {r['rss']:>8.1f} "
          f"{r['p50']:>9.2f} {r['p99']:>9.2f} {r['p999']:>9.2f}")
    return us_per_op


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="shorter runs (20 s / 10 s / 30 s stall)")
    ap.add_argument("--skip-stall", action="store_true")
    ap.add_argument("--slow-ops-cost", action="store_true",
                    help="only measure slow-ops.csv's cost: cqlbench with and without --no-slow-ops")
    ap.add_argument("--prometheus-cost", action="store_true",
                    help="only measure --prometheus's cost: cqlbench with and without it, scraped every second")
    ap.add_argument("--rates", action="store_true",
                    help="only issue 24's table: CPU, wake-ups and system calls per op at 1000, 3000 and 10000 "
                         "ops/s, one thread and the default, cqlbench beside latte")
    ap.add_argument("--file-cost", action="store_true",
                    help="only measure a workload file's cost: bench/load/keyvalue.yaml beside run KeyValue -r 0.5")
    args = ap.parse_args()
    fixed_s, unthrottled_s, stall_s, stall_at = (20, 10, 30, 10) if args.quick else (60, 30, 40, 15)

    ensure_tools(latte=not (args.slow_ops_cost or args.prometheus_cost or args.file_cost))
    if args.rates and not os.path.exists("/usr/bin/strace"):
        sys.exit("--rates counts system calls with strace: apt-get install strace")
    up = subprocess.run([CQLBENCH, "cluster", "up", "--name", CLUSTER, "--base-ip", HOST])
    if up.returncode != 0:
        # Already up (possibly started with other options by an earlier run): use it as it is.
        sh([CQLBENCH, "cluster", "status", "--name", CLUSTER])
    rows = []
    if args.rates:
        try:
            run_cqlbench("warm-cqlbench", 3000, 10)
            run_latte("warm-latte", 3000, 10)
            rates_table(fixed_s)
        finally:
            sh([CQLBENCH, "cluster", "down", "--name", CLUSTER])
        return
    if args.file_cost:
        try:
            file_cost(fixed_s)
        finally:
            sh([CQLBENCH, "cluster", "down", "--name", CLUSTER])
        return
    if args.slow_ops_cost or args.prometheus_cost:
        try:
            if args.slow_ops_cost:
                slow_ops_cost(fixed_s)
            if args.prometheus_cost:
                prometheus_cost(fixed_s)
        finally:
            sh([CQLBENCH, "cluster", "down", "--name", CLUSTER])
        return
    try:
        # Warm the node's JIT for both tools' statements before measuring anything.
        run_cqlbench("warm-cqlbench", 3000, 10)
        run_latte("warm-latte", 3000, 10)
        results = {}
        for label, rate, secs in (("fixed", 3000, fixed_s), ("unthrottled", None, unthrottled_s)):
            results[label] = (run_cqlbench(label + "-cqlbench", rate, secs), run_latte(label + "-latte", rate, secs),
                              rate)
        # The price of releasing every operation at its own time: one timer wake-up per operation.
        exact = run_cqlbench("fixed-tick0-cqlbench", 3000, fixed_s, extra=("--tick", "0"))
        if not args.skip_stall:
            results["stall"] = (run_cqlbench("stall-cqlbench", 2000, stall_s, (stall_at, 2.0)),
                                run_latte("stall-latte", 2000, stall_s, (stall_at, 2.0)), 2000)
    finally:
        sh([CQLBENCH, "cluster", "down", "--name", CLUSTER])

    print()
    print(f"{'scenario':<12} {'tool':<9} {'offered':>7} {'achieved':>9} {'cpu us/op':>9} {'rss MB':>8} "
          f"{'p50 ms':>9} {'p99 ms':>9} {'p99.9 ms':>9}")
    ratios = {}
    for scenario, (ours, theirs, rate) in results.items():
        a = row(scenario, ours, rate)
        b = row(scenario, theirs, rate)
        ratios[scenario] = a / b
        if scenario == "stall":
            length = ours["stall"] or 2.0
            t = truth(2000, stall_s, stall_at, length, ours["p50"])
            print(f"{'stall':<12} {'truth':<9} {2000:>7} {'':>9} {'':>9} {'':>8} {t[50.0]:>9.2f} {t[99.0]:>9.2f} "
                  f"{t[99.9]:>9.2f}   (schedule with a {length:.2f} s stall; base = cqlbench p50)")
    exact_us = row("fixed", dict(exact, tool="tick 0"), 3000)
    print()
    print(f"cqlbench --tick 0 (each operation released at its own time): {exact_us:.1f} us/op, "
          f"{exact_us / (results['fixed'][1]['cpu'] * 1e6 / max(results['fixed'][1]['ops'], 1)):.2f}x latte")
    fixed = results["fixed"][0]
    print(f"cqlbench/latte CPU per op: fixed {ratios['fixed']:.2f}x (target <= 0.5), "
          f"unthrottled {ratios['unthrottled']:.2f}x (target <= 0.6)")
    print(f"cqlbench peak RSS at 3000 ops/s: {fixed['rss']:.1f} MB (target <= 32); achieved "
          f"{fixed['achieved']:.1f} ops/s = {100 * (fixed['achieved'] / 3000 - 1):+.2f}% (target within 1%)")
    print(f"raw results: {RESULTS}")


if __name__ == "__main__":
    main()
