//! cqlbench-k8s: a campaign plan with a `[k8s]` table rendered as Kubernetes manifests, and run.
//!
//! Per configuration, with `operator = "statefulset"`: a headless Service and a StatefulSet per rack (see
//! [`statefulset`]). With K8ssandra (the default): a `K8ssandraCluster` (k8ssandra.io/v1alpha1) whose heap and collector apply on every
//! Cassandra version (the collector flags go to `jvmOptions.additionalOptions`, which cassandra-env.sh reads
//! after the JDK-specific options file, because `jvmOptions.gc` is ignored on Cassandra 5.0/JDK 17), and one
//! `batch/v1` Job per cell with `completionMode: Indexed`, one pod per client.
//!
//! ```no_run
//! let plan = cqlbench_k8s::load_plan(std::path::Path::new("examples/k8s-gc.toml"))?;
//! let files = cqlbench_k8s::render(&plan, &cqlbench_k8s::RenderOptions::default())?;
//! cqlbench_k8s::write(&files, std::path::Path::new("manifests"))?;
//! # Ok::<(), cqlbench_k8s::K8sError>(())
//! ```

pub mod api;
pub mod collect;
pub mod delete;
pub mod error;
pub mod names;
pub mod plan;
pub mod quantity;
pub mod render;
pub mod run;
pub mod statefulset;
pub mod yaml;

pub use error::K8sError;
/// The Kubernetes client `k8s run` and `k8s delete` take (kube-rs).
pub use kube::Client;
pub use plan::{load_plan, parse_plan, Backend, K8sPlan, K8sSettings};
pub use render::{render, write, Manifest, RenderOptions};
