#!/usr/bin/env python3
"""Builds a large unified GC log by repeating a real one with uptime, wall-clock time and GC ids shifted
so that they keep increasing, as one long-running JVM would have written it.

Usage: make_big_log.py SOURCE_LOG OUTPUT_LOG MIN_MEGABYTES
"""
import datetime
import re
import sys

UPTIME = re.compile(rb"\[(\d+\.\d+)s\]")
TIME = re.compile(rb"\[(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3})([+-]\d{4})\]")
GC_ID = re.compile(rb"GC\((\d+)\)")


def main():
    source, output, min_mb = sys.argv[1], sys.argv[2], float(sys.argv[3])
    lines = open(source, "rb").read().splitlines(keepends=True)
    uptimes = [float(m.group(1)) for line in lines for m in [UPTIME.search(line)] if m]
    ids = [int(m.group(1)) for line in lines for m in [GC_ID.search(line)] if m]
    period = max(uptimes) + 1.0  # seconds between repetitions
    id_step = max(ids) + 1 if ids else 0
    target = int(min_mb * 1024 * 1024)
    written = 0
    repetition = 0
    with open(output, "wb") as out:
        while written < target:
            shift = repetition * period
            gc_shift = repetition * id_step

            def uptime(m):
                return b"[%.3fs]" % (float(m.group(1)) + shift)

            def wall(m):
                t = datetime.datetime.strptime(m.group(1).decode(), "%Y-%m-%dT%H:%M:%S.%f")
                t += datetime.timedelta(seconds=shift)
                return b"[" + t.strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3].encode() + m.group(2) + b"]"

            def gc_id(m):
                return b"GC(%d)" % (int(m.group(1)) + gc_shift)

            # The JVM's start-up lines (before the first GC) appear once, as in a real log.
            for line in lines if repetition == 0 else [l for l in lines if GC_ID.search(l) or b"safepoint" in l]:
                line = UPTIME.sub(uptime, line, count=1)
                line = TIME.sub(wall, line, count=1)
                line = GC_ID.sub(gc_id, line, count=1)
                out.write(line)
                written += len(line)
            repetition += 1
    print(f"{output}: {written / 1048576:.1f} MiB, {repetition} repetitions of {source}")


if __name__ == "__main__":
    main()
