//! cqlbench-load
