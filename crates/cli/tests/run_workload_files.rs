//! `cqlbench run FILE.yaml` with cqlbench's own workload format, against a real node: the rows the
//! generators promise are the rows a real driver reads back, the mix holds its weights, and every
//! refusal is one `FILE:LINE:` line that leaves no schema of its own behind.

mod run_support;

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use cqlbench_testkit::value::{Counter, CqlTimestamp};
use cqlbench_testkit::{timed_statement, DeserializeRow, Driver, PagingState, NONE};

use run_support::{cqlbench_command, cqlbench_ok, one_line_error, read_summary, TestNode};

const NODE_ADDRESS: &str = "127.0.19.1";
const KEYS: i64 = 3000;
const VALUE_SIZE: usize = 40;

/// A fixture written from the format's documentation (README "Workload files"): most CQL types,
/// a counter, a lightweight transaction, a populate phase and five weighted operations.
const SENSORS: &str = r#"
description: sensors with typed readings, a counter per sensor
params:
  sensors: 100000
  value_size: 10
schema:
  - CREATE TABLE IF NOT EXISTS sensor (id bigint PRIMARY KEY, name text, tags set<text>,
      scores map<int, text>, samples list<int>, seen timestamp, uid uuid, emb vector<float, 4>)
  - CREATE TABLE IF NOT EXISTS hits (id bigint PRIMARY KEY, n counter)
  - CREATE TABLE IF NOT EXISTS locks (id bigint PRIMARY KEY, owner text)
values:
  id: uniform(1..{sensors})
  name:
    population: uniform(1..1M)
    size: fixed({value_size})
  tags:
    population: uniform(1..100)
    size: uniform(1..3)
  scores:
    population: uniform(1..100)
    size: fixed(2)
  samples: uniform(1..100)
  seen: now
  uid: uniform(1..1M)
  emb: uniform(1..1000)
  n: fixed(1)
  owner: uniform(1..1000)
populate:
  operation: insert
  rows: "{sensors}"
  values:
    id: seq(1..{sensors})
operations:
  insert:
    cql: INSERT INTO sensor (id, name, tags, scores, samples, seen, uid, emb) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
    weight: 2
    values:
      id: uniform(1..{sensors})
  read:
    cql: SELECT * FROM sensor WHERE id = ?
    weight: 5
    consistency: ONE
    values:
      id: hotset(1..{sensors},0.1,0.9)
  slice:
    cql: SELECT id, name FROM sensor WHERE token(id) > token(:id) LIMIT 10
    weight: 1
    values:
      id: uniform(1..{sensors})
  bump:
    cql: UPDATE hits SET n = n + ? WHERE id = ?
    weight: 2
    values:
      id: uniform(1..{sensors})
  claim:
    cql: INSERT INTO locks (id, owner) VALUES (?, ?) IF NOT EXISTS
    weight: 1
    values:
      id: uniform(1..200)
"#;

/// A cassandra-stress user profile written from its documentation (docs/peer-formats): a wide
/// partition of 5 rows per key, 50 keys, sized text, and two queries.
const PROFILE: &str = r#"
specname: timeline
keyspace: stressks
keyspace_definition: |
  CREATE KEYSPACE stressks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1};
table: timeline
table_definition: |
  CREATE TABLE timeline (user text, at bigint, body text, likes set<int>,
    PRIMARY KEY (user, at)) WITH CLUSTERING ORDER BY (at DESC)
columnspec:
  - name: user
    size: fixed(12)
    population: uniform(1..50)
  - name: at
    cluster: fixed(5)
  - name: body
    size: uniform(20..40)
  - name: likes
    size: fixed(2)
insert:
  partitions: fixed(1)
  select: fixed(1)/5
  batchtype: UNLOGGED
queries:
  latest:
    cql: select * from timeline where user = ? LIMIT 5
    fields: samerow
  exact:
    cql: select body from timeline where user = ? and at = ?
token_range_queries:
  scan:
    columns: body
    page_size: 10
"#;

/// A nosqlbench workload written from nosqlbench's documentation: templates in all three
/// spellings, a scenario with schema, truncate, rampup and main steps, block params, an inline
/// binding, and binding functions whose values can be checked row by row.
const NOSQLBENCH: &str = r#"
description: readings by device, written by rampup, read and written by main
scenarios:
  default:
    schema: run driver=cql tags==block:schema threads==1 cycles==UNDEF
    truncate: run driver=cql tags==block:truncate threads==1 cycles==UNDEF
    rampup: run driver=cql tags==block:rampup cycles===TEMPLATE(rampup-cycles,100) threads=auto
    main: run driver=cql tags==block:"main.*" cycles===TEMPLATE(main-cycles,100) threads=auto
  other:
    main: run driver=cql tags==block:nowhere cycles=10
bindings:
  device: Div(<<devsize:10>>); ToString() -> String
  seq: Mod(${devsize:10}) -> int
  reading: Hash(); Uniform(0,1000)->int
  note: HashedFileExtractToString('data/no_such_file.txt',20,40)
  uid: ToHashedUUID() -> java.util.UUID
  at: StartingEpochMillis('2024-01-01 00:00:00'); ToJavaInstant()
  level: Normal(50.0,5.0) -> double
  pick_device: Uniform(0,TEMPLATE(devices,100))->int; ToString() -> String
  limit: Uniform(1,5)->int
blocks:
  schema:
    params:
      prepared: false
    ops:
      create_keyspace: |
        create keyspace if not exists TEMPLATE(keyspace,nbks)
        WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 'TEMPLATE(rf,1)'};
      create_table: |
        create table if not exists TEMPLATE(keyspace,nbks).readings (
          device text, seq int, reading int, note text, uid uuid, at timestamp, level double,
          PRIMARY KEY (device, seq));
  truncate:
    ops:
      truncate_table: truncate TEMPLATE(keyspace,nbks).readings
  rampup:
    params:
      cl: TEMPLATE(write_cl,LOCAL_QUORUM)
    ops:
      rampup_insert: |
        insert into TEMPLATE(keyspace,nbks).readings (device, seq, reading, note, uid, at, level)
        values ({device}, {seq}, {reading}, {note}, {uid}, {at}, {level});
  main_read:
    params:
      ratio: TEMPLATE(read_ratio,1)
      cl: TEMPLATE(read_cl,LOCAL_QUORUM)
    ops:
      main_select: select * from TEMPLATE(keyspace,nbks).readings where device={pick_device} limit {limit}
  main_write:
    params:
      ratio: TEMPLATE(write_ratio,3)
    ops:
      - main_insert: "insert into TEMPLATE(keyspace,nbks).readings (device, seq, reading) values ({pick_device}, {{Mod(7)}}, {reading})"
        idempotent: true
        instrument: true
"#;

/// Rows of `cql`, each deserialized as `T`, through the driver (not cqlbench's own code path).
fn rows<T>(host: &str, cql: &str) -> Vec<T>
where
    T: for<'frame, 'metadata> DeserializeRow<'frame, 'metadata>,
{
    let session = Driver::connect_to(host).unwrap_or_else(|e| panic!("connect to {host}: {e}"));
    let mut statement = timed_statement(cql, Duration::from_secs(60));
    statement.set_page_size(5000);
    let mut out = Vec::new();
    let mut state = PagingState::start();
    loop {
        let (result, next) = session
            .query_page(statement.clone(), NONE, state)
            .unwrap_or_else(|e| panic!("{cql}: {e}"));
        let page = result.into_rows_result().unwrap();
        out.extend(page.rows::<T>().unwrap().map(|r| r.unwrap()));
        match next.into_paging_control_flow() {
            std::ops::ControlFlow::Break(()) => break,
            std::ops::ControlFlow::Continue(s) => state = s,
        }
    }
    out
}

/// The tables of `keyspace` as the node has them now (none when it does not exist).
fn tables(host: &str, keyspace: &str) -> Vec<String> {
    rows::<(String,)>(
        host,
        &format!("SELECT table_name FROM system_schema.tables WHERE keyspace_name = '{keyspace}'"),
    )
    .into_iter()
    .map(|(t,)| t)
    .collect()
}

/// Failed operations of one `ops.NAME` entry of summary.json, of every kind.
fn failures(op: &serde_json::Value) -> u64 {
    let kinds = op["errors"].as_object().expect("errors by kind");
    kinds.values().map(|n| n.as_u64().expect("a count")).sum()
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path.to_str().unwrap().to_string()
}

#[test]
fn a_workload_file_runs_what_it_promises_and_refuses_what_it_cannot() {
    let dir = tempfile::tempdir().unwrap();
    let node = TestNode::start("workload-files", NODE_ADDRESS);
    let host = node.host.as_str();
    let file = write(dir.path(), "sensors.yaml", SENSORS);
    let out = dir.path().join("run");
    let started_ms = (cqlbench_units::time::unix_now() * 1000.0) as i64;
    let keys = KEYS.to_string();
    let value_size = VALUE_SIZE.to_string();
    let table = cqlbench_ok(&[
        "run",
        &file,
        "--host",
        host,
        "--keyspace",
        "wl",
        "--drop",
        &format!("--workload.sensors={keys}"),
        &format!("--workload.value_size={value_size}"),
        "--rate",
        "2000",
        "-n",
        "6000",
        "-o",
        out.to_str().unwrap(),
    ]);
    let ended_ms = (cqlbench_units::time::unix_now() * 1000.0) as i64 + 1;

    // One entry per operation name, in summary.json, the table and the interval logs.
    let summary = read_summary(&out);
    assert_eq!(summary["workload"], "sensors");
    assert_eq!(summary["populate"]["count"], KEYS, "{summary}");
    let ops = summary["ops"].as_object().unwrap();
    let count = |name: &str| ops[name]["count"].as_u64().unwrap() as f64;
    let total: f64 = ["insert", "read", "slice", "bump", "claim"]
        .iter()
        .map(|n| count(n))
        .sum();
    assert_eq!(total, 6000.0, "{summary}");
    for (name, weight) in [
        ("insert", 2.0 / 11.0),
        ("read", 5.0 / 11.0),
        ("slice", 1.0 / 11.0),
        ("bump", 2.0 / 11.0),
        ("claim", 1.0 / 11.0),
    ] {
        let share = count(name) / total;
        assert!(
            (share - weight).abs() < 0.03,
            "{name}: {share} of the mix, weight {weight}"
        );
        assert_eq!(ops[name]["errors"]["timeout"], 0);
        assert!(table.contains(&format!("\n{name} ")), "{table}");
        assert!(out.join(format!("{name}.hlog")).exists());
    }

    // Populate wrote every key once (seq), the inserts only keys inside the same key space.
    let sensors = rows::<(
        i64,
        String,
        Vec<String>,
        BTreeMap<i32, String>,
        Vec<i32>,
        CqlTimestamp,
        Vec<f32>,
    )>(
        host,
        "SELECT id, name, tags, scores, samples, seen, emb FROM wl.sensor",
    );
    assert_eq!(sensors.len() as i64, KEYS);
    let mut ids: Vec<i64> = sensors.iter().map(|r| r.0).collect();
    ids.sort_unstable();
    assert_eq!(ids, (1..=KEYS).collect::<Vec<_>>());
    for (id, name, tags, scores, samples, seen, emb) in &sensors {
        assert_eq!(name.len(), VALUE_SIZE, "{id}: {name}");
        assert!((1..=3).contains(&tags.len()), "{id}: {tags:?}");
        assert_eq!(scores.len(), 2, "{id}: {scores:?}");
        assert_eq!(
            samples.len(),
            4,
            "{id}: collections hold 4 elements without a size"
        );
        assert!(
            (started_ms..=ended_ms).contains(&seen.0),
            "{id}: seen {} outside the run",
            seen.0
        );
        assert_eq!(emb.len(), 4);
    }

    // Each successful bump added 1 (fixed(1)) to a counter: the counters sum to the bumps.
    let counters = rows::<(Counter,)>(host, "SELECT n FROM wl.hits");
    let sum: i64 = counters.iter().map(|(n,)| n.0).sum();
    assert_eq!(sum as f64, count("bump"));

    // A claim whose IF NOT EXISTS did not hold is a success counted in not_applied: the applied
    // ones are the rows of the table.
    let claimed = rows::<(i64,)>(host, "SELECT id FROM wl.locks").len() as f64;
    let not_applied = ops["claim"]["not_applied"].as_u64().unwrap() as f64;
    assert!(not_applied > 0.0, "{summary}");
    assert_eq!(count("claim") - not_applied, claimed, "{summary}");
    assert!(table.contains("claim: "), "{table}");

    // Refusals after connecting: one line, FILE:LINE, the server's words, no schema left behind.
    let unbound = write(
        dir.path(),
        "unbound.yaml",
        &SENSORS.replace("  n: fixed(1)\n", ""),
    );
    let line = one_line_error(
        &mut cqlbench_command(&[
            "run",
            &unbound,
            "--host",
            host,
            "--keyspace",
            "wl_unbound",
            "-n",
            "10",
        ]),
        "no value for bind marker 'n'",
    );
    assert!(
        line.contains(&format!("{unbound}:50: operation 'bump'")),
        "{line}"
    );
    assert!(
        tables(host, "wl_unbound").is_empty(),
        "a new keyspace is dropped again"
    );

    let refused = write(
        dir.path(),
        "refused.yaml",
        &SENSORS
            .replace(
                "CREATE TABLE IF NOT EXISTS hits",
                "CREATE TABLE IF NOT EXISTS hits2",
            )
            .replace(
                "SELECT * FROM sensor WHERE id = ?",
                "SELECT nope FROM sensor WHERE id = ?",
            ),
    );
    let line = one_line_error(
        &mut cqlbench_command(&[
            "run",
            &refused,
            "--host",
            host,
            "--keyspace",
            "wl",
            "-n",
            "10",
        ]),
        "Undefined column name nope",
    );
    assert!(
        line.contains(&format!("{refused}:40: operation 'read'")),
        "{line}"
    );
    let mut left = tables(host, "wl");
    left.sort();
    assert_eq!(
        left,
        ["hits", "locks", "sensor"],
        "the table the refused file created is dropped"
    );

    a_cassandra_stress_profile_runs_unchanged(host, dir.path());
    a_nosqlbench_workload_runs_its_scenario(host, dir.path());
    easy_cass_stress_workloads_run_by_name(host, dir.path());
    batches_send_their_rows_together(host, dir.path());
    paged_reads_read_the_pages_they_ask_for(host, dir.path());
    ttl_timestamps_range_reads_and_range_deletes(host, dir.path());
    two_clients_share_a_workload_file(host, dir.path());
}

/// Two load clients (`--clients 2`) of one workload file: each populates its half of the rows,
/// and their merged result holds the whole schedule under the file's operation names.
fn two_clients_share_a_workload_file(host: &str, dir: &Path) {
    let file = write(
        dir,
        "shared.yaml",
        r#"
schema:
  - CREATE TABLE IF NOT EXISTS shared (k bigint PRIMARY KEY, v text)
values:
  k: uniform(1..1000)
  v: uniform(1..1000)
populate:
  operation: put
  rows: 1000
  values:
    k: seq(1..1000)
operations:
  put:
    cql: INSERT INTO shared (k, v) VALUES (?, ?)
  get:
    cql: SELECT * FROM shared WHERE k = ?
"#,
    );
    // The common start is written once both clients are ready (populated), as an orchestrator
    // does: no guess of how long connecting and populating take.
    let start_file = dir.join("shared-start");
    let start_arg = format!("@{}", start_file.display());
    let mut clients = Vec::new();
    for id in ["0", "1"] {
        let out = dir.join(format!("shared-{id}"));
        clients.push(run_support::spawn_cqlbench(&[
            "run",
            &file,
            "--host",
            host,
            "--keyspace",
            "shared",
            "--clients",
            "2",
            "--client-id",
            id,
            "--start-at",
            &start_arg,
            "-n",
            "2000",
            "--rate",
            "1000",
            "-o",
            out.to_str().unwrap(),
        ]));
    }
    let mut stderr_seen = Vec::new();
    for client in &mut clients {
        let stderr = client.stderr.take().unwrap();
        let mut lines = std::io::BufRead::lines(std::io::BufReader::new(stderr));
        let mut seen = String::new();
        for line in lines.by_ref() {
            let line = line.unwrap();
            seen.push_str(&line);
            seen.push('\n');
            if line.starts_with("ready:") {
                break;
            }
        }
        assert!(seen.contains("ready:"), "a client never got ready:\n{seen}");
        // Keep reading the rest in the background so that the client never blocks on a full pipe.
        stderr_seen.push(std::thread::spawn(move || {
            lines.map_while(Result::ok).collect::<Vec<_>>().join("\n")
        }));
    }
    let start = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs_f64()
        + 1.0;
    // Written whole, then moved into place: a client never reads half a line.
    let partial = dir.join("shared-start.partial");
    std::fs::write(&partial, format!("{start:.3}\n")).unwrap();
    std::fs::rename(&partial, &start_file).unwrap();
    for (client, rest) in clients.into_iter().zip(stderr_seen) {
        let out = client.wait_with_output().unwrap();
        let rest = rest.join().unwrap();
        assert!(out.status.success(), "{rest}");
    }
    let merged = dir.join("shared-merged");
    cqlbench_ok(&[
        "report",
        "merge",
        "--out",
        merged.to_str().unwrap(),
        dir.join("shared-0").to_str().unwrap(),
        dir.join("shared-1").to_str().unwrap(),
    ]);
    let summary = read_summary(&merged);
    let count = |op: &str| summary["ops"][op]["count"].as_u64().unwrap_or(0);
    assert_eq!(count("put") + count("get"), 2000, "{summary}");
    for id in ["0", "1"] {
        let own = read_summary(&dir.join(format!("shared-{id}")));
        assert_eq!(
            own["populate"]["count"], 500,
            "client {id} populates half: {own}"
        );
    }
    let keys: Vec<(i64,)> = rows(host, "SELECT k FROM shared.shared");
    assert_eq!(keys.len(), 1000, "together the clients populated every key");
}

/// A native batch writes `rows` statements per operation, each with values of its own (populate's
/// `seq` walks every key once through the batches); counter batches add up; a cassandra-stress
/// insert to several partitions is one batch of a row per partition.
fn batches_send_their_rows_together(host: &str, dir: &Path) {
    let file = write(
        dir,
        "batched.yaml",
        r#"
schema:
  - CREATE TABLE IF NOT EXISTS batched (k bigint PRIMARY KEY, v text)
  - CREATE TABLE IF NOT EXISTS batched_hits (k bigint PRIMARY KEY, n counter)
values:
  k: uniform(1..1000)
  v: uniform(1..1000)
populate:
  operation: load
  rows: 100
  values:
    k: seq(0..999)
operations:
  load:
    cql: INSERT INTO batched (k, v) VALUES (?, ?)
    weight: 0
    batch:
      type: unlogged
      rows: fixed(10)
  logged:
    cql: INSERT INTO batched (k, v) VALUES (?, ?)
    batch:
      type: logged
      rows: uniform(2..5)
  bump:
    cql: UPDATE batched_hits SET n = n + 1 WHERE k = ?
    batch:
      type: counter
      rows: fixed(3)
"#,
    );
    let out = dir.join("batched");
    cqlbench_ok(&[
        "run",
        &file,
        "--host",
        host,
        "--keyspace",
        "batches",
        "--drop",
        "-n",
        "200",
        "--rate",
        "1000",
        "-o",
        out.to_str().unwrap(),
    ]);
    let keys: Vec<(i64,)> = rows(host, "SELECT k FROM batches.batched");
    let mut keys: Vec<i64> = keys.into_iter().map(|(k,)| k).collect();
    keys.sort_unstable();
    keys.dedup();
    assert_eq!(keys.len(), 1000, "100 batches of 10 wrote every key once");
    assert_eq!((keys[0], keys[999]), (0, 999));
    let summary = read_summary(&out);
    let bumps = summary["ops"]["bump"]["count"].as_u64().unwrap();
    let hits = rows::<(Counter,)>(host, "SELECT n FROM batches.batched_hits");
    let total: i64 = hits.iter().map(|(n,)| n.0).sum();
    assert_eq!(
        total as u64,
        3 * bumps,
        "each counter batch adds 3: {summary}"
    );

    // A batch over the server's size limit (100 rows of 1000 characters, past 50 KiB) fails every
    // time, and the result says why in the server's words.
    let big = write(
        dir,
        "too_big.yaml",
        r#"
schema:
  - CREATE TABLE IF NOT EXISTS big (k bigint PRIMARY KEY, v text)
values:
  k: uniform(1..1M)
  v:
    population: uniform(1..1M)
    size: fixed(1000)
operations:
  load:
    cql: INSERT INTO big (k, v) VALUES (?, ?)
    batch:
      type: logged
      rows: fixed(100)
"#,
    );
    let out = dir.join("too_big");
    let printed = cqlbench_ok(&[
        "run",
        &big,
        "--host",
        host,
        "--keyspace",
        "batches",
        "-n",
        "5",
        "--rate",
        "50",
        "-o",
        out.to_str().unwrap(),
    ]);
    let summary = read_summary(&out);
    let load = &summary["ops"]["load"];
    assert_eq!(load["errors"]["other"], 5, "{summary}");
    let first = load["first_error"].as_str().unwrap_or_default();
    assert!(first.contains("Batch too large"), "{summary}");
    assert!(
        printed.contains("load: the server's first refusal: Batch too large (the node's batch_size_fail_threshold"),
        "{printed}"
    );

    let profile = write(
        dir,
        "timeline_batched.yaml",
        &PROFILE
            .replace("keyspace: stressks", "keyspace: stressbatch")
            .replace("CREATE KEYSPACE stressks", "CREATE KEYSPACE stressbatch")
            .replace("partitions: fixed(1)", "partitions: fixed(4)"),
    );
    cqlbench_ok(&[
        "run",
        &profile,
        "--drop",
        "--host",
        host,
        "-n",
        "100",
        "--rate",
        "1000",
        "-o",
        dir.join("stress-batch").to_str().unwrap(),
    ]);
    let users: Vec<(String,)> = rows(host, "SELECT user FROM stressbatch.timeline");
    assert!(
        users.len() > 100 && users.len() <= 250,
        "100 inserts of 4 partitions each (50 users of 5 rows) left {} rows",
        users.len()
    );
}

/// A read with `page_size` asks page after page with the server's paging state (all of them, the
/// first, or as many as `pages` says), and each operation's rows and pages are counted: a
/// partition of 250 rows read 100 rows a page is 3 pages.
fn paged_reads_read_the_pages_they_ask_for(host: &str, dir: &Path) {
    let file = write(
        dir,
        "paged.yaml",
        r#"
schema:
  - CREATE TABLE IF NOT EXISTS wide (p int, c int, v text, PRIMARY KEY (p, c))
values:
  p: fixed(1)
  c: uniform(0..249)
  v: uniform(1..1000)
populate:
  operation: write
  rows: 250
  values:
    c: seq(0..249)
operations:
  write:
    cql: INSERT INTO wide (p, c, v) VALUES (?, ?, ?)
    weight: 0
  every_page:
    cql: SELECT c, v FROM wide WHERE p = ?
    page_size: 100
  first_page:
    cql: SELECT c FROM wide WHERE p = ?
    page_size: 100
    pages: first
  two_pages:
    cql: SELECT c FROM wide WHERE p = ?
    page_size: 100
    pages: 2
  unpaged:
    cql: SELECT c FROM wide WHERE p = ?
"#,
    );
    let out = dir.join("paged");
    cqlbench_ok(&[
        "run",
        &file,
        "--host",
        host,
        "--keyspace",
        "paging",
        "--drop",
        "-n",
        "400",
        "--rate",
        "1000",
        "-o",
        out.to_str().unwrap(),
    ]);
    let summary = read_summary(&out);
    for (name, rows, pages) in [
        ("every_page", 250, 3),
        ("first_page", 100, 1),
        ("two_pages", 200, 2),
        ("unpaged", 250, 0),
    ] {
        let op = &summary["ops"][name];
        let count = op["count"].as_u64().unwrap();
        assert!(count > 50, "{name}: {summary}");
        assert_eq!(failures(op), 0, "{name}: {summary}");
        assert_eq!(
            op["rows"].as_u64().unwrap_or(0),
            rows * count,
            "{name}: {summary}"
        );
        assert_eq!(
            op["pages"].as_u64().unwrap_or(0),
            pages * count,
            "{name}: {summary}"
        );
    }
}

/// Writes `USING TTL … AND TIMESTAMP …` with bound values, a range read with `LIMIT`, a range
/// delete at QUORUM and a conditional update at LOCAL_SERIAL, each checked in what the node holds
/// or answered.
fn ttl_timestamps_range_reads_and_range_deletes(host: &str, dir: &Path) {
    let file = write(
        dir,
        "kinds.yaml",
        r#"
schema:
  - CREATE TABLE IF NOT EXISTS events (p int, c int, v text, PRIMARY KEY (p, c))
values:
  p: fixed(1)
  c: uniform(0..100)
  v:
    population: uniform(1..1M)
    size: fixed(8)
  ttl: fixed(3600)
  ts: fixed(1000)
  lo: fixed(50)
  hi: fixed(100)
populate:
  operation: write
  rows: 200
  values:
    c: seq(0..199)
operations:
  write:
    cql: INSERT INTO events (p, c, v) VALUES (?, ?, ?) USING TTL :ttl AND TIMESTAMP :ts
    weight: 0
  delete_range:
    cql: DELETE FROM events WHERE p = ? AND c >= :lo AND c < :hi
    consistency: QUORUM
  read_range:
    cql: SELECT c, v FROM events WHERE p = ? AND c > ? LIMIT 5
    weight: 3
  cas:
    cql: UPDATE events SET v = 'x' WHERE p = ? AND c = 0 IF v = 'never'
    serial_consistency: LOCAL_SERIAL
"#,
    );
    let out = dir.join("kinds");
    cqlbench_ok(&[
        "run",
        &file,
        "--host",
        host,
        "--keyspace",
        "kinds",
        "--drop",
        "-n",
        "300",
        "--rate",
        "1000",
        "-o",
        out.to_str().unwrap(),
    ]);
    let summary = read_summary(&out);
    let op = |name: &str| &summary["ops"][name];
    let count = |name: &str| op(name)["count"].as_u64().unwrap();
    for name in ["delete_range", "read_range", "cas"] {
        assert!(count(name) > 20, "{name}: {summary}");
        assert_eq!(failures(op(name)), 0, "{name}: {summary}");
    }
    // Every range read found 5 rows past its point (none beyond 195 is drawn).
    assert_eq!(
        op("read_range")["rows"],
        5 * count("read_range"),
        "{summary}"
    );
    // The condition never holds: every conditional update is a success not applied.
    assert_eq!(op("cas")["not_applied"], count("cas"), "{summary}");
    let kept: Vec<(i32, Option<i32>, Option<i64>)> = crate::rows(
        host,
        "SELECT c, TTL(v), WRITETIME(v) FROM kinds.events WHERE p = 1",
    );
    let cs: Vec<i32> = kept.iter().map(|r| r.0).collect();
    let expected: Vec<i32> = (0..50).chain(100..200).collect();
    assert_eq!(cs, expected, "the range delete removed 50..99");
    for (c, ttl, written) in &kept {
        assert_eq!(*written, Some(1000), "row {c}: USING TIMESTAMP");
        assert!(
            ttl.is_some_and(|t| t > 3000 && t <= 3600),
            "row {c}: USING TTL gave {ttl:?}"
        );
    }
}

/// Every shipped easy-cass-stress workload runs by name against the node with no failed
/// operation, every operation of its mix given weight (MaterializedViews needs the views the
/// local cluster enables, SAI needs 5.0).
fn easy_cass_stress_workloads_run_by_name(host: &str, dir: &Path) {
    let shipped = [
        ("AllowFiltering", "write=1,read=1,delete=1"),
        ("CountersWide", "increment=1,read_row=1,read_partition=1"),
        ("LWT", "insert=1,update=1,read=1"),
        ("Locking", "toggle=1,read=1"),
        ("Maps", "write=1,read=1,delete=1"),
        (
            "MaterializedViews",
            "write=1,read_by_age=1,read_by_city=1,delete=1",
        ),
        (
            "RandomPartitionAccess",
            "write=1,read_row=1,read_partition=1,delete_row=1",
        ),
        ("RangeScan", "scan=1"),
        ("SAI", "write=1,read=1,delete=1"),
        ("Sets", "append=1,read=1,remove=1"),
        ("UdtTimeSeries", "write=1,read=1,delete=1"),
    ];
    for (name, mix) in shipped {
        let out = dir.join(format!("ecs-{name}"));
        let mut args = vec![
            "run",
            name,
            "--host",
            host,
            "--keyspace",
            "ecs",
            "-n",
            "300",
            "--rate",
            "1000",
            "--mix",
            mix,
            "-o",
            out.to_str().unwrap(),
        ];
        if name != "RangeScan" {
            args.push("--workload.partitions=200");
        }
        cqlbench_ok(&args);
        let summary = read_summary(&out);
        let ops = summary["ops"].as_object().unwrap();
        let mut total = 0;
        for (op, stats) in ops {
            total += stats["count"].as_u64().unwrap_or(0);
            assert_eq!(stats["errors"]["other"], 0, "{name} {op}: {summary}");
        }
        assert_eq!(total, 300, "{name}: every operation succeeded: {summary}");
    }

    // LWT carries each key's value from one update to the next: every applied update added one,
    // and most updates apply (without the carried value almost none would). One operation in flight,
    // so that no two updates of a key race (how many would is a matter of the machine's speed).
    let out = dir.join("ecs-lwt-state");
    cqlbench_ok(&[
        "run",
        "LWT",
        "--host",
        host,
        "--keyspace",
        "ecs_lwt",
        "--drop",
        "-t",
        "1",
        "-c",
        "1",
        "-n",
        "600",
        "--rate",
        "200",
        "--workload.partitions=50",
        "-o",
        out.to_str().unwrap(),
    ]);
    let summary = read_summary(&out);
    let update = &summary["ops"]["update"];
    let ok = update["count"].as_u64().unwrap();
    let applied = ok - update["not_applied"].as_u64().unwrap_or(0);
    let values: Vec<(i32,)> = rows(host, "SELECT value FROM ecs_lwt.lwt");
    let sum: i64 = values.iter().map(|(v,)| i64::from(*v)).sum();
    assert_eq!(
        sum as u64, applied,
        "each applied update added one: {summary}"
    );
    assert!(
        applied * 2 > ok,
        "most updates apply with the carried value: {summary}"
    );
}

/// Every step of the default scenario runs: the keyspace and table, truncate, rampup as populate
/// (each row is what its cycle's bindings give) and main with its ratios; nosqlbench's `NAME=VALUE`
/// parameters reach the templates, and one that nothing uses is a warning.
fn a_nosqlbench_workload_runs_its_scenario(host: &str, dir: &Path) {
    let file = write(dir, "readings.yaml", NOSQLBENCH);
    let out = dir.join("nb");
    let run = run_support::cqlbench(&[
        "run",
        &file,
        "rampup-cycles=1000",
        "--host",
        host,
        "main-cycles=4000",
        "devices=99",
        "unused_thing=1",
        "--rate",
        "2000",
        "-o",
        out.to_str().unwrap(),
    ]);
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "{stderr}");
    assert!(
        stderr.contains("warning: this parameter is not used by")
            && stderr.contains(": unused_thing"),
        "{stderr}"
    );
    assert!(
        stderr.contains("data/no_such_file.txt is not beside the workload"),
        "{stderr}"
    );
    let summary = read_summary(&out);
    assert_eq!(summary["populate"]["count"], 1000, "{summary}");
    let count = |op: &str| summary["ops"][op]["count"].as_u64().unwrap_or(0);
    let (reads, writes) = (count("main_select"), count("main_insert"));
    assert_eq!(reads + writes, 4000, "{summary}");
    // nosqlbench's bucket sequence of ratios 1 and 3 (read, write, write, write): exactly 1:3.
    assert_eq!((reads, writes), (1000, 3000), "{summary}");

    type Reading = (String, i32, i32, String, CqlTimestamp, f64);
    let readings: Vec<Reading> = rows(
        host,
        "SELECT device, seq, reading, note, at, level FROM nbks.readings",
    );
    assert_eq!(readings.len(), 1000, "one row per rampup cycle");
    let base = 1_704_067_200_000i64; // StartingEpochMillis('2024-01-01 00:00:00')
    for (device, seq, reading, note, at, level) in &readings {
        let device: i64 = device.parse().expect("device is a number as text");
        let cycle = device * 10 + i64::from(*seq);
        assert!((0..10).contains(seq) && (0..100).contains(&device));
        assert_eq!(at.0, base + cycle, "the time binding of cycle {cycle}");
        assert!((0..=1000).contains(reading), "{reading}");
        assert!(
            (20..=40).contains(&note.len()),
            "note of {} characters",
            note.len()
        );
        assert!((10.0..90.0).contains(level), "{level}");
    }

    // Run again with fewer rampup cycles: truncate empties the table first, and the keyspace and
    // table that exist are used as they are.
    cqlbench_ok(&[
        "run",
        &file,
        "--host",
        host,
        "rampup-cycles=500",
        "main-cycles=10",
        "devices=0",
        "-o",
        dir.join("nb2").to_str().unwrap(),
    ]);
    let again: Vec<(String,)> = rows(host, "SELECT device FROM nbks.readings");
    assert_eq!(again.len(), 500, "truncate ran before rampup");
}

/// The profile's keyspace, table and columnspec hold in the rows a real driver reads back; the
/// mix runs every kind of operation; a profile that already ran shares its keyspace and table.
fn a_cassandra_stress_profile_runs_unchanged(host: &str, dir: &Path) {
    let file = write(dir, "timeline.yaml", PROFILE);
    let run = |mix: &str, out: &str, extra: &[&str]| {
        let out = dir.join(out);
        let mut args = vec![
            "run", &file, "--host", host, "--mix", mix, "-n", "3000", "--rate", "1500", "-o",
        ];
        args.push(out.to_str().unwrap());
        args.extend_from_slice(extra);
        cqlbench_ok(&args)
    };
    // The node outlives test runs: start from an empty keyspace.
    run("insert=1", "inserts", &["--drop"]);
    let rows = rows::<(String, i64, String, Vec<i32>)>(
        host,
        "SELECT user, at, body, likes FROM stressks.timeline",
    );
    let users: std::collections::BTreeSet<&String> = rows.iter().map(|r| &r.0).collect();
    assert!(
        users.len() <= 50 && users.len() >= 45,
        "{} users",
        users.len()
    );
    for user in &users {
        assert_eq!(user.len(), 12, "{user}");
        let per_user = rows.iter().filter(|r| &r.0 == *user).count();
        assert!((1..=5).contains(&per_user), "{user}: {per_user} rows");
    }
    for (user, at, body, likes) in &rows {
        assert!((20..=40).contains(&body.len()), "{user} {at}: {body}");
        assert!(!likes.is_empty(), "{user} {at}: {likes:?}");
    }

    // A mixed run in cassandra-stress's own spelling, on the keyspace and table that now exist.
    let table = run("ops(insert=1,latest=2,exact=1,scan=1)", "mixed", &[]);
    let summary = read_summary(&dir.join("mixed"));
    for op in ["insert", "latest", "exact", "scan"] {
        assert!(
            summary["ops"][op]["count"].as_u64().unwrap() > 0,
            "{op}: {summary}"
        );
        assert_eq!(summary["ops"][op]["errors"]["other"], 0, "{op}: {summary}");
        assert!(table.contains(&format!("\n{op} ")), "{table}");
    }
    assert_eq!(summary["settings"]["keyspace"], "stressks");
    assert_eq!(
        summary["settings"]["replication"], "{'class': 'SimpleStrategy', 'replication_factor': 1}",
        "the profile's own keyspace_definition made the keyspace"
    );

    // select fixed(1)/1, cassandra-stress's default: every insert writes its whole partition, the
    // 5 rows in one batch; 40 inserts of 40 partitions (of a million users) leave 200 rows.
    let whole = write(
        dir,
        "whole.yaml",
        &PROFILE
            .replace("stressks", "stresswhole")
            .replace("uniform(1..50)", "uniform(1..1M)")
            .replace("  select: fixed(1)/5\n", ""),
    );
    cqlbench_ok(&[
        "run",
        &whole,
        "--drop",
        "--host",
        host,
        "-n",
        "40",
        "--rate",
        "200",
        "-o",
        dir.join("whole").to_str().unwrap(),
    ]);
    let written: Vec<(String, i64)> =
        crate::rows(host, "SELECT user, at FROM stresswhole.timeline");
    let users: std::collections::BTreeSet<&String> = written.iter().map(|r| &r.0).collect();
    assert_eq!((users.len(), written.len()), (40, 200), "{written:?}");

    let typo = write(dir, "typo.yaml", &PROFILE.replace("specname:", "spacenam:"));
    let line = one_line_error(
        &mut cqlbench_command(&["run", &typo, "--host", host]),
        "did you mean 'specname'",
    );
    assert!(line.contains(&format!("{typo}:2: ")), "{line}");
    one_line_error(
        &mut cqlbench_command(&["run", &file, "--host", host, "--mix", "insert=1,lastest=1"]),
        "did you mean 'latest'",
    );
}

#[test]
fn bad_workload_files_are_refused_in_one_line_before_connecting() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        (
            SENSORS.replace("description:", "descriptoin:"),
            "2",
            "did you mean 'description'",
            "",
        ),
        (
            SENSORS.replace("tags:\n    population:", "tags:\n    populaton:"),
            "17",
            "did you mean 'population'",
            "",
        ),
        (
            SENSORS.replace("samples: uniform(1..100)", "samples: weibull(1..100)"),
            "22",
            "unknown distribution 'weibull'",
            "",
        ),
        (
            SENSORS.replace("weight: 5", "weight: -5"),
            "41",
            "weight '-5'",
            "",
        ),
        (
            SENSORS.replace("operation: insert", "operation: inset"),
            "29",
            "did you mean 'insert'",
            "",
        ),
        (
            SENSORS.to_string(),
            "",
            "no parameter 'nope' (it has: sensors, value_size)",
            "--workload.nope=1",
        ),
        (
            SENSORS.to_string(),
            "",
            "-r/--read-ratio applies to the built-in workloads",
            "--read-ratio=0.5",
        ),
    ];
    let sensors_state = SENSORS.replacen("    weight: 2\n", "    weight: 2\n    state: nope\n", 1);
    let sensors_batch = SENSORS.replacen(
        "    weight: 2\n",
        "    weight: 2\n    batch:\n      type: sideways\n      rows: fixed(2)\n",
        1,
    );
    let nb = |from: &str, to: &str| NOSQLBENCH.replace(from, to);
    let nosqlbench_cases = [
        (
            nb("device: Div(", "device: Frobnicate("),
            "12",
            "binding 'device': the function 'Frobnicate' is not supported",
            "",
        ),
        (
            nb("Uniform(0,1000)->int", "Uniform(0,1000->int"),
            "14",
            "binding 'reading': a '(' is not closed",
            "",
        ),
        (
            nb("where device={pick_device}", "where device={pick_devise}"),
            "48",
            "op 'main_select': the binding {pick_devise} is not defined",
            "",
        ),
        (
            NOSQLBENCH.to_string(),
            "",
            "no scenario 'nowhere' (the file has: default, other)",
            "nowhere",
        ),
        (
            NOSQLBENCH.to_string(),
            "",
            "step 'main' selects no op",
            "other",
        ),
        (
            NOSQLBENCH.to_string(),
            "",
            "credentials never go in arguments",
            "password=secret",
        ),
        (
            sensors_state,
            "",
            "operation 'insert': state names 'nope', which has no generator in values",
            "",
        ),
        (
            sensors_batch,
            "",
            "operation 'insert': batch type 'sideways': use logged, unlogged or counter",
            "",
        ),
        (
            SENSORS.replace("    weight: 5\n", "    weight: 5\n    pages: first\n"),
            "42",
            "operation 'read': pages needs page_size",
            "",
        ),
        (
            SENSORS.replace(
                "    weight: 5\n",
                "    weight: 5\n    page_size: 100\n    pages: some\n",
            ),
            "43",
            "operation 'read': pages 'some' must be all, first or a whole number above 0",
            "",
        ),
        (
            SENSORS.replace("    weight: 2\n", "    weight: 2\n    page_size: 100\n"),
            "37",
            "operation 'insert': page_size applies to a SELECT that is not batched",
            "",
        ),
    ];
    let cases: Vec<(String, &str, &str, &str)> =
        cases.into_iter().chain(nosqlbench_cases).collect();
    for (i, (text, line, says, extra)) in cases.iter().enumerate() {
        let file = write(dir.path(), &format!("bad{i}.yaml"), text);
        let mut args = vec!["run", file.as_str(), "--host", "127.0.19.250", "-n", "10"];
        if !extra.is_empty() {
            args.push(extra);
        }
        let error = one_line_error(&mut cqlbench_command(&args), says);
        if !line.is_empty() {
            assert!(error.contains(&format!("{file}:{line}: ")), "{error}");
        }
    }
    one_line_error(
        &mut cqlbench_command(&["run", "/no/such/workload.yaml", "--host", "127.0.19.250"]),
        "cannot read workload file /no/such/workload.yaml",
    );
}
