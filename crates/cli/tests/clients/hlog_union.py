"""An independent reader of cqlbench's interval logs (the `hdrhistogram` package from PyPI): adds every
interval of every .hlog file given into one histogram and prints, as JSON, its count, its maximum and
the values at the quantiles asked for, all in the logs' unit (microseconds).

    python3 hlog_union.py 0.5,0.9,0.99 client0/write.hlog client1/write.hlog ...

A quantile q is the value of the ceil(q x count)-th smallest recorded value (at least the first), as
HdrHistogram's Java and Rust implementations define it, reported as the highest value equivalent to
it at the histogram's precision.
"""
import json
import math
import sys

from hdrh.histogram import HdrHistogram


def intervals(path):
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith("#") or line.startswith('"') or line.startswith("Tag="):
                continue
            fields = line.split(",")
            if len(fields) != 4:
                raise SystemExit(f"{path}: unexpected line {line!r}")
            yield HdrHistogram.decode(fields[3])


def main():
    quantiles = [float(q) for q in sys.argv[1].split(",")]
    union = HdrHistogram(1, 3_600_000_000, 3)
    logs = 0
    for path in sys.argv[2:]:
        for h in intervals(path):
            logs += 1
            for item in h.get_recorded_iterator():
                union.record_value(item.value_iterated_to, item.count_at_value_iterated_to)
    total = union.get_total_count()
    values = {}
    for q in quantiles:
        rank = max(1, math.ceil(q * total))
        seen = 0
        for item in union.get_recorded_iterator():
            seen += item.count_at_value_iterated_to
            if seen >= rank:
                values[str(q)] = union.get_highest_equivalent_value(item.value_iterated_to)
                break
    print(json.dumps({
        "intervals": logs,
        "count": total,
        "max": union.get_max_value(),
        "quantiles": values,
        # The package's own percentile function, for the record (its rank rounds instead).
        "package_p99": union.get_value_at_percentile(99.0),
    }))


main()
