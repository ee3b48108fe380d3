//! Cassandra 5.0.9 and 6.0-alpha2 on JDK 25 (through cqlbench's Security Manager shim) with G1,
//! generational ZGC and generational Shenandoah. One node per version (127.0.9.1 and 127.0.9.2,
//! 512M heap), restarted on its own data for each collector: each round starts it, writes and reads
//! at RF=1 (also the rows earlier rounds wrote), proves collector and mode with `jcmd VM.flags`,
//! checks the node's logs for reflective-access warnings (after start and again after the CQL
//! traffic), stops it and analyses its GC log.
//! Plus the JDK 25 refusals, which fail before anything is fetched or started.

#[path = "common/cluster_support.rs"]
mod support;

use std::path::Path;
use std::time::Instant;

use cqlbench_cluster::{ClusterState, NodeState};
use cqlbench_testkit::{Consistency, NONE};
use support::{cqlbench_with, jcmd, release_version, session, statement, ClusterGuard, Run};

struct Collector {
    gc: &'static str,
    /// What `jcmd VM.flags` must show.
    flags: &'static [&'static str],
    /// What it must not show (JDK 25 has no single-generation ZGC, so no -XX:+ZGenerational either).
    absent: &'static [&'static str],
    /// `effective_collector` in cluster.json.
    recorded: &'static str,
    /// `jvm.collector` and `jvm.generational` of `gc analyze`.
    analyzed: &'static str,
    generational: bool,
}

const COLLECTORS: [Collector; 3] = [
    Collector {
        gc: "g1",
        flags: &["-XX:+UseG1GC", "-XX:MaxGCPauseMillis=300"],
        absent: &["-XX:+UseZGC", "-XX:+UseShenandoahGC"],
        recorded: "UseG1GC",
        analyzed: "G1",
        generational: false,
    },
    Collector {
        gc: "zgc-generational",
        flags: &["-XX:+UseZGC"],
        absent: &["-XX:+UseG1GC", "ZGenerational"],
        recorded: "UseZGC+generational",
        analyzed: "ZGC",
        generational: true,
    },
    Collector {
        gc: "shenandoah-generational",
        flags: &["-XX:+UseShenandoahGC", "-XX:ShenandoahGCMode=generational"],
        absent: &["-XX:+UseG1GC", "-XX:+UnlockExperimentalVMOptions"],
        recorded: "UseShenandoahGC+generational",
        analyzed: "Shenandoah",
        generational: true,
    },
];

/// What JDK 25 and Cassandra print when the JPMS options are incomplete (none of these can match the
/// command line, which both logs repeat).
const ACCESS_PROBLEMS: [&str; 8] = [
    "illegal reflective access",
    "InaccessibleObjectException",
    "does not \"opens",
    "does not \"exports",
    "terminally deprecated method in sun.misc.Unsafe",
    "A restricted method",
    "Use --enable-native-access",
    "IllegalAccessError",
];

fn text(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The part of stdout.log written since the last start header (earlier rounds' starts come before it).
fn last_start(stdout_log: &Path) -> String {
    let all = text(stdout_log);
    let start = all.rfind("==== cqlbench starting node").unwrap_or(0);
    all[start..].to_string()
}

/// No reflective-access or JPMS complaints, from the JVM (stdout.log since the last start) or from
/// Cassandra (system.log, and debug.log where there is one), read afresh at each call.
fn assert_no_access_problems(node: &NodeState, when: &str) {
    let stdout = last_start(&node.stdout_log);
    let mut logs = vec![(node.system_log.clone(), text(&node.system_log))];
    let debug_log = node.system_log.with_file_name("debug.log");
    if debug_log.is_file() {
        logs.push((debug_log.clone(), text(&debug_log)));
    }
    for problem in ACCESS_PROBLEMS {
        assert!(
            !stdout.contains(problem),
            "{when}: {problem} in stdout.log: {stdout}"
        );
        for (path, log) in &logs {
            assert!(
                !log.contains(problem),
                "{when}: {problem} in {}",
                path.display()
            );
        }
    }
    assert!(!stdout.contains("Security Manager"), "{when}: {stdout}");
    // The JVM's only warning is jamm's notice that JDK 25 lacks the UseEmptySlotsInSupers flag.
    for line in stdout.lines().filter(|l| l.starts_with("WARNING")) {
        assert!(
            line.contains("Jamm") && line.contains("UseEmptySlotsInSupers"),
            "{when}: {line}"
        );
    }
}

fn gc_analyze(guard: &ClusterGuard, gc_log: &Path) -> serde_json::Value {
    let run = guard.run(&["gc", "analyze", gc_log.to_str().unwrap(), "--json"]);
    assert!(run.ok(), "gc analyze: {}", run.stderr);
    serde_json::from_str(&run.stdout).expect("gc analyze --json is JSON")
}

/// RF=1 writes of this round's rows, then reads of every round's rows so far.
fn write_and_read(state: &ClusterState, round: i32, version: &str) {
    let session = session(&state.cql_contact_points());
    let one = Consistency::One;
    for cql in [
        "CREATE KEYSPACE IF NOT EXISTS k WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
        "CREATE TABLE IF NOT EXISTS k.t (round int, i int, v text, PRIMARY KEY (round, i))",
    ] {
        session
            .query(statement(cql, Consistency::All), NONE)
            .unwrap_or_else(|e| panic!("{cql}: {e}"));
    }
    let insert = session
        .prepare(statement(
            "INSERT INTO k.t (round, i, v) VALUES (?, ?, ?)",
            one,
        ))
        .expect("prepare insert");
    for i in 0..200 {
        session
            .execute(&insert, &(round, i, format!("{round}-{i}")))
            .expect("insert");
    }
    let select = session
        .prepare(statement("SELECT i, v FROM k.t WHERE round = ?", one))
        .expect("prepare select");
    for earlier in 0..=round {
        let rows: Vec<(i32, String)> = session
            .execute(&select, &(earlier,))
            .expect("select")
            .into_rows_result()
            .expect("rows")
            .rows::<(i32, String)>()
            .expect("typed rows")
            .map(|r| r.expect("row"))
            .collect();
        assert_eq!(rows.len(), 200, "round {earlier} on round {round}");
        for (i, v) in rows {
            assert_eq!(v, format!("{earlier}-{i}"));
        }
    }
    assert_eq!(release_version(state), version);
    // User-defined functions stay disabled under the shim.
    let udf = session.query(
        "CREATE FUNCTION k.f (x int) RETURNS NULL ON NULL INPUT RETURNS int LANGUAGE java AS 'return x;'",
        NONE,
    );
    let refusal = udf.expect_err("a UDF was created without a Security Manager");
    assert!(
        refusal
            .to_string()
            .contains("User-defined functions are disabled"),
        "{refusal}"
    );
}

/// A private CQLBENCH_HOME whose Cassandra, JDK and shim caches are links to the shared ones, so that
/// its `default` cluster (the one `cqlbench run` uses without --host) is this test's alone.
fn private_home() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let shared = cqlbench_cluster::Home::from_env();
    for cache in ["cassandra", "jdks", "compat"] {
        let from = shared.root().join(cache);
        std::fs::create_dir_all(&from).unwrap();
        std::os::unix::fs::symlink(&from, dir.path().join(cache)).unwrap();
    }
    dir
}

/// `cqlbench run` without --host measures the local `default` cluster and keeps its state beside the
/// results: the shim and the live collector are part of the record.
fn results_record_the_cluster(guard: &ClusterGuard, recorded_collector: &str) {
    let out = tempfile::tempdir().unwrap();
    let results = out.path().join("results");
    let run = guard.run(&[
        "run",
        "KeyValue",
        "-d",
        "3s",
        "--rate",
        "300",
        "-o",
        results.to_str().unwrap(),
    ]);
    assert!(run.ok(), "run failed: {}", run.stderr);
    assert!(
        run.stderr.contains("using the local cluster"),
        "{}",
        run.stderr
    );
    let summary: serde_json::Value =
        serde_json::from_str(&text(&results.join("summary.json"))).unwrap();
    assert_eq!(summary["status"], "complete", "{summary:#}");
    let state: ClusterState = serde_json::from_str(&text(&results.join("cluster.json")))
        .expect("results/cluster.json is a cluster state");
    assert_eq!(state.jdk.major, 25);
    let shim = state
        .security_manager_shim
        .expect("results record the shim");
    assert!(
        shim.reason.contains("cannot install a Security Manager"),
        "{}",
        shim.reason
    );
    assert_eq!(
        state.nodes[0].effective_collector.as_deref(),
        Some(recorded_collector)
    );
}

fn one_version_on_jdk25(version: &str, name: &str, base_ip: &str, home: Option<&str>) {
    let guard = ClusterGuard::fresh_in(name, home);
    for (round, collector) in COLLECTORS.iter().enumerate() {
        let started = Instant::now();
        let up = guard.run(&[
            "cluster",
            "up",
            "--name",
            name,
            "--base-ip",
            base_ip,
            "--cassandra",
            version,
            "--jdk",
            "25",
            "--gc",
            collector.gc,
            "--heap",
            "512M",
        ]);
        assert!(
            up.ok(),
            "{version} {}: up failed: {}",
            collector.gc,
            up.stderr
        );
        let ready_s = started.elapsed().as_secs_f64();
        let state = guard.state();
        assert_eq!(state.jdk.major, 25);
        let node = state.nodes[0].clone();
        let pid = node.pid.expect("pid");

        // The shim is recorded, first on the classpath, and ran (its line is in system.log).
        let shim = state
            .security_manager_shim
            .clone()
            .expect("cluster.json records the shim");
        assert_eq!(
            shim.replaced_class,
            "org.apache.cassandra.security.ThreadAwareSecurityManager"
        );
        assert!(shim
            .classes_dir
            .join("org/apache/cassandra/security/ThreadAwareSecurityManager.class")
            .is_file());
        let cp = node.jvm_args.iter().position(|a| a == "-cp").expect("-cp");
        assert!(
            node.jvm_args[cp + 1].starts_with(&format!("{}:", shim.classes_dir.display())),
            "{}",
            node.jvm_args[cp + 1]
        );
        assert!(up.stdout.contains("compatibility shim"), "{}", up.stdout);
        let status = guard.run(&["cluster", "status", "--name", name, "--json"]);
        assert!(status.ok(), "{}", status.stderr);
        let status: serde_json::Value = serde_json::from_str(&status.stdout).unwrap();
        assert_eq!(
            status["security_manager_shim"]["replaced_class"],
            shim.replaced_class
        );
        let system_log = text(&node.system_log);
        assert!(
            system_log
                .contains("cqlbench compatibility shim: JDK 25 cannot install a Security Manager"),
            "no shim line in {}",
            node.system_log.display()
        );
        assert_no_access_problems(&node, "after start");

        write_and_read(&state, round as i32, version);

        // The live JVM proves collector and mode.
        let flags = jcmd(&state, pid, "VM.flags");
        for flag in collector.flags {
            assert!(flags.contains(flag), "{flag} missing from {flags}");
        }
        for flag in collector.absent {
            assert!(!flags.contains(flag), "{flag} in {flags}");
        }
        assert!(flags.contains("-XX:MaxHeapSize=536870912"), "{flags}");
        assert_eq!(
            node.effective_collector.as_deref(),
            Some(collector.recorded)
        );
        let vm = jcmd(&state, pid, "VM.version");
        assert!(vm.contains("JDK 25."), "{vm}");
        // One collection for certain, whatever the load did.
        jcmd(&state, pid, "GC.run");

        if name == "default" && round == COLLECTORS.len() - 1 {
            results_record_the_cluster(&guard, collector.recorded);
        }
        // Again after the CQL traffic (and the forced collection): the logs are read afresh.
        assert_no_access_problems(&node, "after CQL traffic");

        let down = guard.run(&["cluster", "down", "--name", name]);
        assert!(down.ok(), "{}", down.stderr);
        support::assert_node_ended(&node, support::Proc::of_node(&node), "down");

        let report = gc_analyze(&guard, &node.gc_log);
        assert_eq!(report["unparsed_lines"], 0, "{report:#}");
        assert_eq!(report["jvm"]["collector"], collector.analyzed, "{report:#}");
        assert_eq!(
            report["jvm"]["generational"], collector.generational,
            "{report:#}"
        );
        assert!(report["jvm"]["version"]
            .as_str()
            .unwrap()
            .starts_with("25."));
        assert!(
            report["pauses"]["count"].as_u64().unwrap() > 0,
            "{report:#}"
        );
        assert!(report["safepoints"]["count"].as_u64().unwrap() > 0);
        eprintln!(
            "{version} JDK 25 {}: ready in {ready_s:.1} s, round done in {:.1} s, {} GC pauses, {} log lines",
            collector.gc,
            started.elapsed().as_secs_f64(),
            report["pauses"]["count"],
            report["lines"]
        );
    }
    drop(guard);
}

#[test]
fn cassandra_50_on_jdk25_with_g1_zgc_and_shenandoah_generational() {
    // The `default` cluster of a private home, so that `cqlbench run` without --host measures it.
    let home = private_home();
    one_version_on_jdk25(
        "5.0.9",
        "default",
        "127.0.9.1",
        Some(home.path().to_str().unwrap()),
    );
}

#[test]
fn cassandra_60_on_jdk25_with_g1_zgc_and_shenandoah_generational() {
    one_version_on_jdk25("6.0-alpha2", "test-jdk25-60", "127.0.9.2", None);
}

/// A node that enables user-defined functions must not start without their sandbox.
#[test]
fn enabling_udfs_on_jdk25_stops_the_node_at_start_up() {
    let name = "test-jdk25-udf";
    let guard = ClusterGuard::fresh(name);
    let up = guard.run(&[
        "cluster",
        "up",
        "--name",
        name,
        "--base-ip",
        "127.0.9.3",
        "--jdk",
        "25",
        "--heap",
        "256M",
        "--jvm-opt=-Dcassandra.config.allow_system_properties=true",
        "--jvm-opt=-Dcassandra.settings.user_defined_functions_enabled=true",
    ]);
    up.assert_one_line_error(&["node 1", "died"]);
    let state = guard.state();
    let system_log = text(&state.nodes[0].system_log);
    assert!(
        system_log.contains("user_defined_functions_enabled is true, but JDK 25 cannot install"),
        "{system_log}"
    );
    assert!(!system_log.contains("Starting listening for CQL clients"));
    assert!(state
        .nodes
        .iter()
        .all(|n| n.pid.is_none() || support::Proc::of_node(n).exited()));
}

fn up_in(home: &Path, args: &[&str]) -> Run {
    let mut full = vec![
        "cluster",
        "up",
        "--name",
        "refusal25",
        "--base-ip",
        "127.0.9.200",
    ];
    full.extend_from_slice(args);
    cqlbench_with(&full, &[("CQLBENCH_HOME", home.to_str().unwrap())], None)
}

#[test]
fn impossible_jdk25_pairs_are_refused_in_one_line() {
    let home = tempfile::tempdir().expect("temp dir");
    let home = home.path();
    for version in ["4.0.19", "4.1.10"] {
        up_in(home, &["--cassandra", version, "--jdk", "25"]).assert_one_line_error(&[
            &format!("Cassandra {version} is not supported on JDK 25"),
            "Security Manager",
            "5.0 and 6.0",
            "JDK 11",
        ]);
    }
    for (version, jdk) in [("5.0.9", "24"), ("6.0-alpha2", "26")] {
        up_in(home, &["--cassandra", version, "--jdk", jdk]).assert_one_line_error(&[
            &format!("Cassandra {version} is not supported on JDK {jdk}"),
            "Security Manager",
            "verified on JDK 25 only",
            "--force-jdk",
        ]);
    }
    for jdk in ["17", "21"] {
        up_in(home, &["--gc", "shenandoah-generational", "--jdk", jdk]).assert_one_line_error(&[
            "shenandoah-generational",
            &format!("JDK {jdk}"),
            "JDK 25",
        ]);
    }
    up_in(home, &["--gc", "zgc", "--jdk", "25"]).assert_one_line_error(&[
        "zgc",
        "removed in JDK 24",
        "zgc-generational",
    ]);
    up_in(home, &["--gc", "cms", "--jdk", "25"]).assert_one_line_error(&["removed in JDK 14"]);
    up_in(
        home,
        &[
            "--gc",
            "shenandoah-generational",
            "--gc-profile",
            "shenandoah-tuned",
            "--jdk",
            "25",
        ],
    )
    .assert_one_line_error(&["shenandoah-tuned", "--gc shenandoah"]);
    up_in(
        home,
        &[
            "--gc",
            "shenandoah",
            "--gc-profile",
            "shenandoah-tuned",
            "--jdk",
            "25",
        ],
    )
    .assert_one_line_error(&["ShenandoahUnloadClassesFrequency"]);
    // Nothing was fetched, compiled or started for any of them.
    for dir in ["cassandra", "compat", "clusters/refusal25/cluster.json"] {
        assert!(!home.join(dir).exists(), "{dir} exists");
    }
}
