"""Prints the quick plan's figures from a finished campaign directory (bench/quick/run.sh)."""
import json
import os
import sys


def cells(campaign, config_dir):
    """(label, summary) of every cell of a configuration, sweep columns in order."""
    found = []
    for label in os.listdir(os.path.join(campaign, config_dir)):
        summary = os.path.join(campaign, config_dir, label, "summary.json")
        if os.path.isfile(summary) and label != "populate":
            with open(summary) as f:
                found.append((label, json.load(f)))
    return found


def top(found):
    """The plan's top rate: the highest fraction of the maximum (or the highest fixed rate)."""
    def key(item):
        label = item[0]
        if label.endswith("-of-max"):
            return (1, float(label[: -len("-of-max")]))
        try:
            return (0, float(label))
        except ValueError:
            return (-1, 0.0)
    rated = [c for c in found if key(c)[0] >= 0]
    return max(rated, key=key)


def main():
    campaign, plan, seconds = sys.argv[1], sys.argv[2], float(sys.argv[3])
    configs = sorted(d for d in os.listdir(campaign)
                     if os.path.isfile(os.path.join(campaign, d, "config.json")))
    rows = []
    for config_dir in configs:
        with open(os.path.join(campaign, config_dir, "config.json")) as f:
            config = json.load(f)
        found = cells(campaign, config_dir)
        maximum = dict(found).get("max", {}).get("achieved_rate")
        label, summary = top(found)
        write = summary["ops"].get("write", {})
        rows.append({
            "name": config["name"], "gc": config["spec"]["gc"], "max": maximum, "label": label,
            "rate": summary["achieved_rate"], "target": summary.get("target_rate"),
            "avg_p99": write.get("avg_p99_ms"), "p999": write.get("latency_ms", {}).get("p999"),
            "window": summary.get("p99_window_s"),
        })
    print(f"plan {plan}: campaign took {seconds:.0f} s ({seconds / 60:.1f} min) after the build")
    windows = sorted({r["window"] for r in rows if r["window"]})
    print("Average p99 over windows of " + ", ".join(f"{w:g} s" for w in windows))
    print(f"{'configuration':<18} {'capacity':>9} {'top rate':>14} {'achieved':>9} "
          f"{'write avg p99':>14} {'write p99.9':>12}")
    for r in rows:
        cap = f"{r['max']:.0f}" if r["max"] else "-"
        print(f"{r['name']:<18} {cap:>9} {r['label']:>14} {r['rate']:>9.0f} "
              f"{r['avg_p99'] or float('nan'):>11.2f} ms {r['p999'] or float('nan'):>9.2f} ms")
    g1 = [r for r in rows if r["gc"] == "g1"]
    concurrent = [r for r in rows if r["gc"] in ("zgc", "shenandoah", "zgc-generational",
                                                  "shenandoah-generational") and r["avg_p99"]]
    if g1 and g1[0]["avg_p99"] and concurrent:
        best = min(concurrent, key=lambda r: r["avg_p99"])
        print(f"G1 / best concurrent ({best['name']}) write Average p99 at the top rate: "
              f"{g1[0]['avg_p99'] / best['avg_p99']:.2f}x (target >= 2x)")
    with open(os.path.join(campaign, "tables.txt")) as f:
        closing = [line for line in f.read().splitlines() if line.startswith("At ")]
    if closing:
        print("closing line:", closing[-1])


main()
