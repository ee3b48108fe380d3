//! examples/k8s-live.toml rendered as it is (the StatefulSet backend), and with zones: what the pods of
//! each configuration run, and how the load Jobs find them.

use std::path::Path;

use serde_json::Value;

fn live_plan(edit: impl Fn(String) -> String) -> cqlbench_k8s::K8sPlan {
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/k8s-live.toml");
    let text = edit(std::fs::read_to_string(example).unwrap());
    cqlbench_k8s::parse_plan("k8s-live.toml", &text).expect("the plan is valid")
}

fn objects(plan: &cqlbench_k8s::K8sPlan) -> Vec<(String, Value)> {
    cqlbench_k8s::render(plan, &cqlbench_k8s::RenderOptions::default())
        .unwrap()
        .into_iter()
        .map(|m| (m.path.display().to_string(), m.object))
        .collect()
}

fn env(container: &Value, name: &str) -> String {
    container["env"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["name"] == name)
        .unwrap_or_else(|| panic!("no {name} in {container}"))["value"]
        .as_str()
        .unwrap()
        .to_string()
}

#[test]
fn each_configuration_is_a_headless_service_and_a_statefulset_the_jobs_find() {
    let plan = live_plan(|text| text);
    let objects = objects(&plan);
    let paths: Vec<&str> = objects.iter().map(|(p, _)| p.as_str()).collect();
    assert_eq!(
        paths,
        [
            "00-namespace.yaml",
            "01-results-pvc.yaml",
            "01-k8s-live-1/00-service.yaml",
            "01-k8s-live-1/00-statefulset-rack1.yaml",
            "01-k8s-live-1/01-job-populate.yaml",
            "01-k8s-live-1/02-job-max.yaml",
            "01-k8s-live-1/03-job-p50.yaml",
            "02-k8s-live-2/00-service.yaml",
            "02-k8s-live-2/00-statefulset-rack1.yaml",
            "02-k8s-live-2/01-job-populate.yaml",
            "02-k8s-live-2/02-job-max.yaml",
            "02-k8s-live-2/03-job-p50.yaml",
        ]
    );
    let object = |path: &str| &objects.iter().find(|(p, _)| p == path).unwrap().1;
    let service = object("02-k8s-live-2/00-service.yaml");
    assert_eq!(service["metadata"]["name"], "k8s-live-2-dc1-service");
    assert_eq!(service["spec"]["clusterIP"], "None");
    assert_eq!(service["spec"]["publishNotReadyAddresses"], true);

    let sts = object("02-k8s-live-2/00-statefulset-rack1.yaml");
    assert_eq!(sts["metadata"]["name"], "k8s-live-2-dc1-rack1-sts");
    let spec = &sts["spec"];
    assert_eq!(spec["serviceName"], "k8s-live-2-dc1-service");
    assert_eq!(spec["replicas"], 1);
    assert_eq!(spec["podManagementPolicy"], "OrderedReady");
    assert_eq!(
        spec["persistentVolumeClaimRetentionPolicy"]["whenDeleted"],
        "Delete"
    );
    // The Service selects the pods, and the StatefulSet's selector its own template.
    let pod_labels = spec["template"]["metadata"]["labels"].as_object().unwrap();
    for (key, value) in service["spec"]["selector"].as_object().unwrap() {
        assert_eq!(pod_labels.get(key), Some(value), "service selector {key}");
    }
    assert_eq!(
        &spec["selector"]["matchLabels"],
        &spec["template"]["metadata"]["labels"]
    );
    let volume = &spec["volumeClaimTemplates"][0]["spec"];
    assert_eq!(volume["storageClassName"], "local");
    assert_eq!(volume["resources"]["requests"]["storage"], "2Gi");

    let container = &spec["template"]["spec"]["containers"][0];
    assert_eq!(container["name"], "cassandra");
    assert_eq!(container["image"], "cqlbench/cassandra:5.0.9-jdk17");
    assert_eq!(
        container["volumeMounts"][0]["mountPath"],
        "/var/lib/cassandra"
    );
    assert_eq!(container["readinessProbe"]["tcpSocket"]["port"], 9042);
    assert!(container.get("livenessProbe").is_none());
    assert_eq!(env(container, "CASSANDRA_CLUSTER_NAME"), "k8s-live-2");
    assert_eq!(
        env(container, "CASSANDRA_SEEDS"),
        "k8s-live-2-dc1-rack1-sts-0.k8s-live-2-dc1-service"
    );
    assert_eq!(
        (
            env(container, "CASSANDRA_DC"),
            env(container, "CASSANDRA_RACK")
        ),
        ("dc1".to_string(), "rack1".to_string())
    );
    assert_eq!(env(container, "MAX_HEAP_SIZE"), "1G");
    let extra = env(container, "JVM_EXTRA_OPTS");
    let options: Vec<&str> = extra.split(' ').collect();
    for expected in [
        "-XX:-UseG1GC",
        "-XX:+UseZGC",
        "-Dcassandra.skip_wait_for_gossip_to_settle=0",
    ] {
        assert!(options.contains(&expected), "{expected} in {extra}");
    }
    assert!(
        options
            .iter()
            .any(|o| o.starts_with("-Xlog:") && o.contains("file=/var/lib/cassandra/gc.log")),
        "{extra}"
    );

    // The Jobs reach the datacenter's Service, without K8ssandra's superuser Secret.
    let job = object("02-k8s-live-2/02-job-max.yaml");
    let client = &job["spec"]["template"]["spec"]["containers"][0];
    let args: Vec<&str> = client["args"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    let host = args.iter().position(|a| *a == "--host").unwrap();
    assert_eq!(args[host + 1], "k8s-live-2-dc1-service");
    let env = client["env"].as_array().unwrap();
    assert!(
        env.iter()
            .all(|e| e["valueFrom"].get("secretKeyRef").is_none()),
        "{env:?}"
    );
    assert_eq!(client["image"], "cqlbench/cqlbench:0.1.0");
}

#[test]
fn zones_become_racks_each_its_own_statefulset_pinned_to_its_zone() {
    let plan = live_plan(|text| {
        text.replace("nodes = 1", "nodes = 3")
            .replace("[k8s]\n", "[k8s]\nzones = [\"z1\", \"z2\"]\n")
    });
    let objects = objects(&plan);
    let racks: Vec<(&str, u64, &str)> = objects
        .iter()
        .filter(|(path, _)| path.starts_with("01-") && path.contains("statefulset"))
        .map(|(_, sts)| {
            let zone = &sts["spec"]["template"]["spec"]["affinity"]["nodeAffinity"]
                ["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"][0]
                ["matchExpressions"][0];
            assert_eq!(zone["key"], "topology.kubernetes.io/zone");
            (
                sts["metadata"]["name"].as_str().unwrap(),
                sts["spec"]["replicas"].as_u64().unwrap(),
                zone["values"][0].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        racks,
        [
            ("k8s-live-1-dc1-rack1-sts", 2, "z1"),
            ("k8s-live-1-dc1-rack2-sts", 1, "z2"),
        ]
    );
    // Every rack's pods seed from the first rack's first pod; rack 2's pod 0 is node 2 of 3.
    let mut offsets = Vec::new();
    for (path, sts) in &objects {
        if path.starts_with("01-") && path.contains("statefulset") {
            let container = &sts["spec"]["template"]["spec"]["containers"][0];
            assert_eq!(
                env(container, "CASSANDRA_SEEDS"),
                "k8s-live-1-dc1-rack1-sts-0.k8s-live-1-dc1-service"
            );
            assert_eq!(env(container, "CQLBENCH_NODES"), "3");
            assert_eq!(
                env(container, "CQLBENCH_STATEFULSET"),
                sts["metadata"]["name"].as_str().unwrap()
            );
            offsets.push(env(container, "CQLBENCH_NODE_OFFSET"));
        }
    }
    assert_eq!(offsets, ["0", "2"]);
}

#[test]
fn the_live_examples_clients_linger_only_as_long_as_the_plan_says() {
    for (linger, expected) in [(None, "0s"), (Some("20s"), "20s")] {
        let plan = live_plan(|text| match linger {
            Some(value) => text.replace(
                "metrics-linger = \"0s\"",
                &format!("metrics-linger = \"{value}\""),
            ),
            None => text,
        });
        let jobs: Vec<(String, Value)> = objects(&plan)
            .into_iter()
            .filter(|(_, object)| object["kind"] == "Job")
            .collect();
        assert_eq!(
            jobs.len(),
            6,
            "populate, max and one rate per configuration"
        );
        for (path, job) in jobs {
            let args: Vec<&str> = job["spec"]["template"]["spec"]["containers"][0]["args"]
                .as_array()
                .unwrap()
                .iter()
                .map(|a| a.as_str().unwrap())
                .collect();
            assert!(
                args.windows(2)
                    .any(|w| w == ["--prometheus-linger", expected]),
                "{path}: {args:?}"
            );
        }
    }
}
