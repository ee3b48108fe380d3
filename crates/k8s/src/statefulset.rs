//! The StatefulSet backend (`[k8s] operator = "statefulset"`): a configuration's datacenter as a headless
//! Service and one StatefulSet per rack, for clusters without K8ssandra's operators.
//!
//! The pods follow the official `cassandra` image's conventions (`CASSANDRA_SEEDS`,
//! `CASSANDRA_CLUSTER_NAME`, `CASSANDRA_DC`, `CASSANDRA_RACK`, `CASSANDRA_ENDPOINT_SNITCH`, `MAX_HEAP_SIZE`,
//! and `JVM_EXTRA_OPTS`, which its `cassandra-env.sh` appends last), so a plan may name that image or the
//! one `cqlbench k8s image cassandra` builds. Names follow cass-operator's (`<cluster>-<dc>-service`,
//! `<cluster>-<dc>-<rack>-sts`), so the load Jobs find the datacenter the same way on either backend.

use serde_json::{json, Value};

use crate::error::K8sError;
use crate::plan::K8sPlan;
use crate::render::server_jvm_options;

/// The Cassandra container of every Cassandra pod, on either backend.
pub const CASSANDRA_CONTAINER: &str = "cassandra";
/// Label of the Cassandra pods of this backend (beside `cqlbench.io/cluster`).
const NAME_LABEL: (&str, &str) = ("app.kubernetes.io/name", "cassandra");
/// The user the official image runs Cassandra as; fsGroup makes the data volume its own.
const CASSANDRA_UID: u32 = 999;
const CQL_PORT: u16 = 9042;
const STORAGE_PORT: u16 = 7000;

/// The datacenter's Service: the Jobs' `--host`, and the seeds' DNS domain.
pub fn service_name(cluster: &str, datacenter: &str) -> String {
    format!("{cluster}-{datacenter}-service")
}

pub fn statefulset_name(cluster: &str, datacenter: &str, rack: &str) -> String {
    format!("{cluster}-{datacenter}-{rack}-sts")
}

/// The label selector of a configuration's Cassandra pods.
pub fn pod_selector(cluster: &str) -> String {
    format!(
        "cqlbench.io/cluster={cluster},{}={}",
        NAME_LABEL.0, NAME_LABEL.1
    )
}

/// One rack: its name, the zone it is pinned to, and its share of the nodes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rack {
    pub name: String,
    pub zone: Option<String>,
    pub nodes: usize,
}

/// One rack per zone (or one unpinned rack), the nodes spread as evenly as they go, first racks first.
pub fn racks(zones: &[String], nodes: usize) -> Vec<Rack> {
    if zones.is_empty() {
        return vec![Rack {
            name: "rack1".into(),
            zone: None,
            nodes,
        }];
    }
    let count = zones.len();
    zones
        .iter()
        .enumerate()
        .map(|(i, zone)| Rack {
            name: format!("rack{}", i + 1),
            zone: Some(zone.clone()),
            nodes: nodes / count + usize::from(i < nodes % count),
        })
        .collect()
}

fn pod_labels(cluster: &str, datacenter: &str, rack: Option<&str>) -> Value {
    let mut labels = json!({
        "app.kubernetes.io/managed-by": "cqlbench",
        "cqlbench.io/cluster": cluster,
        "cqlbench.io/datacenter": datacenter,
        NAME_LABEL.0: NAME_LABEL.1,
    });
    if let Some(rack) = rack {
        labels["cqlbench.io/rack"] = json!(rack);
    }
    labels
}

/// The headless Service: one DNS name per pod, published before the pods are ready (the first pod is
/// its own seed and has to resolve itself while it starts).
pub fn service(plan: &K8sPlan, index: usize) -> Value {
    let (k8s, cluster) = (&plan.k8s, &plan.cluster_names[index]);
    json!({
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {
            "name": service_name(cluster, &k8s.datacenter),
            "namespace": k8s.namespace,
            "labels": pod_labels(cluster, &k8s.datacenter, None),
            "annotations": {"cqlbench.io/config": plan.plan.configs[index].name},
        },
        "spec": {
            "clusterIP": "None",
            "publishNotReadyAddresses": true,
            "selector": {
                "cqlbench.io/cluster": cluster,
                NAME_LABEL.0: NAME_LABEL.1,
            },
            "ports": [
                {"name": "cql", "port": CQL_PORT, "targetPort": CQL_PORT},
                {"name": "internode", "port": STORAGE_PORT, "targetPort": STORAGE_PORT},
            ],
        },
    })
}

/// The environment of a Cassandra container, in the official image's terms.
fn cassandra_env(plan: &K8sPlan, index: usize, rack: &Rack) -> Result<Vec<Value>, K8sError> {
    let (k8s, cluster) = (&plan.k8s, &plan.cluster_names[index]);
    let spec = &plan.plan.configs[index].spec;
    let all_racks = racks(&k8s.zones, spec.nodes);
    let first_rack = all_racks[0].name.clone();
    // The node index of this rack's pod 0: the nodes of the racks before it.
    let offset: usize = all_racks
        .iter()
        .take_while(|r| r.name != rack.name)
        .map(|r| r.nodes)
        .sum();
    // The first pod of the first rack, by its name in the headless Service (resolved through the pod's
    // DNS search path, whatever the cluster's domain).
    let seed = format!(
        "{}-0.{}",
        statefulset_name(cluster, &k8s.datacenter, &first_rack),
        service_name(cluster, &k8s.datacenter)
    );
    let mut jvm = server_jvm_options(spec, plan.jdk_majors[index])?;
    jvm.extend(
        cqlbench_cluster::jvm::FRESH_CLUSTER_JOIN
            .iter()
            .map(|f| f.to_string()),
    );
    let heap = cqlbench_units::format_jvm_size(spec.heap_bytes);
    let env = |name: &str, value: String| json!({"name": name, "value": value});
    Ok(vec![
        env("CASSANDRA_CLUSTER_NAME", cluster.clone()),
        env("CASSANDRA_SEEDS", seed),
        env("CASSANDRA_DC", k8s.datacenter.clone()),
        env("CASSANDRA_RACK", rack.name.clone()),
        env(
            "CASSANDRA_ENDPOINT_SNITCH",
            "GossipingPropertyFileSnitch".into(),
        ),
        env("MAX_HEAP_SIZE", heap),
        // Read by cassandra-env.sh only when CMS sets -Xmn, which cqlbench's CMS flags set themselves.
        env(
            "HEAP_NEWSIZE",
            cqlbench_units::format_jvm_size(spec.heap_bytes / 4),
        ),
        env("JVM_EXTRA_OPTS", jvm.join(" ")),
        // cqlbench's image gives every node its precomputed tokens from these (as `cluster up`
        // does); the official image ignores them.
        env(cqlbench_cluster::pod::NODES_ENV, spec.nodes.to_string()),
        env(cqlbench_cluster::pod::NODE_OFFSET_ENV, offset.to_string()),
        env(
            cqlbench_cluster::pod::STATEFULSET_ENV,
            statefulset_name(cluster, &k8s.datacenter, &rack.name),
        ),
    ])
}

/// One rack's StatefulSet: its pods start one at a time (each joins once the one before serves CQL),
/// and its volumes go with it, so the next configuration starts on empty disks as a local one does.
pub fn statefulset(
    plan: &K8sPlan,
    index: usize,
    rack: &Rack,
    image: &str,
) -> Result<Value, K8sError> {
    let (k8s, cluster) = (&plan.k8s, &plan.cluster_names[index]);
    let labels = pod_labels(cluster, &k8s.datacenter, Some(&rack.name));
    let resources = json!({
        "requests": {"cpu": k8s.cpu, "memory": k8s.memory},
        "limits": {"cpu": k8s.cpu, "memory": k8s.memory},
    });
    let mut pod_spec = json!({
        "securityContext": {"fsGroup": CASSANDRA_UID},
        "terminationGracePeriodSeconds": 60,
        "containers": [{
            "name": CASSANDRA_CONTAINER,
            "image": image,
            "imagePullPolicy": "IfNotPresent",
            "env": cassandra_env(plan, index, rack)?,
            "ports": [
                {"name": "cql", "containerPort": CQL_PORT},
                {"name": "internode", "containerPort": STORAGE_PORT},
            ],
            // Ready when it serves CQL; no liveness probe: a long GC pause must not restart the node.
            "readinessProbe": {
                "tcpSocket": {"port": CQL_PORT},
                "periodSeconds": 5,
                "failureThreshold": 3,
            },
            "resources": resources,
            "volumeMounts": [{"name": "data", "mountPath": "/var/lib/cassandra"}],
        }],
    });
    if let Some(zone) = &rack.zone {
        pod_spec["affinity"] = json!({"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [{"matchExpressions": [
                {"key": "topology.kubernetes.io/zone", "operator": "In", "values": [zone]},
            ]}],
        }}});
    }
    Ok(json!({
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {
            "name": statefulset_name(cluster, &k8s.datacenter, &rack.name),
            "namespace": k8s.namespace,
            "labels": labels,
            "annotations": {"cqlbench.io/config": plan.plan.configs[index].name},
        },
        "spec": {
            "serviceName": service_name(cluster, &k8s.datacenter),
            "replicas": rack.nodes,
            "podManagementPolicy": "OrderedReady",
            "selector": {"matchLabels": labels},
            "persistentVolumeClaimRetentionPolicy": {"whenDeleted": "Delete", "whenScaled": "Delete"},
            "template": {
                "metadata": {"labels": labels, "annotations": {"cqlbench.io/config": plan.plan.configs[index].name}},
                "spec": pod_spec,
            },
            "volumeClaimTemplates": [{
                "metadata": {"name": "data", "labels": labels},
                "spec": {
                    "storageClassName": k8s.storage_class,
                    "accessModes": ["ReadWriteOnce"],
                    "resources": {"requests": {"storage": k8s.storage_size}},
                },
            }],
        },
    }))
}

/// Where a StatefulSet stands: ready when its controller has seen its current spec and every replica
/// is ready.
pub fn statefulset_ready(object: &Value) -> Result<(), String> {
    let wanted = object["spec"]["replicas"].as_u64().unwrap_or(1);
    let status = &object["status"];
    let generation = object["metadata"]["generation"].as_u64().unwrap_or(0);
    let observed = status["observedGeneration"].as_u64().unwrap_or(0);
    let ready = status["readyReplicas"].as_u64().unwrap_or(0);
    if observed >= generation && ready >= wanted {
        Ok(())
    } else if observed < generation {
        Err("not seen by the StatefulSet controller yet".into())
    } else {
        Err(format!("{ready} of {wanted} pod(s) ready"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nodes_spread_over_racks_first_racks_first() {
        let zones: Vec<String> = ["a", "b", "c"].iter().map(|z| z.to_string()).collect();
        let spread: Vec<usize> = racks(&zones, 5).iter().map(|r| r.nodes).collect();
        assert_eq!(spread, [2, 2, 1]);
        let one = racks(&[], 3);
        assert_eq!(
            one,
            [Rack {
                name: "rack1".into(),
                zone: None,
                nodes: 3
            }]
        );
        assert_eq!(racks(&zones, 3)[2].zone.as_deref(), Some("c"));
    }

    #[test]
    fn ready_needs_the_current_generation_and_every_replica() {
        let sts = |generation: u64, observed: u64, ready: u64| {
            json!({"metadata": {"generation": generation}, "spec": {"replicas": 2},
                   "status": {"observedGeneration": observed, "readyReplicas": ready}})
        };
        assert_eq!(statefulset_ready(&sts(1, 1, 2)), Ok(()));
        assert_eq!(
            statefulset_ready(&sts(1, 1, 1)),
            Err("1 of 2 pod(s) ready".into())
        );
        assert_eq!(
            statefulset_ready(&sts(2, 1, 2)),
            Err("not seen by the StatefulSet controller yet".into())
        );
        assert!(statefulset_ready(
            &json!({"metadata": {"generation": 1}, "spec": {"replicas": 1}})
        )
        .is_err());
    }
}
