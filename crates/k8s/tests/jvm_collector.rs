//! The collector options rendered for K8ssandra, started on a real JDK 17 the way Cassandra 5.0 starts
//! them: after its jvm17-server.options, which selects G1. This is what `jvmOptions.gc` cannot do on 5.0.

use std::path::Path;
use std::process::Command;

use cqlbench_cluster::{jdk, Home, JdkChoice};

/// Cassandra 5.0's jvm17-server.options selects G1 (K8ssandra's `gc` field does not change it there).
const CASSANDRA_50_DEFAULT: &str = "-XX:+UseG1GC";

fn rendered_options() -> Vec<(String, Vec<String>)> {
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/k8s-gc.toml");
    let plan = cqlbench_k8s::load_plan(&example).unwrap();
    let manifests = cqlbench_k8s::render(&plan, &cqlbench_k8s::RenderOptions::default()).unwrap();
    manifests
        .iter()
        .filter(|m| m.object["kind"] == "K8ssandraCluster")
        .map(|m| {
            let config = m.object["metadata"]["annotations"]["cqlbench.io/config"]
                .as_str()
                .unwrap()
                .to_string();
            let options = m.object["spec"]["cassandra"]["datacenters"][0]["config"]["jvmOptions"]
                ["additionalOptions"]
                .as_array()
                .unwrap()
                .iter()
                .map(|o| o.as_str().unwrap().to_string())
                .collect();
            (config, options)
        })
        .collect()
}

/// The rendered options with a small heap (this machine is shared) and the GC log in `dir` (no
/// /var/lib/cassandra here); everything else exactly as rendered.
fn runnable(options: &[String], dir: &Path) -> Vec<String> {
    options
        .iter()
        .map(|o| {
            if o.starts_with("-Xms") {
                "-Xms256M".to_string()
            } else if o.starts_with("-Xmx") {
                "-Xmx256M".to_string()
            } else {
                o.replace(
                    "/var/lib/cassandra/gc.log",
                    &dir.join("gc.log").display().to_string(),
                )
            }
        })
        .collect()
}

fn flag(output: &str, name: &str) -> bool {
    let line = output
        .lines()
        .find(|l| l.split_whitespace().nth(1) == Some(name))
        .unwrap_or_else(|| panic!("{name} in -XX:+PrintFlagsFinal"));
    line.split_whitespace().nth(3) == Some("true")
}

#[test]
fn rendered_options_select_the_collector_after_cassandra_50s_g1_default() {
    let home = Home::from_env();
    let jdk = jdk::resolve(&home, &JdkChoice::Major(17), 17, &mut |line| {
        eprintln!("{line}")
    })
    .expect("a JDK 17 (installed on demand)");
    let all = rendered_options();
    assert_eq!(all.len(), 3);
    for (config, options) in all {
        let dir = tempfile::tempdir().unwrap();
        let output = Command::new(jdk.java())
            .arg(CASSANDRA_50_DEFAULT)
            .args(runnable(&options, dir.path()))
            .args(["-XX:+PrintFlagsFinal", "-version"])
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(
            output.status.success(),
            "{config}: the JVM refused {options:?}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        let (g1, shenandoah, zgc) = (
            flag(&stdout, "UseG1GC"),
            flag(&stdout, "UseShenandoahGC"),
            flag(&stdout, "UseZGC"),
        );
        let expected = match config.as_str() {
            "G1 jdk17" => (true, false, false),
            "Shenandoah jdk17" => (false, true, false),
            "ZGC jdk17" => (false, false, true),
            other => panic!("unexpected configuration {other}"),
        };
        assert_eq!((g1, shenandoah, zgc), expected, "{config}");
        // The GC log (with safepoints) is written where the rendered flag says.
        let log = std::fs::read_to_string(dir.path().join("gc.log")).unwrap_or_default();
        let using = match expected {
            (true, _, _) => "Using G1",
            (_, true, _) => "Using Shenandoah",
            _ => "Using The Z Garbage Collector",
        };
        assert!(log.contains(using), "{config}: gc.log: {log}");
    }
}

/// Without the rendered `-XX:-UseG1GC`, Cassandra 5.0's default G1 plus a second collector stops the JVM:
/// the check above would fail if the rendering lost it.
#[test]
fn a_second_collector_after_the_g1_default_is_refused_by_the_jvm() {
    let home = Home::from_env();
    let jdk = jdk::resolve(&home, &JdkChoice::Major(17), 17, &mut |line| {
        eprintln!("{line}")
    })
    .unwrap();
    let output = Command::new(jdk.java())
        .args([
            CASSANDRA_50_DEFAULT,
            "-XX:+UseShenandoahGC",
            "-Xmx256M",
            "-version",
        ])
        .output()
        .unwrap();
    // HotSpot prints this start-up error on stdout.
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(!output.status.success(), "{said}");
    assert!(
        said.contains("Multiple garbage collectors selected"),
        "{said}"
    );
}
