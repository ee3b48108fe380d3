//! cqlbench-cluster: real local Apache Cassandra clusters on loopback, with a chosen Cassandra
//! version, JDK, garbage collector and heap.
//!
//! ```no_run
//! use cqlbench_cluster::{up, down, ClusterSpec, Home};
//! let home = Home::from_env();
//! let spec = ClusterSpec { name: "demo".into(), base_ip: "127.0.1.1".parse().unwrap(), ..ClusterSpec::default() };
//! let state = up(&home, &spec, &mut |line| eprintln!("{line}"))?;
//! println!("CQL at {:?}, PIDs {:?}", state.cql_contact_points(), state.pids());
//! down(&home, "demo", &mut |_| {})?;
//! # Ok::<(), cqlbench_cluster::ClusterError>(())
//! ```

pub mod compat;
pub mod config;
pub mod cql;
pub mod debian_jdk;
pub mod distribution;
pub mod error;
pub mod gc;
pub mod home;
pub mod jdk;
pub mod jvm;
pub mod lifecycle;
pub mod pod;
pub mod process;
pub mod scoped;
pub mod spec;
pub mod state;
pub mod tokens;
pub mod version;

pub use error::{ClusterError, Result};
pub use gc::{Gc, GcProfile, GcSettings};
pub use home::Home;
pub use jdk::{Jdk, JdkChoice};
pub use lifecycle::{
    destroy, down, kill_node, pause_node, resume_node, start_node, status, up, ClusterStatus,
    NodeStatus, Paused,
};
pub use process::ProcessState;
pub use scoped::{check_spec, interrupt, with_cluster};
pub use spec::{ClusterSpec, Datacenters, Placement, DEFAULT_CLUSTER_NAME};
pub use state::{ClusterState, NodeState};
pub use version::CassandraVersion;
