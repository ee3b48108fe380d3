//! examples/k8s-gc.toml rendered as it is: seed 001's shape on K8ssandra, checked object by object.

use std::path::{Path, PathBuf};

use serde_json::Value;

fn example() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/k8s-gc.toml")
}

fn render(start_at: Option<&str>) -> Vec<cqlbench_k8s::Manifest> {
    let plan = cqlbench_k8s::load_plan(&example()).expect("the example plan is valid");
    let options = cqlbench_k8s::RenderOptions {
        start_at: start_at.map(str::to_string),
    };
    cqlbench_k8s::render(&plan, &options).expect("the example renders")
}

fn strings(value: &Value) -> Vec<String> {
    value
        .as_array()
        .expect("a list")
        .iter()
        .map(|v| v.as_str().expect("a string").to_string())
        .collect()
}

#[test]
fn example_renders_clusters_and_indexed_jobs() {
    let manifests = render(Some("2026-11-23T09:00:00Z"));
    let paths: Vec<String> = manifests
        .iter()
        .map(|m| m.path.display().to_string())
        .collect();
    let mut expected = vec![
        "00-namespace.yaml".to_string(),
        "01-results-pvc.yaml".to_string(),
    ];
    for (n, cluster) in ["k8s-gc-1", "k8s-gc-2", "k8s-gc-3"].iter().enumerate() {
        for file in [
            "00-k8ssandracluster.yaml",
            "01-job-populate.yaml",
            "02-job-max.yaml",
            "03-job-p35.yaml",
        ] {
            expected.push(format!("{:02}-{cluster}/{file}", n + 1));
        }
    }
    expected.push("99-podmonitor.yaml".to_string());
    assert_eq!(paths, expected);
    // The load pods' metrics port, selected by the PodMonitor (Jobs' pods have no Service).
    let monitor = &manifests.last().unwrap().object;
    assert_eq!(monitor["kind"], "PodMonitor");
    assert_eq!(monitor["spec"]["podMetricsEndpoints"][0]["port"], "metrics");
    let selector = &monitor["spec"]["selector"]["matchLabels"];
    let job = &manifests[3].object;
    assert_eq!(job["kind"], "Job");
    let pod = &job["spec"]["template"];
    for (key, value) in selector.as_object().unwrap() {
        assert_eq!(
            &pod["metadata"]["labels"][key], value,
            "the PodMonitor selects {key}"
        );
    }
    assert_eq!(pod["spec"]["containers"][0]["ports"][0]["name"], "metrics");

    // Per configuration: the collector's own flags after switching off 5.0's default G1, on JDK 17.
    let wanted = [
        ("G1 jdk17", "G1GC", "-XX:+UseG1GC"),
        ("Shenandoah jdk17", "Shenandoah", "-XX:+UseShenandoahGC"),
        ("ZGC jdk17", "ZGC", "-XX:+UseZGC"),
    ];
    for (n, (config, k8ssandra_gc, use_flag)) in wanted.iter().enumerate() {
        let cluster = &manifests[2 + 4 * n].object;
        assert_eq!(cluster["kind"], "K8ssandraCluster");
        assert_eq!(cluster["apiVersion"], "k8ssandra.io/v1alpha1");
        assert_eq!(
            cluster["metadata"]["annotations"]["cqlbench.io/config"],
            *config
        );
        assert_eq!(cluster["metadata"]["namespace"], "cqlbench");
        let cassandra = &cluster["spec"]["cassandra"];
        assert_eq!(cassandra["serverVersion"], "5.0.9");
        let dc = &cassandra["datacenters"][0];
        assert_eq!(dc["size"], 3);
        let zones: Vec<&Value> = dc["racks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| &r["nodeAffinityLabels"]["topology.kubernetes.io/zone"])
            .collect();
        assert_eq!(zones, ["us-east1-b", "us-east1-c", "us-east1-d"]);
        assert_eq!(dc["resources"]["limits"]["memory"], "32Gi");
        assert_eq!(
            dc["storageConfig"]["cassandraDataVolumeClaimSpec"]["storageClassName"],
            "premium-rwo"
        );
        let jvm = &dc["config"]["jvmOptions"];
        assert_eq!(
            (&jvm["heap_max_size"], &jvm["heap_initial_size"]),
            (&Value::from("16Gi"), &Value::from("16Gi"))
        );
        assert_eq!(jvm["gc"], *k8ssandra_gc);
        let options = strings(&jvm["additionalOptions"]);
        assert!(
            options.contains(&use_flag.to_string()),
            "{config}: {options:?}"
        );
        assert!(
            options.contains(&"-Xmx16G".to_string()),
            "{config}: {options:?}"
        );
        let off = options.iter().position(|o| o == "-XX:-UseG1GC");
        if *use_flag == "-XX:+UseG1GC" {
            assert_eq!(off, None, "{config}");
        } else {
            let on = options.iter().position(|o| o == use_flag).unwrap();
            assert!(off.is_some_and(|off| off < on), "{config}: {options:?}");
        }
        assert!(
            options.contains(
                &"-Xlog:gc*,safepoint:file=/var/lib/cassandra/gc.log:time,uptime,level,tags:filecount=10,filesize=20M"
                    .to_string()
            ),
            "{config}: {options:?}"
        );
        assert!(
            !options.iter().any(|o| o.contains("ConcMarkSweep")),
            "JDK 17 has no CMS flag"
        );
    }
}

#[test]
fn jobs_run_cqlbench_on_every_client_pod_with_the_operators_credentials() {
    let manifests = render(Some("2026-11-23T09:00:00Z"));
    let job = |path: &str| {
        &manifests
            .iter()
            .find(|m| m.path == Path::new(path))
            .unwrap_or_else(|| panic!("{path} rendered"))
            .object
    };
    let max = job("02-k8s-gc-2/02-job-max.yaml");
    assert_eq!(max["kind"], "Job");
    assert_eq!(max["metadata"]["name"], "k8s-gc-2-max");
    let spec = &max["spec"];
    assert_eq!(spec["completionMode"], "Indexed");
    assert_eq!(
        (&spec["completions"], &spec["parallelism"]),
        (&Value::from(4), &Value::from(4))
    );
    let pod = &spec["template"]["spec"];
    assert_eq!(pod["restartPolicy"], "Never");
    assert_eq!(
        spec["template"]["metadata"]["annotations"]["cqlbench.io/start-at"],
        "2026-11-23T09:00:00Z"
    );
    let container = &pod["containers"][0];
    assert_eq!(container["image"], "registry.example/cqlbench:0.1.0");
    let args = strings(&container["args"]);
    let after = |flag: &str| {
        args.iter()
            .position(|a| a == flag)
            .and_then(|i| args.get(i + 1))
            .unwrap_or_else(|| panic!("{flag} in {args:?}"))
            .as_str()
    };
    assert_eq!(&args[..2], ["run", "Tabular"]);
    assert_eq!(after("--host"), "k8s-gc-2-dc1-service");
    assert_eq!(after("--clients"), "4");
    assert_eq!(after("--client-id"), "$(JOB_COMPLETION_INDEX)");
    assert_eq!(after("--start-at"), "$(CQLBENCH_START_AT)");
    assert_eq!(after("-d"), "600s", "the sweep's max-duration");
    assert_eq!(after("--warmup"), "60s");
    assert_eq!(
        after("--prometheus-linger"),
        "15s",
        "the plan names no metrics-linger: one scrape at Prometheus' default interval"
    );
    assert_eq!(
        after("-o"),
        "/results/k8s-gc-2/max/client-$(JOB_COMPLETION_INDEX)"
    );
    assert!(
        !args.iter().any(|a| a.starts_with("--populate")),
        "cells never populate: {args:?}"
    );
    assert!(
        !args.contains(&"--rate".to_string()),
        "the max cell is unthrottled"
    );
    // Credentials come from the operator's superuser Secret, never inline.
    let env = container["env"].as_array().unwrap();
    for (name, key) in [
        ("CQLBENCH_USERNAME", "username"),
        ("CQLBENCH_PASSWORD", "password"),
    ] {
        let var = env.iter().find(|e| e["name"] == name).expect(name);
        assert_eq!(
            var["valueFrom"]["secretKeyRef"]["name"],
            "k8s-gc-2-superuser"
        );
        assert_eq!(var["valueFrom"]["secretKeyRef"]["key"], key);
        assert!(var.get("value").is_none());
    }
    assert_eq!(container["volumeMounts"][0]["mountPath"], "/results");
    assert_eq!(
        pod["volumes"][0]["persistentVolumeClaim"]["claimName"],
        "cqlbench-results"
    );

    let latency = job("02-k8s-gc-2/03-job-p35.yaml");
    let annotations = &latency["spec"]["template"]["metadata"]["annotations"];
    assert_eq!(annotations["cqlbench.io/rate-fraction"], "0.35");
    assert_eq!(annotations["cqlbench.io/rate-of"], "k8s-gc-2-max");
    let args = strings(&latency["spec"]["template"]["spec"]["containers"][0]["args"]);
    let rate = args
        .iter()
        .position(|a| a == "--rate")
        .map(|i| args[i + 1].as_str());
    assert_eq!(rate, Some("$(CQLBENCH_RATE)"));
    assert!(
        args.contains(&"900s".to_string()),
        "the load's duration: {args:?}"
    );

    let populate = job("01-k8s-gc-1/01-job-populate.yaml");
    assert_eq!(populate["spec"]["completions"], 1);
    let args = strings(&populate["spec"]["template"]["spec"]["containers"][0]["args"]);
    assert!(
        args.windows(2).any(|w| w == ["--populate", "1000000"]),
        "{args:?}"
    );
    assert!(!args.contains(&"--clients".to_string()));

    let claim = &manifests[1].object;
    assert_eq!(claim["spec"]["accessModes"][0], "ReadWriteMany");
}

#[test]
fn rendering_is_deterministic_and_the_files_are_yaml_of_the_objects() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    cqlbench_k8s::write(&render(Some("2026-11-23T09:00:00Z")), &a).unwrap();
    cqlbench_k8s::write(&render(Some("2026-11-23T09:00:00Z")), &b).unwrap();
    for manifest in render(Some("2026-11-23T09:00:00Z")) {
        let first = std::fs::read_to_string(a.join(&manifest.path)).unwrap();
        let second = std::fs::read_to_string(b.join(&manifest.path)).unwrap();
        assert_eq!(first, second, "{}", manifest.path.display());
        assert_eq!(first, manifest.yaml());
    }
    let yaml = render(None)[2].yaml();
    assert!(
        yaml.starts_with("apiVersion: k8ssandra.io/v1alpha1\nkind: K8ssandraCluster\nmetadata:\n"),
        "{yaml}"
    );
}

#[test]
fn a_bad_start_time_is_refused_in_one_line() {
    let plan = cqlbench_k8s::load_plan(&example()).unwrap();
    for bad in ["tomorrow", "2026-11-23 09:00:00", "2026-11-23T09:00:00", ""] {
        let options = cqlbench_k8s::RenderOptions {
            start_at: Some(bad.to_string()),
        };
        let error = cqlbench_k8s::render(&plan, &options)
            .unwrap_err()
            .to_string();
        assert!(
            error.starts_with("--start-at") && !error.contains('\n'),
            "{bad}: {error}"
        );
    }
}
