//! `cqlbench k8s delete`: removes what a plan's manifests and `k8s run` create (load Jobs with their pods,
//! the datacenters, the results volume and the pod that reads it) through the Kubernetes API, and
//! waits until each is gone. The namespace is kept: it may hold other things.

use std::time::{Duration, Instant};

use kube::api::{Api, DeleteParams, DynamicObject, PropagationPolicy};
use kube::Client;

use crate::api::dynamic_api;

use crate::error::K8sError;
use crate::plan::K8sPlan;
use crate::render::{render, Manifest, RenderOptions};

/// One object the plan's manifests name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ObjectRef {
    pub api_version: String,
    pub kind: String,
    pub namespace: String,
    pub name: String,
}

impl std::fmt::Display for ObjectRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}/{}", self.kind, self.namespace, self.name)
    }
}

/// What `delete` did.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Deleted {
    /// Objects that existed and are gone now.
    pub deleted: Vec<String>,
    /// Objects that did not exist.
    pub absent: Vec<String>,
}

/// The namespaced objects of a plan in deletion order: `k8s run`'s fetch pod and the Jobs first (nothing
/// should load a cluster that is going away), then the datacenters (K8ssandraClusters, or StatefulSets and
/// their Services), then the results volume.
pub fn objects(plan: &K8sPlan) -> Result<Vec<ObjectRef>, K8sError> {
    let manifests = render(plan, &RenderOptions::default())?;
    let rank = |kind: &str| match kind {
        "Job" => 0,
        "K8ssandraCluster" | "StatefulSet" => 1,
        "Service" => 2,
        _ => 3,
    };
    let mut objects: Vec<ObjectRef> = manifests
        .iter()
        .filter(|m| m.object["kind"] != "Namespace")
        .map(object_ref)
        .collect();
    objects.sort_by_key(|o| rank(&o.kind));
    // `k8s run`'s reader of the results volume, if a run stopped before removing it: it would hold the
    // claim (pvc-protection) for as long as it lives.
    objects.insert(
        0,
        ObjectRef {
            api_version: "v1".into(),
            kind: "Pod".into(),
            namespace: plan.k8s.namespace.clone(),
            name: crate::collect::FETCH_POD.into(),
        },
    );
    Ok(objects)
}

fn object_ref(manifest: &Manifest) -> ObjectRef {
    let text = |value: &serde_json::Value| value.as_str().unwrap_or_default().to_string();
    let object = &manifest.object;
    ObjectRef {
        api_version: text(&object["apiVersion"]),
        kind: text(&object["kind"]),
        namespace: text(&object["metadata"]["namespace"]),
        name: text(&object["metadata"]["name"]),
    }
}

fn api(client: &Client, object: &ObjectRef) -> Api<DynamicObject> {
    dynamic_api(
        client,
        &object.api_version,
        &object.kind,
        Some(&object.namespace),
    )
}

fn kube_error(object: &ObjectRef, what: &str, source: kube::Error) -> K8sError {
    K8sError::kube(&format!("{what} {object}"), &source)
}

/// Deletes every object of the plan (Jobs with background propagation, so their pods go too) and waits up
/// to `timeout` until all are gone. Objects held by finalizers (the operator's on a K8ssandraCluster, the
/// volume protection on a claim still mounted) are waited for; past `timeout` the error names each one
/// left and its finalizers.
pub async fn delete(
    client: &Client,
    plan: &K8sPlan,
    timeout: Duration,
    progress: &mut dyn FnMut(&str),
) -> Result<Deleted, K8sError> {
    let params = DeleteParams {
        propagation_policy: Some(PropagationPolicy::Background),
        ..DeleteParams::default()
    };
    let mut outcome = Deleted::default();
    let mut pending = Vec::new();
    for object in objects(plan)? {
        let api = api(client, &object);
        match api.delete(&object.name, &params).await {
            Ok(_) => {
                progress(&format!("deleting {object}"));
                pending.push(object);
            }
            Err(kube::Error::Api(status)) if status.code == 404 => {
                outcome.absent.push(object.to_string());
            }
            Err(error) => return Err(kube_error(&object, "deleting", error)),
        }
    }
    let deadline = Instant::now() + timeout;
    loop {
        let mut left = Vec::new();
        for object in pending {
            match api(client, &object).get_opt(&object.name).await {
                Ok(None) => {
                    progress(&format!("deleted {object}"));
                    outcome.deleted.push(object.to_string());
                }
                Ok(Some(found)) => {
                    left.push((object, found.metadata.finalizers.unwrap_or_default()))
                }
                Err(error) => return Err(kube_error(&object, "reading", error)),
            }
        }
        if left.is_empty() {
            return Ok(outcome);
        }
        if Instant::now() >= deadline {
            let held: Vec<String> = left
                .iter()
                .map(|(object, finalizers)| {
                    if finalizers.is_empty() {
                        object.to_string()
                    } else {
                        format!("{object} (finalizers: {})", finalizers.join(", "))
                    }
                })
                .collect();
            return Err(K8sError::Kube(format!(
                "still there after {} s: {}",
                timeout.as_secs(),
                held.join("; ")
            )));
        }
        pending = left.into_iter().map(|(object, _)| object).collect();
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}
