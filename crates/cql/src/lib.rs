//! cqlbench-cql: the part of the CQL native protocol (version 4) that the load path needs.
//!
//! A general driver spends work per request on things a benchmark does not need (retry policies,
//! load-balancing plans, metrics, cross-task channels). This crate only encodes and decodes frames:
//! [`frame`] builds STARTUP, AUTH_RESPONSE, PREPARE and EXECUTE requests and reads response headers and
//! error codes; [`handshake`] opens a blocking connection (plain or TLS), authenticates and prepares
//! statements. The caller owns the socket and the event loop.

pub mod frame;
pub mod handshake;

pub use frame::{
    applied, classify_error, error_code, execute_id, parse_header, parse_prepared,
    replace_execute_id, rows_page, with_paging_state, write_prepare, BatchKind, ErrorClass,
    ExecuteFrame, Header, Opcode, Prepared, RowsPage, ServerError, HEADER_LEN, MAX_STREAMS,
};
pub use handshake::{
    connect, prepare, ConnectOptions, Credentials, Stream, PASSWORD_VAR, USERNAME_VAR,
};

/// Why a connection could not be opened or a statement prepared.
#[derive(Debug, thiserror::Error)]
pub enum CqlError {
    #[error("{0}")]
    Io(#[from] std::io::Error),
    #[error("TLS: {0}")]
    Tls(String),
    #[error("protocol: {0}")]
    Protocol(String),
    #[error("server error 0x{code:04x}: {message}")]
    Server { code: i32, message: String },
    #[error("the server requires authentication ({0}); set CQLBENCH_USERNAME and CQLBENCH_PASSWORD or --credentials-file")]
    AuthRequired(String),
}
