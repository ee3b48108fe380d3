//! The collector options rendered for K8ssandra, started on a real JDK the way Cassandra starts them: after
//! the JDK-specific options file, which selects G1 on 5.0/JDK 17 (what `jvmOptions.gc` cannot change there)
//! and CMS on 4.x/JDK 11 (Cassandra's own jvm11-server.options).

use std::path::Path;
use std::process::Command;

use cqlbench_cluster::{jdk, Home, JdkChoice};

/// Cassandra 5.0's jvm17-server.options selects G1 (K8ssandra's `gc` field does not change it there).
const CASSANDRA_50_DEFAULT: &str = "-XX:+UseG1GC";
/// Cassandra 4.x's jvm11-server.options selects CMS.
const CASSANDRA_4X_DEFAULT: &str = "-XX:+UseConcMarkSweepGC";

/// The example plan, on `cassandra` instead of its 5.0.9 and on `backend`: the JDK its pods run and, per
/// configuration, its name and the options rendered for cassandra-env.sh to append (K8ssandra's
/// `additionalOptions`, or the StatefulSet's `JVM_EXTRA_OPTS`, split at spaces as the script does).
fn rendered_options(cassandra: &str, backend: &str) -> (u32, Vec<(String, Vec<String>)>) {
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/k8s-gc.toml");
    let text = std::fs::read_to_string(&example).unwrap();
    assert!(text.contains("cassandra = \"5.0.9\""));
    let text = text
        .replace(
            "cassandra = \"5.0.9\"",
            &format!("cassandra = {cassandra:?}"),
        )
        .replace("[k8s]\n", &format!("[k8s]\noperator = {backend:?}\n"));
    let plan = cqlbench_k8s::parse_plan("k8s-gc.toml", &text).unwrap();
    let jdk = plan.jdk_majors[0];
    let manifests = cqlbench_k8s::render(&plan, &cqlbench_k8s::RenderOptions::default()).unwrap();
    let config_of = |object: &serde_json::Value| {
        object["metadata"]["annotations"]["cqlbench.io/config"]
            .as_str()
            .unwrap()
            .to_string()
    };
    let all = manifests
        .iter()
        .map(|m| &m.object)
        .filter_map(|object| match object["kind"].as_str() {
            Some("K8ssandraCluster") => {
                let options = object["spec"]["cassandra"]["datacenters"][0]["config"]["jvmOptions"]
                    ["additionalOptions"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|o| o.as_str().unwrap().to_string())
                    .collect();
                Some((config_of(object), options))
            }
            // The first rack's: every rack of a configuration runs the same options.
            Some("StatefulSet") if object["metadata"]["name"].as_str()?.contains("-rack1-") => {
                let env = object["spec"]["template"]["spec"]["containers"][0]["env"]
                    .as_array()
                    .unwrap();
                let extra = env.iter().find(|e| e["name"] == "JVM_EXTRA_OPTS").unwrap();
                let options = extra["value"]
                    .as_str()
                    .unwrap()
                    .split_whitespace()
                    .map(str::to_string)
                    .collect();
                Some((config_of(object), options))
            }
            _ => None,
        })
        .collect::<Vec<_>>();
    (jdk, all)
}

/// The rendered options with a small heap (this machine is shared; a StatefulSet's heap comes from
/// MAX_HEAP_SIZE, so one is given either way) and the GC log in `dir` (no /var/lib/cassandra here);
/// everything else exactly as rendered.
fn runnable(options: &[String], dir: &Path) -> Vec<String> {
    let mut runnable: Vec<String> = options
        .iter()
        .filter(|o| !o.starts_with("-Xms") && !o.starts_with("-Xmx"))
        .map(|o| {
            o.replace(
                "/var/lib/cassandra/gc.log",
                &dir.join("gc.log").display().to_string(),
            )
        })
        .collect();
    runnable.extend(["-Xms256M".to_string(), "-Xmx256M".to_string()]);
    runnable
}

/// A boolean flag's final value; a flag this JDK does not list (CMS on 17, experimental ones when not
/// unlocked) is off.
fn flag(output: &str, name: &str) -> bool {
    output
        .lines()
        .find(|l| l.split_whitespace().nth(1) == Some(name))
        .is_some_and(|line| line.split_whitespace().nth(3) == Some("true"))
}

/// Starts `java` of JDK `major` with `default` (the options file's collector), then each configuration's
/// rendered options, and checks the collector it runs and the GC log it writes.
fn check_collectors(cassandra: &str, backend: &str, major: u32, default: &str) {
    let home = Home::from_env();
    let jdk = jdk::resolve(&home, &JdkChoice::Major(major), major, &mut |line| {
        eprintln!("{line}")
    })
    .unwrap_or_else(|e| panic!("a JDK {major} (installed on demand): {e}"));
    let (image_jdk, all) = rendered_options(cassandra, backend);
    assert_eq!(image_jdk, major, "the {backend} image for {cassandra}");
    assert_eq!(all.len(), 3);
    for (config, options) in all {
        let dir = tempfile::tempdir().unwrap();
        let output = Command::new(jdk.java())
            .arg(default)
            .args(runnable(&options, dir.path()))
            .args(["-XX:+PrintFlagsFinal", "-version"])
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(
            output.status.success(),
            "{config} on {cassandra}: the JVM refused {options:?}: {stdout}{}",
            String::from_utf8_lossy(&output.stderr)
        );
        let selected: Vec<&str> = ["UseG1GC", "UseShenandoahGC", "UseZGC", "UseConcMarkSweepGC"]
            .into_iter()
            .filter(|name| flag(&stdout, name))
            .collect();
        let (expected, using) = match config.split_whitespace().next() {
            Some("G1") => ("UseG1GC", "Using G1"),
            Some("Shenandoah") => ("UseShenandoahGC", "Using Shenandoah"),
            Some("ZGC") => ("UseZGC", "Using The Z Garbage Collector"),
            other => panic!("unexpected configuration {other:?}"),
        };
        assert_eq!(selected, [expected], "{config} on {cassandra}");
        // The GC log (with safepoints) is written where the rendered flag says.
        let log = std::fs::read_to_string(dir.path().join("gc.log")).unwrap_or_default();
        assert!(
            log.contains(using),
            "{config} on {cassandra}: gc.log: {log}"
        );
    }
}

#[test]
fn rendered_options_select_the_collector_after_cassandra_50s_g1_default() {
    check_collectors("5.0.9", "k8ssandra", 17, CASSANDRA_50_DEFAULT);
}

#[test]
fn statefulset_options_select_the_collector_after_cassandra_50s_g1_default() {
    check_collectors("5.0.9", "statefulset", 17, CASSANDRA_50_DEFAULT);
}

#[test]
fn rendered_options_select_the_collector_after_cassandra_4xs_cms_default() {
    check_collectors("4.1.9", "k8ssandra", 11, CASSANDRA_4X_DEFAULT);
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
