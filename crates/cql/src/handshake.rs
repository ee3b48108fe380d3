//! Opening a connection: TCP (optionally TLS), STARTUP, SASL PLAIN authentication, PREPARE.
//! These steps are blocking and happen before measuring; the returned [`Stream`] is then handed to
//! the caller's non-blocking event loop.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::os::fd::{AsRawFd, RawFd};
use std::time::Duration;

use openssl::ssl::{Ssl, SslContext, SslStream};

use crate::frame::{
    self, parse_header, plain_auth_body, put_long_bytes, startup_body, write_frame, Opcode,
    Prepared, ServerError, HEADER_LEN,
};
use crate::CqlError;

/// User name and password for `PasswordAuthenticator`: the one credentials type of cqlbench, used by
/// the cluster helpers, the load's driver session and this client alike.
#[derive(Clone, PartialEq, Eq)]
pub struct Credentials {
    pub username: String,
    pub password: String,
}

/// The environment variables every cqlbench command reads credentials from.
pub const USERNAME_VAR: &str = "CQLBENCH_USERNAME";
pub const PASSWORD_VAR: &str = "CQLBENCH_PASSWORD";

impl Credentials {
    /// `CQLBENCH_USERNAME` and `CQLBENCH_PASSWORD`: `Ok(None)` when neither is set (or the user name
    /// is empty), an error naming the missing one when only one is.
    pub fn from_env() -> Result<Option<Credentials>, String> {
        let get = |name: &str| std::env::var(name).ok();
        match (
            get(USERNAME_VAR).filter(|u| !u.is_empty()),
            get(PASSWORD_VAR),
        ) {
            (Some(username), Some(password)) => Ok(Some(Credentials { username, password })),
            (Some(_), None) | (None, Some(_)) => Err(format!(
                "set both {USERNAME_VAR} and {PASSWORD_VAR}, or neither"
            )),
            (None, None) => Ok(None),
        }
    }
}

impl std::fmt::Debug for Credentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Credentials({}, ***)", self.username)
    }
}

/// How to open connections.
#[derive(Clone)]
pub struct ConnectOptions {
    /// For the TCP connect and each handshake step.
    pub timeout: Duration,
    pub credentials: Option<Credentials>,
    pub tls: Option<SslContext>,
    /// The keyspace each connection `USE`s once ready (statements written without one run there).
    pub keyspace: Option<String>,
}

/// A connection's byte stream, plain or TLS.
#[derive(Debug)]
pub enum Stream {
    Plain(TcpStream),
    Tls(Box<SslStream<TcpStream>>),
}

impl Stream {
    pub fn tcp(&self) -> &TcpStream {
        match self {
            Stream::Plain(s) => s,
            Stream::Tls(s) => s.get_ref(),
        }
    }

    pub fn is_tls(&self) -> bool {
        matches!(self, Stream::Tls(_))
    }

    pub fn set_nonblocking(&self, on: bool) -> std::io::Result<()> {
        self.tcp().set_nonblocking(on)
    }
}

impl AsRawFd for Stream {
    fn as_raw_fd(&self) -> RawFd {
        self.tcp().as_raw_fd()
    }
}

impl Read for Stream {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        match self {
            Stream::Plain(s) => s.read(buf),
            Stream::Tls(s) => s.read(buf),
        }
    }
}

impl Write for Stream {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match self {
            Stream::Plain(s) => s.write(buf),
            Stream::Tls(s) => s.write(buf),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match self {
            Stream::Plain(s) => s.flush(),
            Stream::Tls(s) => s.flush(),
        }
    }
}

/// Opens a ready (started and authenticated) connection to `addr`, in blocking mode.
pub fn connect(addr: SocketAddr, options: &ConnectOptions) -> Result<Stream, CqlError> {
    let tcp = TcpStream::connect_timeout(&addr, options.timeout)?;
    tcp.set_nodelay(true)?;
    tcp.set_read_timeout(Some(options.timeout))?;
    tcp.set_write_timeout(Some(options.timeout))?;
    let mut stream = match &options.tls {
        None => Stream::Plain(tcp),
        Some(context) => {
            let tls_error = |e: openssl::error::ErrorStack| CqlError::Tls(e.to_string());
            let mut ssl = Ssl::new(context).map_err(tls_error)?;
            // Like the driver: the certificate must name the address connected to.
            ssl.param_mut().set_ip(addr.ip()).map_err(tls_error)?;
            let tls = ssl.connect(tcp).map_err(|e| CqlError::Tls(e.to_string()))?;
            Stream::Tls(Box::new(tls))
        }
    };
    let (header, body) = round_trip(&mut stream, Opcode::Startup, &startup_body())?;
    match header.opcode {
        op if op == Opcode::Ready as u8 => {}
        op if op == Opcode::Authenticate as u8 => {
            let authenticator = frame::read_string(&body, 0).unwrap_or_default();
            let Some(credentials) = &options.credentials else {
                return Err(CqlError::AuthRequired(authenticator));
            };
            authenticate(&mut stream, credentials)?;
        }
        _ => return Err(unexpected(&header, &body, "READY or AUTHENTICATE")),
    }
    if let Some(keyspace) = &options.keyspace {
        use_keyspace(&mut stream, keyspace)?;
    }
    Ok(stream)
}

/// `USE keyspace` on this connection (blocking).
fn use_keyspace(stream: &mut Stream, keyspace: &str) -> Result<(), CqlError> {
    // Unquoted, as the keyspace was created.
    let cql = format!("USE {keyspace}");
    let mut body = Vec::with_capacity(cql.len() + 7);
    put_long_bytes(&mut body, cql.as_bytes());
    body.extend_from_slice(&1u16.to_be_bytes()); // consistency ONE (unused by USE)
    body.push(0); // no flags
    let (header, reply) = round_trip(stream, Opcode::Query, &body)?;
    if header.opcode == Opcode::Result as u8 {
        Ok(())
    } else {
        Err(unexpected(&header, &reply, "RESULT"))
    }
}

fn authenticate(stream: &mut Stream, credentials: &Credentials) -> Result<(), CqlError> {
    let body = plain_auth_body(&credentials.username, &credentials.password);
    let (header, reply) = round_trip(stream, Opcode::AuthResponse, &body)?;
    if header.opcode == Opcode::AuthSuccess as u8 {
        Ok(())
    } else {
        Err(unexpected(&header, &reply, "AUTH_SUCCESS"))
    }
}

/// Prepares `cql` on this connection (blocking).
pub fn prepare(stream: &mut Stream, cql: &str) -> Result<Prepared, CqlError> {
    let mut body = Vec::with_capacity(cql.len() + 4);
    put_long_bytes(&mut body, cql.as_bytes());
    let (header, reply) = round_trip(stream, Opcode::Prepare, &body)?;
    if header.opcode != Opcode::Result as u8 {
        return Err(unexpected(&header, &reply, "RESULT"));
    }
    frame::parse_prepared(header.flags, &reply).map_err(CqlError::Protocol)
}

/// Sends one request on stream 0 and reads frames until its response (skipping events).
fn round_trip(
    stream: &mut Stream,
    opcode: Opcode,
    body: &[u8],
) -> Result<(frame::Header, Vec<u8>), CqlError> {
    let mut out = Vec::with_capacity(HEADER_LEN + body.len());
    write_frame(&mut out, 0, opcode, body);
    stream.write_all(&out)?;
    loop {
        let mut head = [0u8; HEADER_LEN];
        stream.read_exact(&mut head)?;
        let header =
            parse_header(&head).ok_or_else(|| CqlError::Protocol("short frame header".into()))?;
        if !header.is_response() {
            return Err(CqlError::Protocol(format!(
                "the server answered with protocol version byte 0x{:02x}; cqlbench speaks protocol v4",
                header.version
            )));
        }
        if header.length > 256 << 20 {
            return Err(CqlError::Protocol(format!(
                "frame of {} bytes",
                header.length
            )));
        }
        let mut reply = vec![0u8; header.length];
        stream.read_exact(&mut reply)?;
        if header.stream == 0 {
            return Ok((header, reply));
        }
    }
}

fn unexpected(header: &frame::Header, body: &[u8], wanted: &str) -> CqlError {
    if header.opcode == Opcode::Error as u8 {
        if let Some(e) = ServerError::decode(header.flags, body) {
            return CqlError::Server {
                code: e.code,
                message: e.message,
            };
        }
    }
    CqlError::Protocol(format!(
        "expected {wanted}, got opcode 0x{:02x}",
        header.opcode
    ))
}
