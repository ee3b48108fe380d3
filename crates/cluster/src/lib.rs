//! cqlbench-cluster
