//! Line families seen in public real-world GC logs (other analysers' test corpora) that the fixtures
//! made on this machine do not cover. Each excerpt keeps the real line shape; numbers are our own.

use std::fs;

use cqlbench_gclog::{analyze, Input, Report};

fn analyze_text(log: &str) -> Report {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("gc.log");
    fs::write(&path, log).unwrap();
    analyze(&[Input::Path(path)], None, &mut |_| {}).unwrap()
}

fn close(actual: f64, expected: f64) -> bool {
    (actual - expected).abs() < 1e-6
}

#[test]
fn parallel_young_collection_split_by_tenuring_distribution_is_one_pause() {
    // JDK 8 Parallel with -XX:+PrintTenuringDistribution: the `[GC (…)` line is left open, the
    // survivor table follows, and the generation summary line starting with `[PSYoungGen:` closes it.
    let log = "2015-07-13T20:53:00.436+0200: 0.260: [GC (Allocation Failure) \n\
        Desired survivor size 4194304 bytes, new threshold 7 (max 15)\n\
        [PSYoungGen: 24000K->4000K(28000K)] 24000K->22000K(94000K), 0.0200000 secs] [Times: user=0.02 sys=0.02, real=0.02 secs]\n\
        2015-07-13T20:53:01.436+0200: 1.260: [GC (System.gc()) \n\
        Desired survivor size 4194304 bytes, new threshold 7 (max 15)\n\
        [PSYoungGen: 20000K->3000K(28000K)] 40000K->25000K(94000K), 0.0100000 secs] [Times: user=0.02 sys=0.00, real=0.01 secs]\n\
        2015-07-13T20:53:01.447+0200: 1.271: [Full GC (System.gc()) [PSYoungGen: 3000K->0K(28000K)] [ParOldGen: 22000K->20000K(66000K)] 25000K->20000K(94000K), [Metaspace: 3000K->3000K(1056768K)], 0.0300000 secs] [Times: user=0.05 sys=0.00, real=0.03 secs]\n";
    let report = analyze_text(log);
    assert_eq!(report.unparsed_lines, 0);
    assert_eq!(report.pauses.count, 3);
    assert_eq!(report.pauses.by_kind["Young"].count, 2);
    assert!(close(report.pauses.by_kind["Young"].total_ms, 30.0));
    assert_eq!(report.pauses.by_kind["Full"].count, 1);
}

#[test]
fn jdk7_cms_phases_without_gc_cause_are_initial_mark_and_remark() {
    // Before JDK 8 (no PrintGCCause) CMS's stop-the-world phases print as a bare `[GC [1 CMS-initial-mark:`
    // and `[GC[YG occupancy: …] … [1 CMS-remark: …]`.
    let log = "2014-04-09T15:26:52.201+0200: 0.384: [GC [1 CMS-initial-mark: 73000K(95000K)] 85000K(138000K), 0.0002000 secs] [Times: user=0.00 sys=0.00, real=0.00 secs] \n\
        2014-04-09T15:26:52.201+0200: 0.385: [CMS-concurrent-mark-start]\n\
        2014-04-09T15:26:52.211+0200: 0.395: [CMS-concurrent-mark: 0.010/0.010 secs] [Times: user=0.00 sys=0.00, real=0.01 secs] \n\
        2014-04-09T15:26:52.211+0200: 0.396: [GC[YG occupancy: 41000 K (43000 K)]2014-04-09T15:26:52.211+0200: 0.396: [Rescan (parallel) , 0.0003000 secs]2014-04-09T15:26:52.211+0200: 0.396: [weak refs processing, 0.0000100 secs] [1 CMS-remark: 73000K(95000K)] 115000K(138000K), 0.0010000 secs] [Times: user=0.00 sys=0.00, real=0.00 secs] \n\
        2014-04-09T15:26:52.220+0200: 0.404: [GC 0.404: [ParNew: 40000K->4000K(43000K), 0.0050000 secs] 110000K->80000K(138000K), 0.0051000 secs] [Times: user=0.00 sys=0.00, real=0.00 secs] \n";
    let report = analyze_text(log);
    assert_eq!(report.unparsed_lines, 0);
    let kinds = &report.pauses.by_kind;
    assert_eq!(kinds["Initial Mark"].count, 1, "{kinds:?}");
    assert!(close(kinds["Initial Mark"].total_ms, 0.2));
    assert_eq!(kinds["Remark"].count, 1, "{kinds:?}");
    assert!(close(kinds["Remark"].total_ms, 1.0));
    assert_eq!(kinds["Young"].count, 1, "{kinds:?}");
}

#[test]
fn unified_lines_with_decimal_commas_are_read() {
    // A JVM running under a locale with a decimal comma (de_DE, fr_FR, …) prints `0,151s` and `3,496ms`.
    let log = "[2018-10-10T17:09:33.823+0200][0.022s][info][gc] Using G1\n\
        [2018-10-10T17:09:33.877+0200][0,077s][info][safepoint] Total time for which application threads were stopped: 0,0000200 seconds, Stopping threads took: 0,0000010 seconds\n\
        [2018-10-10T17:09:33.948+0200][0,147s][info][safepoint] Application time: 0,0550000 seconds\n\
        [2018-10-10T17:09:33.952+0200][0,151s][info][gc       ] GC(0) Pause Young (G1 Evacuation Pause) 24M->4M(250M) 3,500ms\n\
        [2018-10-10T17:09:33.952+0200][0,151s][info][safepoint] Total time for which application threads were stopped: 0,0036000 seconds, Stopping threads took: 0,0000400 seconds\n";
    let report = analyze_text(log);
    assert_eq!(report.unparsed_lines, 0);
    assert_eq!(report.pauses.count, 1);
    assert!(close(report.pauses.total_ms, 3.5));
    let safepoints = report.safepoints.expect("safepoint lines");
    assert_eq!(safepoints.count, 2);
    assert!(close(safepoints.stopped_total_ms, 3.62));
    assert!(close(report.span_s.expect("span"), 0.129));
}

#[test]
fn parallel_adaptive_size_policy_lines_are_understood() {
    // JDK 8 Parallel with -XX:+PrintAdaptiveSizePolicy prints its reasoning between `[GC (…)` and
    // the `[PSYoungGen: …` summary, on unstamped lines of its own.
    let log = "2015-03-04T09:13:59.445+0100: 55047.616: [GC (Allocation Failure)AdaptiveSizePolicy::compute_survivor_space_size_and_thresh:  survived: 1200000  promoted: 130000  overflow: falseAdaptiveSizeStart: 55047.624 collection: 21\n  \
        avg_survived_padded_avg: 75000000.000000  avg_promoted_padded_avg: 10000000.000000  avg_pretenured_padded_avg: 0.000000  tenuring_thresh: 1  target_size: 76000000\n\
        Desired survivor size 76000000 bytes, new threshold 1 (max 15)\n\
        PSAdaptiveSizePolicy::compute_generation_free_space: costs minor_time: 0.000128 major_cost: 0.000000 mutator_cost: 0.999872 throughput_goal: 0.990000 live_space: 336000000 free_space: 1061000000 old_promo_size: 537000000 old_eden_size: 523000000 desired_promo_size: 537000000 desired_eden_size: 538000000\n\
        AdaptiveSizePolicy::survivor space sizes: collection: 21 (79000000, 83000000) -> (79000000, 76000000)\n\
        AdaptiveSizeStop: collection: 21\n \
        [PSYoungGen: 540000K->1200K(617000K)] 592000K->53000K(2015000K), 0.0080000 secs] [Times: user=0.02 sys=0.00, real=0.01 secs]\n";
    let report = analyze_text(log);
    assert_eq!(report.unparsed_lines, 0);
    assert_eq!(report.pauses.count, 1);
    assert!(close(report.pauses.total_ms, 8.0));
}

#[test]
fn cms_remark_with_scavenge_before_it_is_one_remark_pause() {
    // -XX:+CMSScavengeBeforeRemark: the remark opens, a young collection runs inside it (here on its
    // own line because of PrintHeapAtGC), and the remark's duration closes a later stamped `[Rescan` line.
    // One stop each, named after both.
    let log = "2015-05-14T18:55:12.588+0200: 1.157: [GC (CMS Final Remark) [YG occupancy: 10000 K (47000 K)]{Heap before GC invocations=22 (full 13):\n \
        par new generation   total 47000K, used 10000K [0x00000000f6400000, 0x00000000f9800000, 0x00000000f9800000)\n\
        2015-05-14T18:55:12.588+0200: 1.158: [GC (CMS Final Remark) 1.158: [ParNew: 10000K->10000K(47000K), 0.0000300 secs] 111000K->111000K(154000K), 0.0000800 secs] [Times: user=0.00 sys=0.00, real=0.00 secs]\n\
        Heap after GC invocations=23 (full 13):\n \
        par new generation   total 47000K, used 10000K [0x00000000f6400000, 0x00000000f9800000, 0x00000000f9800000)\n\
        }\n\
        1.158: [Rescan (parallel) , 0.0002700 secs]1.158: [weak refs processing, 0.0000100 secs]1.159: [scrub string table, 0.0001400 secs][1 CMS-remark: 100000K(106000K)] 111000K(154000K), 0.0020000 secs] [Times: user=0.00 sys=0.00, real=0.00 secs]\n\
        2015-05-14T18:55:13.000+0200: 1.570: [GC (CMS Final Remark) [YG occupancy: 9000 K (47000 K)]1.570: [GC (CMS Final Remark) 1.570: [ParNew: 9000K->900K(47000K), 0.0010000 secs] 110000K->102000K(154000K), 0.0011000 secs] [Times: user=0.00 sys=0.00, real=0.00 secs]\n\
        1.571: [Rescan (parallel) , 0.0002000 secs][1 CMS-remark: 101000K(106000K)] 102000K(154000K), 0.0030000 secs] [Times: user=0.00 sys=0.00, real=0.00 secs]\n";
    let report = analyze_text(log);
    assert_eq!(report.unparsed_lines, 0);
    let kinds = &report.pauses.by_kind;
    assert_eq!(report.pauses.count, 2, "{kinds:?}");
    assert_eq!(kinds.len(), 1, "{kinds:?}");
    assert_eq!(kinds["Remark (with scavenge)"].count, 2, "{kinds:?}");
    assert!(
        close(kinds["Remark (with scavenge)"].total_ms, 5.0),
        "{kinds:?}"
    );
}

#[test]
fn cms_concurrent_mode_failure_interrupting_a_concurrent_phase_is_one_young_and_full_pause() {
    // A ParNew whose promotion failed falls back to a CMS collection inside the same pause; the
    // concurrent sweep it interrupts reports on the same line (`[CMS-concurrent-sweep: …/… secs]`)
    // before the collection's own `, N secs]` arrives on the next line. One stop, named after both.
    let log = "2014-03-12T21:18:26.029-0500: 13295.637: [GC2014-03-12T21:18:26.029-0500: 13295.637: [ParNew (0: promotion failure size = 11000)  (promotion failed)\n\
        Desired survivor size 208000000 bytes, new threshold 15 (max 15)\n\
        - age   1:  187000000 bytes,  187000000 total\n\
        : 6900000K->6800000K(6930000K), 2.7000000 secs]2014-03-12T21:18:28.759-0500: 13298.367: [CMS2014-03-12T21:18:31.372-0500: 13300.980: [CMS-concurrent-sweep: 16.000/20.000 secs] [Times: user=100.59 sys=4.74, real=20.00 secs]\n \
        (concurrent mode failure): 23500000K->23300000K(25100000K), 127.0000000 secs] 30400000K->23300000K(32000000K), [CMS Perm : 137000K->97000K(262000K)], 130.0000000 secs] [Times: user=131.28 sys=0.07, real=130.00 secs]\n\
        2014-03-12T21:20:35.976-0500: 13425.584: Total time for which application threads were stopped: 130.0100000 seconds\n";
    let report = analyze_text(log);
    assert_eq!(report.unparsed_lines, 0);
    let kinds = &report.pauses.by_kind;
    assert_eq!(report.pauses.count, 1, "{kinds:?}");
    let nested = &kinds["Young (promotion failed) + Full"];
    assert_eq!(nested.count, 1, "{kinds:?}");
    assert!(close(nested.total_ms, 130_000.0), "{kinds:?}");
}

#[test]
fn g1_pause_closed_at_the_end_of_a_reference_processing_line_is_counted() {
    // JDK 8 G1 with -XX:+PrintReferenceGC and -XX:+PrintAdaptiveSizePolicy: the pause's `, N secs]`
    // ends the stamped line that lists the reference kinds.
    let log = "2018-12-21T00:43:08.480+0800: 100.000: [GC pause (G1 Evacuation Pause) (young) 100.002: [G1Ergonomics (CSet Construction) start choosing CSet, _pending_cards: 1000, predicted base time: 5.00 ms, remaining time: 195.00 ms, target pause time: 200.00 ms]\n \
        100.002: [G1Ergonomics (CSet Construction) finish choosing CSet, eden: 255 regions, survivors: 1 regions, old: 0 regions, predicted pause time: 7.09 ms, target pause time: 200.00 ms]\n\
        2018-12-21T00:43:08.487+0800: 100.006: [SoftReference, 0 refs, 0.0008000 secs]2018-12-21T00:43:08.487+0800: 100.006: [WeakReference, 0 refs, 0.0004000 secs]2018-12-21T00:43:08.490+0800: 100.009: [JNI Weak Reference, 0.0000100 secs], 0.0080000 secs]\n   \
        [Parallel Time: 2.9 ms, GC Workers: 8]\n   \
        [Eden: 1020.0M(1020.0M)->0.0B(1020.0M) Survivors: 4096.0K->4096.0K Heap: 1500.0M(2048.0M)->484.0M(2048.0M)]\n \
        [Times: user=0.02 sys=0.00, real=0.01 secs]\n";
    let report = analyze_text(log);
    assert_eq!(report.unparsed_lines, 0);
    assert_eq!(report.pauses.count, 1);
    assert!(close(report.pauses.by_kind["Young"].total_ms, 8.0));
}

#[test]
fn shenandoah_backport_status_lines_are_understood() {
    // The JDK 8 Shenandoah backport prints its set-up and its heuristics' reasoning on unstamped
    // lines between cycles.
    let log = "CommandLine flags: -XX:MaxHeapSize=134217728 -XX:+PrintGCDetails -XX:+PrintGCTimeStamps -XX:+UseShenandoahGC\n\
        Regions: 64 x 2048K\n\
        Humongous object threshold: 2048K\n\
        Max TLAB size: 256K\n\
        GC threads: 2 parallel, 2 concurrent\n\
        Reference processing: parallel\n\
        Heuristics ergonomically sets -XX:+ExplicitGCInvokesConcurrent\n\
        Shenandoah heuristics: adaptive\n\
        Pacer for Idle. Initial: 2M, Alloc Tax Rate: 1.0x\n\
        Initialize Shenandoah heap: 32768K initial, 8192K min, 128M max\n\
        Trigger: Learning 1 of 5. Free (87M) is below initial threshold (89M)\n\
        Free: 87M (44 regions), Max regular: 2048K, Max humongous: 88064K, External frag: 2%, Internal frag: 0%\n\
        Evacuation Reserve: 8M (4 regions), Max regular: 2048K\n\
        0.234: [Pause Init Mark (process weakrefs), start]\n    \
        Using 2 of 2 workers for init marking\n\
        0.236: [Pause Init Mark (process weakrefs), 2.000 ms]\n\
        Cancelling GC: Allocation Failure\n";
    let report = analyze_text(log);
    assert_eq!(report.unparsed_lines, 0);
    assert_eq!(report.pauses.count, 1);
}

#[test]
fn jdk8_stamps_of_two_threads_entangled_on_one_line_still_open_the_collection() {
    // The VM thread and a concurrent G1 thread write their stamps at the same moment:
    // `D1: D2: U1U2: : [Full GC …` (a shape known to other analysers' corpora).
    let log = "2017-06-22T16:03:36.126+0530: 2017-06-22T16:03:36.126+0530: 79244.87279244.872: : [Full GC (Metadata GC Threshold) [GC concurrent-root-region-scan-start]\n\
        2017-06-22T16:03:36.126+0530: 79244.872: [GC concurrent-root-region-scan-end, 0.0002000 secs]\n\
        2017-06-22T16:03:36.126+0530: 79244.872: [GC concurrent-mark-start]\n \
        3200M->3100M(4096M), 1.4000000 secs]\n   \
        [Eden: 0.0B(202.0M)->0.0B(204.0M) Survivors: 2048.0K->0.0B Heap: 3200.0M(4096.0M)->3100.0M(4096.0M)], [Metaspace: 980000K->980000K(1851392K)]\n \
        [Times: user=1.91 sys=0.00, real=1.40 secs]\n";
    let report = analyze_text(log);
    assert_eq!(report.unparsed_lines, 0);
    assert_eq!(report.pauses.count, 1);
    assert!(close(report.pauses.by_kind["Full"].total_ms, 1400.0));
}

#[test]
fn jdk8_stamps_of_two_threads_interleaved_piece_by_piece_are_understood() {
    // Cassandra 4.0 on JDK 8 with G1, seen in this project's CI: the concurrent mark thread and the
    // VM thread (ending the initial-mark safepoint) wrote both dates before either separator; the
    // VM thread's message followed on a line of its own.
    let log = "2026-11-28T03:56:59.268+0000: 1.685: [GC pause (Metadata GC Threshold) (young) (initial-mark), 0.0040000 secs]\n   \
        [Eden: 20.0M(25.0M)->0.0B(24.0M) Survivors: 0.0B->1024.0K Heap: 20.0M(512.0M)->1400.0K(512.0M)]\n \
        [Times: user=0.01 sys=0.00, real=0.00 secs] \n\
        2026-11-28T03:56:59.271+00002026-11-28T03:56:59.271+0000: : 1.690: 1.690: [GC concurrent-root-region-scan-start]\n\
        Total time for which application threads were stopped: 0.0050000 seconds, Stopping threads took: 0.0000500 seconds\n\
        2026-11-28T03:56:59.273+0000: 1.692: [GC concurrent-root-region-scan-end, 0.0020000 secs]\n\
        2026-11-28T03:56:59.280+00002026-11-28T03:56:59.280+0000: 1.699: [GC concurrent-mark-start]\n\
        : 1.699: Total time for which application threads were stopped: 0.0001000 seconds, Stopping threads took: 0.0000200 seconds\n";
    let report = analyze_text(log);
    assert_eq!(report.unparsed_lines, 0);
    assert_eq!(report.pauses.count, 1);
    // Both safepoints counted, the one whose separator went to the line before too.
    let safepoints = report.safepoints.as_ref().expect("safepoints");
    assert_eq!(safepoints.count, 2, "{safepoints:?}");
}

#[test]
fn shenandoah_backport_phase_lines_are_stamped_when_the_phase_ends() {
    // With -XX:+PrintGCDetails the backport writes `[Pause Init Mark …, start]` when the pause begins
    // and the `[Pause Init Mark …, N ms]` line when it ends; in real logs the second stamp is the
    // first plus the duration (0.234 + 1.983 ms → 0.236), so the closing line is end-stamped.
    let log = "0.233: [Concurrent reset, start]\n    \
        Using 2 of 2 workers for concurrent reset\n\
        0.234: [Concurrent reset 32000K->32000K(34000K), 0.500 ms]\n\
        0.234: [Pause Init Mark (process weakrefs), start]\n    \
        Using 2 of 2 workers for init marking\n\
        0.236: [Pause Init Mark (process weakrefs), 2.000 ms]\n";
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("gc.log");
    fs::write(&path, log).unwrap();
    let mut timeline = Vec::new();
    let report = analyze(&[Input::Path(path)], Some(&mut timeline), &mut |_| {}).unwrap();
    assert_eq!(report.unparsed_lines, 0);
    assert_eq!(report.pauses.count, 1);
    let timeline = String::from_utf8(timeline).unwrap();
    assert!(
        timeline
            .lines()
            .any(|row| row == "0.234000,0.236000,pause:Init Mark"),
        "{timeline}"
    );
}

#[test]
fn heap_figures_come_from_the_line_that_closes_a_split_collection() {
    // ParNew with -XX:+PrintTenuringDistribution (Cassandra's JDK 8 default GC options): the heap
    // transition is on the closing `: young, N secs] A->B(C), N secs]` line.
    let log = "2015-01-01T10:00:00.000+0000: 1.000: [GC (Allocation Failure) 2015-01-01T10:00:00.000+0000: 1.000: [ParNew\n\
        Desired survivor size 1343488 bytes, new threshold 1 (max 6)\n\
        - age   1:    2680520 bytes,    2680520 total\n\
        : 8192K->1024K(9216K), 0.0090000 secs] 20480K->14336K(31744K), 0.0100000 secs] [Times: user=0.02 sys=0.00, real=0.01 secs]\n\
        2015-01-01T10:00:01.000+0000: 2.000: [GC (Allocation Failure) 2015-01-01T10:00:01.000+0000: 2.000: [ParNew\n\
        Desired survivor size 1343488 bytes, new threshold 1 (max 6)\n\
        : 9216K->1024K(9216K), 0.0090000 secs] 24576K->16384K(31744K), 0.0100000 secs] [Times: user=0.02 sys=0.00, real=0.01 secs]\n";
    let report = analyze_text(log);
    assert_eq!(report.pauses.count, 2);
    let heap = report.heap.expect("heap figures");
    assert!(close(heap.max_before_mb, 24.0), "{heap:?}");
    assert!(close(heap.max_after_mb, 16.0), "{heap:?}");
    // 24 MiB before the second minus 14 MiB after the first, over the 1 s between their starts.
    let rate = report.allocation_rate_mb_s.expect("allocation rate");
    assert!((rate - 10.0).abs() < 0.2, "{rate}");
}

#[test]
fn heap_figures_come_from_the_collections_totals_not_from_heap_dumps() {
    // jdk8/cms-heapatgc.log (PrintHeapAtGC): the whole-heap transitions of the collections are
    // 327680K->20480K, 348160K->48720K, 198000K->15000K (Full), all of capacity 4055040K; the
    // remark's scavenge (218000K->43000K) is inside the remark. The dumps' generation sizes
    // (368640K, 3686400K) must not be read as heap figures.
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/jdk8/cms-heapatgc.log");
    let report = analyze(&[Input::Path(path)], None, &mut |_| {}).unwrap();
    let heap = report.heap.expect("heap figures");
    assert!(close(heap.max_before_mb, 348160.0 / 1024.0), "{heap:?}");
    assert!(close(heap.max_after_mb, 48720.0 / 1024.0), "{heap:?}");
    assert!(
        close(heap.max_capacity_mb.unwrap(), 4055040.0 / 1024.0),
        "{heap:?}"
    );
}

#[test]
fn a_collection_that_cannot_be_put_back_together_is_reported() {
    // A young collection left open (its closing line lost when the log was cut and appended to),
    // then a closing line whose beginning is missing: neither can be counted as a pause, and the
    // report must say so rather than show clean figures.
    let log = "2020-03-01T10:00:08.000+0000: 8.000: [GC (Allocation Failure) 2020-03-01T10:00:08.000+0000: 8.000: [ParNew\n\
        Desired survivor size 20971520 bytes, new threshold 1 (max 1)\n\
        2020-03-01T10:00:09.000+0000: 9.000: [GC (Allocation Failure) 2020-03-01T10:00:09.000+0000: 9.000: [ParNew: 327680K->14648K(368640K), 0.0381234 secs] 327680K->14648K(4055040K), 0.0382345 secs] [Times: user=0.12 sys=0.00, real=0.04 secs]\n\
        : 327680K->14648K(368640K), 0.0290000 secs] 342328K->30761K(4055040K), 0.0291234 secs] [Times: user=0.10 sys=0.00, real=0.03 secs]\n";
    let report = analyze_text(log);
    assert_eq!(report.unparsed_lines, 0);
    assert_eq!(report.pauses.count, 1);
    assert!(close(report.pauses.total_ms, 38.2345));
    assert_eq!(report.unfinished_collections, 2);
    assert!(report
        .to_string()
        .contains("2 collection(s) could not be put back together"));
}
