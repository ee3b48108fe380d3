//! Bad input to `cqlbench run`: one-line error, non-zero exit, no panic — before any cluster is touched.

mod run_support;

use run_support::{cqlbench, cqlbench_command, one_line_error};

fn unix_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

fn assert_one_line_error(args: &[&str], expected: &str) {
    one_line_error(&mut cqlbench_command(args), expected);
}

#[test]
fn unknown_workload_names_the_known_ones() {
    assert_one_line_error(
        &["run", "NoSuchWorkload", "--host", "127.0.4.250"],
        "unknown workload",
    );
    assert_one_line_error(
        &["run", "NoSuchWorkload", "--host", "127.0.4.250"],
        "BasicTimeSeries",
    );
}

#[test]
fn negative_rate_is_rejected() {
    assert_one_line_error(
        &["run", "KeyValue", "--rate", "-5", "--host", "127.0.4.250"],
        "rate",
    );
    assert_one_line_error(
        &["run", "KeyValue", "--rate", "0", "--host", "127.0.4.250"],
        "rate",
    );
}

#[test]
fn read_ratio_above_one_is_rejected() {
    assert_one_line_error(
        &["run", "KeyValue", "-r", "1.5", "--host", "127.0.4.250"],
        "read ratio",
    );
    assert_one_line_error(
        &["run", "KeyValue", "-r", "-0.1", "--host", "127.0.4.250"],
        "read ratio",
    );
}

#[test]
fn malformed_compaction_map_is_rejected() {
    for bad in [
        "{'class': 'SizeTieredCompactionStrategy', 'min_threshold': '2'",
        "{'min_threshold': '2'}",
        "{'class': 'SizeTieredCompactionStrategy'} DROP TABLE x",
    ] {
        assert_one_line_error(
            &[
                "run",
                "BasicTimeSeries",
                "--compaction",
                bad,
                "--host",
                "127.0.4.250",
            ],
            "compaction",
        );
    }
}

#[test]
fn other_malformed_values_are_rejected() {
    assert_one_line_error(
        &["run", "KeyValue", "-d", "30x", "--host", "127.0.4.250"],
        "duration",
    );
    assert_one_line_error(
        &["run", "KeyValue", "--tick", "fast", "--host", "127.0.4.250"],
        "duration",
    );
    assert_one_line_error(
        &[
            "run",
            "KeyValue",
            "--tick",
            "5s",
            "--rate",
            "100",
            "--host",
            "127.0.4.250",
        ],
        "--tick",
    );
    assert_one_line_error(
        &["run", "KeyValue", "-p", "lots", "--host", "127.0.4.250"],
        "count",
    );
    assert_one_line_error(
        &["run", "KeyValue", "--pg", "zipf", "--host", "127.0.4.250"],
        "partition generator",
    );
    assert_one_line_error(
        &["run", "KeyValue", "--cl", "MOST", "--host", "127.0.4.250"],
        "consistency",
    );
    assert_one_line_error(
        &[
            "run",
            "Tabular",
            "--workload.nope=3",
            "--host",
            "127.0.4.250",
        ],
        "nope",
    );
    assert_one_line_error(
        &[
            "run",
            "KeyValue",
            "--workload.value_size=3",
            "--bogus",
            "--host",
            "127.0.4.250",
        ],
        "--bogus",
    );
}

#[test]
fn unreachable_host_is_one_line() {
    // Nothing listens on this loopback address (the load tests' block), so the connection is refused.
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().join("out");
    assert_one_line_error(
        &[
            "run",
            "KeyValue",
            "-d",
            "2s",
            "--rate",
            "100",
            "--host",
            "127.0.4.250",
            "-o",
            out_dir.to_str().unwrap(),
        ],
        "cannot connect to 127.0.4.250:9042",
    );
}

#[test]
fn seed_command_lines_parse() {
    // The seed command lines must be accepted as written; pointing them at a closed port proves the
    // arguments were all accepted (the failure is the connection, not the parsing).
    for args in [
        vec!["run", "BasicTimeSeries", "-d", "30m", "-p", "100M", "-c", "50", "--pg", "sequence", "-t", "8",
             "-r", "0.2", "--rate", "25000", "--populate", "200000"],
        vec!["run", "BasicTimeSeries", "-d", "30m", "-p", "100M", "-c", "50", "--pg", "sequence", "-t", "8",
             "-r", "0.2", "--rate", "25000", "--populate", "200000", "--compaction",
             "{'class': 'SizeTieredCompactionStrategy', 'min_threshold': '2'}"],
        vec!["run", "BasicTimeSeries", "-d", "30m", "-p", "100M", "-c", "50", "--pg", "sequence", "-t", "8",
             "-r", "0.2", "--rate", "25000", "--populate", "200000", "--compaction",
             "{'class': 'SizeTieredCompactionStrategy', 'min_threshold' : '2'} AND speculative_retry = 'NONE'"],
    ] {
        let mut args = args;
        args.extend(["--host", "127.0.4.250", "--port", "1"]);
        assert_one_line_error(&args, "cannot connect");
    }
}

#[test]
fn workloads_lists_every_workload_in_one_line_and_shows_one_by_name() {
    let out = cqlbench(&["workloads"]);
    assert!(out.status.success());
    let list = String::from_utf8_lossy(&out.stdout);
    for name in [
        "BasicTimeSeries",
        "KeyValue",
        "Tabular",
        "AllowFiltering",
        "CountersWide",
        "LWT",
        "Locking",
        "Maps",
        "MaterializedViews",
        "RandomPartitionAccess",
        "RangeScan",
        "SAI",
        "Sets",
        "UdtTimeSeries",
    ] {
        let lines: Vec<&str> = list
            .lines()
            .filter(|l| l.split_whitespace().next() == Some(name))
            .collect();
        assert_eq!(
            lines.len(),
            1,
            "`cqlbench workloads` has one line for {name}:\n{list}"
        );
    }
    for (name, why) in [
        ("DSESearch", "DataStax Enterprise"),
        ("CreateDrop", "creates and drops tables"),
        ("TxnCounter", "Accord"),
    ] {
        assert!(
            list.lines()
                .any(|l| l.starts_with(name) && l.contains("not shipped") && l.contains(why)),
            "{name} is listed with its reason:\n{list}"
        );
    }
    let lwt = cqlbench(&["workloads", "lwt"]);
    assert!(lwt.status.success());
    let file = String::from_utf8_lossy(&lwt.stdout);
    assert!(
        file.contains("IF NOT EXISTS") && file.contains("operations:"),
        "{file}"
    );
    assert_one_line_error(&["workloads", "DSESearch"], "DSESearch is not shipped");

    let out = cqlbench(&["workloads", "BasicTimeSeries"]);
    assert!(out.status.success());
    let mut text = String::from_utf8_lossy(&out.stdout).to_string();
    for name in ["KeyValue", "Tabular"] {
        text.push_str(&String::from_utf8_lossy(
            &cqlbench(&["workloads", name]).stdout,
        ));
    }
    for expected in [
        "BasicTimeSeries",
        "CREATE TABLE sensor_data (sensor_id text, timestamp timeuuid, data text, PRIMARY KEY (sensor_id, timestamp)) WITH CLUSTERING ORDER BY (timestamp DESC)",
        "SELECT * FROM sensor_data WHERE sensor_id = ? LIMIT 500",
        "KeyValue",
        "(key text PRIMARY KEY, value text)",
        "Tabular",
        "partsize",
        "5000",
        "LOCAL_QUORUM",
    ] {
        assert!(text.contains(expected), "`cqlbench workloads` lacks '{expected}':\n{text}");
    }
}

#[test]
fn missing_credentials_and_ca_files_are_one_line_errors() {
    assert_one_line_error(
        &[
            "run",
            "KeyValue",
            "--credentials-file",
            "/nonexistent/creds",
            "--host",
            "127.0.4.250",
        ],
        "credentials file",
    );
    assert_one_line_error(
        &[
            "run",
            "KeyValue",
            "--tls",
            "/nonexistent/ca.pem",
            "--host",
            "127.0.4.250",
        ],
        "CA file",
    );
    let dir = tempfile::tempdir().unwrap();
    let creds = dir.path().join("creds");
    std::fs::write(&creds, "username=cassandra\n").unwrap();
    assert_one_line_error(
        &[
            "run",
            "KeyValue",
            "--credentials-file",
            creds.to_str().unwrap(),
            "--host",
            "127.0.4.250",
        ],
        "password",
    );
    // Half of the environment pair is a mistake worth stopping for.
    one_line_error(
        cqlbench_command(&["run", "KeyValue", "--host", "127.0.4.250"])
            .env("CQLBENCH_USERNAME", "cassandra")
            .env_remove("CQLBENCH_PASSWORD"),
        "CQLBENCH_PASSWORD",
    );
}

#[test]
fn half_set_credentials_are_rejected() {
    for (set, missing) in [
        ("CQLBENCH_USERNAME", "CQLBENCH_PASSWORD"),
        ("CQLBENCH_PASSWORD", "CQLBENCH_USERNAME"),
    ] {
        let mut cmd = cqlbench_command(&["run", "KeyValue", "--host", "127.0.4.250", "-d", "1s"]);
        cmd.env(set, "cassandra").env_remove(missing);
        one_line_error(&mut cmd, "set both CQLBENCH_USERNAME and CQLBENCH_PASSWORD");
    }
}

/// A run that fails before it starts still leaves its brief (`--brief-to`): a Kubernetes Job's pod must
/// say why in its termination message, not leave it empty.
#[test]
fn a_failed_run_writes_a_failed_brief() {
    let dir = tempfile::tempdir().unwrap();
    let brief = dir.path().join("brief.json");
    let brief_arg = brief.display().to_string();
    // A start ahead: the rate must be what is refused, whatever the day the test runs.
    let start_at = format!("{}", unix_now() + 600);
    one_line_error(
        &mut cqlbench_command(&[
            "run",
            "KeyValue",
            "--rate",
            "-5",
            "--clients",
            "4",
            "--client-id",
            "2",
            "--start-at",
            &start_at,
            "--host",
            "127.0.4.250",
            "--brief-to",
            &brief_arg,
        ]),
        "rate",
    );
    let text = std::fs::read_to_string(&brief).expect("the brief is written");
    assert_eq!(text.lines().count(), 1, "{text}");
    let brief: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(brief["status"], "failed", "{text}");
    assert!(
        brief["failure"].as_str().unwrap().contains("rate"),
        "{text}"
    );
    assert_eq!(brief["client_id"], 2, "{text}");
    assert_eq!(brief["clients"], 4, "{text}");
    assert_eq!(brief["successful_ops"], 0, "{text}");
}

/// `--start-at @FILE` names a file the common start will be written to: an empty name, a directory
/// and a file in a directory that does not exist are refused before anything connects.
#[test]
fn a_start_file_must_be_a_file_in_an_existing_directory() {
    let dir = tempfile::tempdir().unwrap();
    let dir_arg = format!("@{}", dir.path().display());
    let missing = format!("@{}/no-such-dir/start", dir.path().display());
    for (start, expected) in [
        ("@", "expected @ and the file"),
        (dir_arg.as_str(), "is a directory"),
        (missing.as_str(), "no-such-dir does not exist"),
    ] {
        assert_one_line_error(
            &[
                "run",
                "KeyValue",
                "--rate",
                "100",
                "--clients",
                "2",
                "--start-at",
                start,
                "--host",
                "127.0.4.250",
            ],
            expected,
        );
    }
}
