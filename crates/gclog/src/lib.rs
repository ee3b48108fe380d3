//! cqlbench-gclog
