//! Frame encoding and decoding for protocol version 4 (Cassandra 2.2 and later, ScyllaDB).
//!
//! A frame is a 9-byte header (version, flags, stream id, opcode, body length) and a body. Requests are
//! written straight into the caller's output buffer so that sending an operation allocates nothing.

/// Bytes in a frame header.
pub const HEADER_LEN: usize = 9;
/// Stream ids a v4 connection can have in flight (ids are non-negative `i16`s).
pub const MAX_STREAMS: usize = 32_768;

const VERSION_REQUEST: u8 = 0x04;
const VERSION_RESPONSE: u8 = 0x84;

const FLAG_TRACING: u8 = 0x02;
const FLAG_CUSTOM_PAYLOAD: u8 = 0x04;
const FLAG_WARNING: u8 = 0x08;

const EXECUTE_VALUES: u8 = 0x01;
const EXECUTE_SKIP_METADATA: u8 = 0x02;
const EXECUTE_PAGE_SIZE: u8 = 0x04;
const EXECUTE_PAGING_STATE: u8 = 0x08;
const EXECUTE_SERIAL_CONSISTENCY: u8 = 0x10;
/// BATCH flags: a serial consistency follows the consistency.
const BATCH_SERIAL_CONSISTENCY: u8 = 0x10;

/// The opcodes cqlbench sends or expects.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Opcode {
    Error = 0x00,
    Startup = 0x01,
    Ready = 0x02,
    Authenticate = 0x03,
    Query = 0x07,
    Result = 0x08,
    Prepare = 0x09,
    Execute = 0x0A,
    Event = 0x0C,
    Batch = 0x0D,
    AuthChallenge = 0x0E,
    AuthResponse = 0x0F,
    AuthSuccess = 0x10,
}

/// A decoded frame header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    pub version: u8,
    pub flags: u8,
    pub stream: i16,
    pub opcode: u8,
    pub length: usize,
}

impl Header {
    /// Total frame size, header included.
    pub fn frame_len(&self) -> usize {
        HEADER_LEN + self.length
    }

    pub fn is_response(&self) -> bool {
        self.version == VERSION_RESPONSE
    }
}

/// Reads a header from the start of `buf`, or `None` if fewer than 9 bytes are there.
pub fn parse_header(buf: &[u8]) -> Option<Header> {
    let h = buf.get(..HEADER_LEN)?;
    Some(Header {
        version: h[0],
        flags: h[1],
        stream: i16::from_be_bytes([h[2], h[3]]),
        opcode: h[4],
        length: u32::from_be_bytes([h[5], h[6], h[7], h[8]]) as usize,
    })
}

/// Appends a complete frame with the given body.
pub fn write_frame(out: &mut Vec<u8>, stream: i16, opcode: Opcode, body: &[u8]) {
    write_header(out, stream, opcode, body.len());
    out.extend_from_slice(body);
}

fn write_header(out: &mut Vec<u8>, stream: i16, opcode: Opcode, length: usize) {
    out.push(VERSION_REQUEST);
    out.push(0);
    out.extend_from_slice(&stream.to_be_bytes());
    out.push(opcode as u8);
    out.extend_from_slice(&(length as u32).to_be_bytes());
}

/// `[string]`: a u16 length and UTF-8 bytes.
pub fn put_string(out: &mut Vec<u8>, s: &str) {
    out.extend_from_slice(&(s.len() as u16).to_be_bytes());
    out.extend_from_slice(s.as_bytes());
}

/// `[long string]` / `[bytes]`: an i32 length and the bytes.
pub fn put_long_bytes(out: &mut Vec<u8>, b: &[u8]) {
    out.extend_from_slice(&(b.len() as i32).to_be_bytes());
    out.extend_from_slice(b);
}

/// The STARTUP body: `{CQL_VERSION: 3.0.0}` and the client's name.
pub fn startup_body() -> Vec<u8> {
    let mut body = Vec::new();
    body.extend_from_slice(&2u16.to_be_bytes());
    put_string(&mut body, "CQL_VERSION");
    put_string(&mut body, "3.0.0");
    put_string(&mut body, "DRIVER_NAME");
    put_string(&mut body, "cqlbench");
    body
}

/// The AUTH_RESPONSE body for SASL PLAIN (what `PasswordAuthenticator` expects).
pub fn plain_auth_body(username: &str, password: &str) -> Vec<u8> {
    let mut token = Vec::with_capacity(username.len() + password.len() + 2);
    token.push(0);
    token.extend_from_slice(username.as_bytes());
    token.push(0);
    token.extend_from_slice(password.as_bytes());
    let mut body = Vec::new();
    put_long_bytes(&mut body, &token);
    body
}

/// A complete PREPARE request for `cql` on `stream`.
pub fn write_prepare(out: &mut Vec<u8>, stream: i16, cql: &str) {
    write_header(out, stream, Opcode::Prepare, cql.len() + 4);
    put_long_bytes(out, cql.as_bytes());
}

/// A prepared statement's id and the positions of its partition-key values among the bound values.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Prepared {
    pub id: Vec<u8>,
    pub partition_key_indexes: Vec<u16>,
}

/// Decodes the body of a RESULT frame that answers a PREPARE.
pub fn parse_prepared(flags: u8, body: &[u8]) -> Result<Prepared, String> {
    let bad = || "malformed PREPARED result".to_string();
    let at = message_offset(flags, body).ok_or_else(bad)?;
    if read_i32(body, at) != Some(0x0004) {
        return Err("PREPARE did not return a prepared result".into());
    }
    let id_len = read_u16(body, at + 4).ok_or_else(bad)? as usize;
    let id = body.get(at + 6..at + 6 + id_len).ok_or_else(bad)?.to_vec();
    // Metadata: flags, column count, partition-key count, then the partition-key indexes.
    let meta = at + 6 + id_len;
    let pk_count = read_i32(body, meta + 8).ok_or_else(bad)?.max(0) as usize;
    let partition_key_indexes = (0..pk_count)
        .map(|i| read_u16(body, meta + 12 + 2 * i).ok_or_else(bad))
        .collect::<Result<_, _>>()?;
    Ok(Prepared {
        id,
        partition_key_indexes,
    })
}

/// Puts `id` in place of the statement id of the complete EXECUTE frame `frame` (another node, or the
/// same node after a re-prepare, may know the statement under another id).
pub fn replace_execute_id(frame: &mut Vec<u8>, id: &[u8]) {
    if frame.get(4) == Some(&(Opcode::Batch as u8)) {
        replace_batch_ids(frame, id);
        return;
    }
    let Some(old_len) = read_u16(frame, HEADER_LEN) else {
        return;
    };
    let old = HEADER_LEN + 2..HEADER_LEN + 2 + old_len as usize;
    if old.end > frame.len() || &frame[old.clone()] == id {
        return;
    }
    frame.splice(old, id.iter().copied());
    frame[HEADER_LEN..HEADER_LEN + 2].copy_from_slice(&(id.len() as u16).to_be_bytes());
    let length = (frame.len() - HEADER_LEN) as u32;
    frame[5..HEADER_LEN].copy_from_slice(&length.to_be_bytes());
}

/// [`replace_execute_id`] for a BATCH of one prepared statement: every child's id.
fn replace_batch_ids(frame: &mut Vec<u8>, id: &[u8]) {
    let mut ids = Vec::new();
    let Some(n) = read_u16(frame, HEADER_LEN + 1) else {
        return;
    };
    let mut at = HEADER_LEN + 3;
    for _ in 0..n {
        let Some(len) = read_u16(frame, at + 1) else {
            return;
        };
        let range = at + 3..at + 3 + len as usize;
        let Some(count) = read_u16(frame, range.end) else {
            return;
        };
        ids.push((at + 1, range.clone()));
        at = range.end + 2;
        for _ in 0..count {
            let Some(value_len) = read_i32(frame, at) else {
                return;
            };
            at += 4 + value_len.max(0) as usize;
        }
    }
    for (len_at, range) in ids.into_iter().rev() {
        frame.splice(range, id.iter().copied());
        frame[len_at..len_at + 2].copy_from_slice(&(id.len() as u16).to_be_bytes());
    }
    let length = (frame.len() - HEADER_LEN) as u32;
    frame[5..HEADER_LEN].copy_from_slice(&length.to_be_bytes());
}

/// What kind of BATCH a batched operation is sent as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BatchKind {
    Logged = 0,
    Unlogged = 1,
    Counter = 2,
}

/// The statement id an EXECUTE frame refers to.
pub fn execute_id(frame: &[u8]) -> Option<&[u8]> {
    let len = read_u16(frame, HEADER_LEN)? as usize;
    frame.get(HEADER_LEN + 2..HEADER_LEN + 2 + len)
}

/// An EXECUTE request being written into an output buffer: add the bound values in order, then
/// [`ExecuteFrame::finish`] fills in the counts and lengths.
pub struct ExecuteFrame<'a> {
    out: &'a mut Vec<u8>,
    id: &'a [u8],
    start: usize,
    count_at: usize,
    count: u16,
    consistency: u16,
    serial_consistency: u16,
    /// Where a BATCH's statement count sits, and the count so far.
    batch: Option<(usize, u16)>,
    page_size: Option<i32>,
}

impl<'a> ExecuteFrame<'a> {
    /// Starts `EXECUTE id` at `consistency` on `stream`. Results come back without column metadata
    /// (the load path does not decode rows).
    pub fn begin(
        out: &'a mut Vec<u8>,
        stream: i16,
        id: &'a [u8],
        consistency: u16,
        serial_consistency: u16,
    ) -> Self {
        let start = out.len();
        write_header(out, stream, Opcode::Execute, 0);
        out.extend_from_slice(&(id.len() as u16).to_be_bytes());
        out.extend_from_slice(id);
        out.extend_from_slice(&consistency.to_be_bytes());
        out.push(EXECUTE_VALUES | EXECUTE_SKIP_METADATA | EXECUTE_SERIAL_CONSISTENCY);
        let count_at = out.len();
        out.extend_from_slice(&0u16.to_be_bytes());
        ExecuteFrame {
            out,
            id,
            start,
            count_at,
            count: 0,
            consistency,
            serial_consistency,
            batch: None,
            page_size: None,
        }
    }

    /// Asks for results in pages of `rows` (an EXECUTE's, not a BATCH's; any time before
    /// [`ExecuteFrame::finish`]).
    pub fn page_size(&mut self, rows: i32) {
        if self.batch.is_none() {
            self.out[self.count_at - 1] |= EXECUTE_PAGE_SIZE;
            self.page_size = Some(rows);
        }
    }

    /// Makes the request a BATCH of the same prepared statement (before any value is added): the
    /// values added next are its first statement's, and [`ExecuteFrame::next_statement`] starts
    /// another.
    pub fn into_batch(&mut self, kind: BatchKind) {
        let stream = i16::from_be_bytes([self.out[self.start + 2], self.out[self.start + 3]]);
        self.out.truncate(self.start);
        write_header(self.out, stream, Opcode::Batch, 0);
        self.out.push(kind as u8);
        let n_at = self.out.len();
        self.out.extend_from_slice(&0u16.to_be_bytes());
        self.batch = Some((n_at, 0));
        self.begin_statement();
    }

    /// Starts the batch's next statement (its values follow).
    pub fn next_statement(&mut self) {
        self.close_statement();
        self.begin_statement();
    }

    fn begin_statement(&mut self) {
        self.out.push(1); // a prepared statement's id follows
        self.out
            .extend_from_slice(&(self.id.len() as u16).to_be_bytes());
        self.out.extend_from_slice(self.id);
        self.count_at = self.out.len();
        self.out.extend_from_slice(&0u16.to_be_bytes());
        self.count = 0;
        if let Some((_, n)) = &mut self.batch {
            *n += 1;
        }
    }

    fn close_statement(&mut self) {
        self.out[self.count_at..self.count_at + 2].copy_from_slice(&self.count.to_be_bytes());
    }

    /// Appends one bound value given as bytes; returns where its bytes sit in the buffer.
    pub fn value(&mut self, bytes: &[u8]) -> std::ops::Range<usize> {
        self.value_with(|out| out.extend_from_slice(bytes))
    }

    /// Appends one bound value written by `fill` (e.g. a number formatted in place, with no
    /// intermediate string); returns where its bytes sit in the buffer.
    pub fn value_with(&mut self, fill: impl FnOnce(&mut Vec<u8>)) -> std::ops::Range<usize> {
        let len_at = self.out.len();
        self.out.extend_from_slice(&0i32.to_be_bytes());
        fill(self.out);
        let len = self.out.len() - len_at - 4;
        self.out[len_at..len_at + 4].copy_from_slice(&(len as i32).to_be_bytes());
        self.count += 1;
        len_at + 4..self.out.len()
    }

    /// Completes the frame.
    pub fn finish(mut self) {
        if let Some((n_at, n)) = self.batch {
            self.close_statement();
            self.out[n_at..n_at + 2].copy_from_slice(&n.to_be_bytes());
            self.out.extend_from_slice(&self.consistency.to_be_bytes());
            self.out.push(BATCH_SERIAL_CONSISTENCY);
        } else if let Some(rows) = self.page_size {
            self.out.extend_from_slice(&rows.to_be_bytes());
        }
        self.out
            .extend_from_slice(&self.serial_consistency.to_be_bytes());
        self.out[self.count_at..self.count_at + 2].copy_from_slice(&self.count.to_be_bytes());
        let length = (self.out.len() - self.start - HEADER_LEN) as u32;
        self.out[self.start + 5..self.start + HEADER_LEN].copy_from_slice(&length.to_be_bytes());
    }
}

/// Where the message proper starts in a response body: after an optional tracing id, warnings
/// and custom payload, which the server puts first when the header's flags say so.
pub fn message_offset(flags: u8, body: &[u8]) -> Option<usize> {
    let mut at = 0;
    if flags & FLAG_TRACING != 0 {
        at += 16;
    }
    if flags & FLAG_WARNING != 0 {
        let n = read_u16(body, at)? as usize;
        at += 2;
        for _ in 0..n {
            at += 2 + read_u16(body, at)? as usize;
        }
    }
    if flags & FLAG_CUSTOM_PAYLOAD != 0 {
        let n = read_u16(body, at)? as usize;
        at += 2;
        for _ in 0..n {
            at += 2 + read_u16(body, at)? as usize;
            let len = read_i32(body, at)?;
            at += 4 + len.max(0) as usize;
        }
    }
    (at <= body.len()).then_some(at)
}

/// The error code of an ERROR response body (`None` if the body is too short to hold one).
pub fn error_code(flags: u8, body: &[u8]) -> Option<i32> {
    let at = message_offset(flags, body)?;
    read_i32(body, at)
}

/// A decoded ERROR response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerError {
    pub code: i32,
    pub message: String,
}

impl ServerError {
    pub fn decode(flags: u8, body: &[u8]) -> Option<ServerError> {
        let at = message_offset(flags, body)?;
        let code = read_i32(body, at)?;
        let message = read_string(body, at + 4).unwrap_or_default();
        Some(ServerError { code, message })
    }
}

/// How cqlbench counts a server error code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorClass {
    Timeout,
    Unavailable,
    Overloaded,
    Unprepared,
    Other,
}

/// Classifies an error code (protocol v4 spec section 9; 0xF000 is ScyllaDB's rate limit).
pub fn classify_error(code: i32) -> ErrorClass {
    match code {
        0x1100 | 0x1200 => ErrorClass::Timeout,
        0x1000 => ErrorClass::Unavailable,
        0x1001 | 0xF000 => ErrorClass::Overloaded,
        0x2500 => ErrorClass::Unprepared,
        _ => ErrorClass::Other,
    }
}

/// What a RESULT Rows body says before its rows: their number, where the first starts, and the
/// paging state when more pages follow.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RowsPage {
    pub rows: u32,
    pub columns: u32,
    /// Offset of the first row in the body.
    pub first_row: usize,
    /// The `[bytes]` to send back for the next page (its range in the body), when there is one.
    pub paging_state: Option<std::ops::Range<usize>>,
}

/// A RESULT Rows body's [`RowsPage`] (`None` for another kind of result, or a body too short to
/// say).
pub fn rows_page(flags: u8, body: &[u8]) -> Option<RowsPage> {
    const ROWS: i32 = 2;
    const GLOBAL_TABLE_SPEC: i32 = 0x0001;
    const HAS_MORE_PAGES: i32 = 0x0002;
    const NO_METADATA: i32 = 0x0004;
    let mut at = message_offset(flags, body)?;
    if read_i32(body, at)? != ROWS {
        return None;
    }
    let meta = read_i32(body, at + 4)?;
    let columns = read_i32(body, at + 8)?;
    at += 12;
    let mut paging_state = None;
    if meta & HAS_MORE_PAGES != 0 {
        let len = read_i32(body, at)?;
        if len >= 0 {
            paging_state = Some(at + 4..at + 4 + len as usize);
            body.get(at + 4..at + 4 + len as usize)?;
        }
        at += 4 + len.max(0) as usize;
    }
    if meta & NO_METADATA == 0 {
        if meta & GLOBAL_TABLE_SPEC != 0 {
            at = skip_string(body, at)?;
            at = skip_string(body, at)?;
        }
        for _ in 0..columns {
            if meta & GLOBAL_TABLE_SPEC == 0 {
                at = skip_string(body, skip_string(body, at)?)?;
            }
            at = skip_type(body, skip_string(body, at)?)?;
        }
    }
    let rows = read_i32(body, at)?;
    Some(RowsPage {
        rows: rows.max(0) as u32,
        columns: columns.max(0) as u32,
        first_row: at + 4,
        paging_state,
    })
}

impl RowsPage {
    /// A conditional statement's `[applied]`: the first column of the first row of `body`, the
    /// body this page was read from (`None` without rows, or a body too short to say).
    pub fn applied(&self, body: &[u8]) -> Option<bool> {
        if self.rows < 1 || self.columns < 1 {
            return None;
        }
        let at = self.first_row;
        let len = read_i32(body, at)?;
        (len == 1)
            .then(|| body.get(at + 4).map(|b| *b != 0))
            .flatten()
    }
}

/// A conditional statement's `[applied]` from a RESULT body (`None` for another kind of result, or a
/// body too short to say).
pub fn applied(flags: u8, body: &[u8]) -> Option<bool> {
    rows_page(flags, body)?.applied(body)
}

/// Writes into `out` the EXECUTE `request` asking for the page after `paging_state` (the state a
/// Rows result gave), in place of any paging state it carried. `None` if `request` is not an
/// EXECUTE that asks for pages.
pub fn with_paging_state(request: &[u8], paging_state: &[u8], out: &mut Vec<u8>) -> Option<()> {
    let header = parse_header(request)?;
    if header.opcode != Opcode::Execute as u8 || request.len() < header.frame_len() {
        return None;
    }
    let id_len = read_u16(request, HEADER_LEN)? as usize;
    let flags_at = HEADER_LEN + 2 + id_len + 2;
    let flags = *request.get(flags_at)?;
    if flags & EXECUTE_PAGE_SIZE == 0 {
        return None;
    }
    let mut at = flags_at + 1;
    if flags & EXECUTE_VALUES != 0 {
        let count = read_u16(request, at)?;
        at += 2;
        for _ in 0..count {
            at += 4 + read_i32(request, at)?.max(0) as usize;
        }
    }
    at += 4; // the page size
    let rest = if flags & EXECUTE_PAGING_STATE != 0 {
        at + 4 + read_i32(request, at)?.max(0) as usize
    } else {
        at
    };
    out.clear();
    out.extend_from_slice(request.get(..at)?);
    out[flags_at] |= EXECUTE_PAGING_STATE;
    out.extend_from_slice(&(paging_state.len() as i32).to_be_bytes());
    out.extend_from_slice(paging_state);
    out.extend_from_slice(request.get(rest..header.frame_len())?);
    let length = (out.len() - HEADER_LEN) as u32;
    out[5..HEADER_LEN].copy_from_slice(&length.to_be_bytes());
    Some(())
}

fn skip_string(b: &[u8], at: usize) -> Option<usize> {
    Some(at + 2 + read_u16(b, at)? as usize)
}

/// Skips a column type `[option]` (collections, UDTs and tuples nest).
fn skip_type(b: &[u8], at: usize) -> Option<usize> {
    let id = read_u16(b, at)?;
    let at = at + 2;
    match id {
        0x0000 => skip_string(b, at),
        0x0020 | 0x0022 => skip_type(b, at),
        0x0021 => skip_type(b, skip_type(b, at)?),
        0x0030 => {
            let mut at = skip_string(b, skip_string(b, at)?)?;
            let fields = read_u16(b, at)?;
            at += 2;
            for _ in 0..fields {
                at = skip_type(b, skip_string(b, at)?)?;
            }
            Some(at)
        }
        0x0031 => {
            let fields = read_u16(b, at)?;
            let mut at = at + 2;
            for _ in 0..fields {
                at = skip_type(b, at)?;
            }
            Some(at)
        }
        _ => Some(at),
    }
}

pub fn read_u16(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_be_bytes(b.get(at..at + 2)?.try_into().ok()?))
}

pub fn read_i32(b: &[u8], at: usize) -> Option<i32> {
    Some(i32::from_be_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

/// `[string]` at `at`.
pub fn read_string(b: &[u8], at: usize) -> Option<String> {
    let len = read_u16(b, at)? as usize;
    let bytes = b.get(at + 2..at + 2 + len)?;
    Some(String::from_utf8_lossy(bytes).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A RESULT Rows body: `[applied]` boolean, with or without metadata, then one more column.
    fn rows_body(applied: u8, metadata: bool) -> Vec<u8> {
        let mut b = Vec::new();
        b.extend_from_slice(&2i32.to_be_bytes());
        b.extend_from_slice(&(if metadata { 1i32 } else { 4 }).to_be_bytes());
        b.extend_from_slice(&2i32.to_be_bytes());
        if metadata {
            for s in ["ks", "t", "[applied]"] {
                put_string(&mut b, s);
            }
            b.extend_from_slice(&0x0004u16.to_be_bytes()); // boolean
            put_string(&mut b, "v");
            b.extend_from_slice(&0x0021u16.to_be_bytes()); // map<text, list<int>>
            b.extend_from_slice(&0x000Du16.to_be_bytes());
            b.extend_from_slice(&0x0020u16.to_be_bytes());
            b.extend_from_slice(&0x0009u16.to_be_bytes());
        }
        b.extend_from_slice(&1i32.to_be_bytes());
        b.extend_from_slice(&1i32.to_be_bytes());
        b.push(applied);
        b.extend_from_slice(&(-1i32).to_be_bytes());
        b
    }

    #[test]
    fn applied_is_read_from_the_first_column_with_or_without_metadata() {
        for metadata in [false, true] {
            assert_eq!(applied(0, &rows_body(1, metadata)), Some(true));
            assert_eq!(applied(0, &rows_body(0, metadata)), Some(false));
        }
        // A Void result (an unconditional write) says nothing.
        assert_eq!(applied(0, &1i32.to_be_bytes()), None);
        assert_eq!(applied(0, &rows_body(1, true)[..20]), None);
    }

    #[test]
    fn header_round_trips_through_a_frame() {
        let mut out = Vec::new();
        write_frame(&mut out, 7, Opcode::Startup, &startup_body());
        let h = parse_header(&out).unwrap();
        assert_eq!(h.version, 0x04);
        assert_eq!(h.stream, 7);
        assert_eq!(h.opcode, Opcode::Startup as u8);
        assert_eq!(h.frame_len(), out.len());
        assert!(parse_header(&out[..8]).is_none());
    }

    #[test]
    fn an_execute_frame_takes_another_statement_id() {
        let mut frame = Vec::new();
        let mut f = ExecuteFrame::begin(&mut frame, 5, &[1, 2, 3], 0x0001, 0x0009);
        f.value(b"key");
        f.finish();
        let mut expected = Vec::new();
        let mut f = ExecuteFrame::begin(&mut expected, 5, &[9; 16], 0x0001, 0x0009);
        f.value(b"key");
        f.finish();
        replace_execute_id(&mut frame, &[9; 16]);
        assert_eq!(frame, expected);
        assert_eq!(execute_id(&frame), Some(&[9u8; 16][..]));
        let h = parse_header(&frame).unwrap();
        assert_eq!(h.frame_len(), frame.len());
        // The same id again changes nothing.
        replace_execute_id(&mut frame, &[9; 16]);
        assert_eq!(frame, expected);
    }

    #[test]
    fn a_batch_repeats_one_prepared_statement_with_its_own_values() {
        // Statement 1 binds "a", statement 2 "bc" and "d".
        let batch = |id: &[u8]| {
            let mut frame = Vec::new();
            let mut f = ExecuteFrame::begin(&mut frame, 3, id, 0x0006, 0x0009);
            f.into_batch(BatchKind::Unlogged);
            f.value(b"a");
            f.next_statement();
            f.value(b"bc");
            f.value(b"d");
            f.finish();
            frame
        };
        let mut frame = batch(&[7; 4]);
        let h = parse_header(&frame).unwrap();
        assert_eq!((h.opcode, h.stream), (Opcode::Batch as u8, 3));
        assert_eq!(h.frame_len(), frame.len());
        let mut body = vec![1, 0, 2];
        body.extend_from_slice(&[1, 0, 4, 7, 7, 7, 7, 0, 1, 0, 0, 0, 1, b'a']);
        body.extend_from_slice(&[
            1, 0, 4, 7, 7, 7, 7, 0, 2, 0, 0, 0, 2, b'b', b'c', 0, 0, 0, 1, b'd',
        ]);
        body.extend_from_slice(&[0, 6, 0x10, 0, 9]);
        assert_eq!(&frame[HEADER_LEN..], &body[..]);
        // Another node's id for the statement replaces every child's.
        replace_execute_id(&mut frame, &[9; 16]);
        assert_eq!(frame, batch(&[9; 16]));
    }

    #[test]
    fn prepare_requests_and_prepared_results() {
        let mut out = Vec::new();
        write_prepare(&mut out, 12, "SELECT 1");
        let h = parse_header(&out).unwrap();
        assert_eq!((h.stream, h.opcode), (12, Opcode::Prepare as u8));
        assert_eq!(&out[HEADER_LEN..], b"\0\0\0\x08SELECT 1");
        // RESULT kind Prepared: id [short bytes], metadata flags, 2 columns, 1 pk at index 0.
        let mut body = vec![0, 0, 0, 4, 0, 2, 0xAB, 0xCD];
        body.extend_from_slice(&[0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 1, 0, 0]);
        let p = parse_prepared(0, &body).unwrap();
        assert_eq!(p.id, vec![0xAB, 0xCD]);
        assert_eq!(p.partition_key_indexes, vec![0]);
        assert!(parse_prepared(0, &[0, 0, 0, 1]).is_err());
        assert!(parse_prepared(0, &body[..7]).is_err());
    }

    #[test]
    fn execute_frame_lays_out_values_and_lengths() {
        let mut out = vec![0xAA]; // something already buffered before this frame
        let mut f = ExecuteFrame::begin(&mut out, 3, &[1, 2, 3], 0x0001, 0x0009);
        let key = f.value_with(|o| o.extend_from_slice(b"12345"));
        f.value(b"v");
        f.finish();
        assert_eq!(&out[key], b"12345");
        let frame = &out[1..];
        let h = parse_header(frame).unwrap();
        assert_eq!(h.opcode, Opcode::Execute as u8);
        assert_eq!(h.frame_len(), frame.len());
        let body = &frame[HEADER_LEN..];
        // id, consistency ONE, flags, 2 values, serial consistency LOCAL_SERIAL
        let expected: Vec<u8> = [
            &[0, 3, 1, 2, 3][..],
            &[0, 1],
            &[0x13],
            &[0, 2],
            &[0, 0, 0, 5],
            b"12345",
            &[0, 0, 0, 1],
            b"v",
            &[0, 9],
        ]
        .concat();
        assert_eq!(body, &expected[..]);
    }

    #[test]
    fn a_paged_execute_carries_its_page_size_then_each_next_pages_state() {
        let mut out = Vec::new();
        let mut f = ExecuteFrame::begin(&mut out, 0, &[7], 0x0001, 0x0009);
        f.value(b"k");
        f.page_size(100);
        f.finish();
        let body = |frame: &[u8]| frame[HEADER_LEN..].to_vec();
        let first: Vec<u8> = [
            &[0, 1, 7][..],
            &[0, 1],
            &[0x17],
            &[0, 1],
            &[0, 0, 0, 1],
            b"k",
            &[0, 0, 0, 100],
            &[0, 9],
        ]
        .concat();
        assert_eq!(body(&out), first);
        // The second page: the state after the page size, the flag set.
        let mut second = Vec::new();
        with_paging_state(&out, b"abc", &mut second).unwrap();
        assert_eq!(parse_header(&second).unwrap().frame_len(), second.len());
        let mut expected = first.clone();
        expected[5] = 0x1F;
        expected.splice(17..17, [0, 0, 0, 3, b'a', b'b', b'c']);
        assert_eq!(body(&second), expected);
        // The third replaces the second's state.
        let mut third = Vec::new();
        with_paging_state(&second, b"z", &mut third).unwrap();
        let mut expected = first.clone();
        expected[5] = 0x1F;
        expected.splice(17..17, [0, 0, 0, 1, b'z']);
        assert_eq!(body(&third), expected);
        // A request that asks for no pages has no next page.
        let mut unpaged = Vec::new();
        ExecuteFrame::begin(&mut unpaged, 0, &[7], 1, 9).finish();
        assert_eq!(with_paging_state(&unpaged, b"s", &mut third), None);
    }

    #[test]
    fn a_rows_result_tells_its_row_count_and_paging_state() {
        // Rows, flags HAS_MORE_PAGES | NO_METADATA, 2 columns, state "st", 3 rows.
        let mut b = Vec::new();
        b.extend_from_slice(&2i32.to_be_bytes());
        b.extend_from_slice(&6i32.to_be_bytes());
        b.extend_from_slice(&2i32.to_be_bytes());
        b.extend_from_slice(&2i32.to_be_bytes());
        b.extend_from_slice(b"st");
        b.extend_from_slice(&3i32.to_be_bytes());
        let page = rows_page(0, &b).unwrap();
        assert_eq!((page.rows, page.columns, page.first_row), (3, 2, 22));
        assert_eq!(&b[page.paging_state.unwrap()], b"st");
        // The last page has no state; a Void result is not rows.
        b[7] = 4;
        b.drain(12..18);
        assert_eq!(rows_page(0, &b).unwrap().paging_state, None);
        assert_eq!(rows_page(0, &1i32.to_be_bytes()), None);
    }

    #[test]
    fn error_body_is_found_after_warnings_and_tracing() {
        let mut body = vec![9u8; 16]; // tracing id
        body.extend_from_slice(&1u16.to_be_bytes());
        put_string(&mut body, "Aggregation query used without partition key");
        body.extend_from_slice(&0x1100i32.to_be_bytes());
        put_string(&mut body, "Operation timed out");
        let flags = FLAG_TRACING | FLAG_WARNING;
        assert_eq!(error_code(flags, &body), Some(0x1100));
        let e = ServerError::decode(flags, &body).unwrap();
        assert_eq!(e.message, "Operation timed out");
        assert_eq!(classify_error(e.code), ErrorClass::Timeout);
        // Truncated bodies give None rather than a panic.
        assert_eq!(error_code(flags, &body[..10]), None);
        assert_eq!(error_code(FLAG_WARNING, &[0xFF, 0xFF]), None);
    }

    #[test]
    fn error_codes_map_to_the_counted_kinds() {
        assert_eq!(classify_error(0x1000), ErrorClass::Unavailable);
        assert_eq!(classify_error(0x1001), ErrorClass::Overloaded);
        assert_eq!(classify_error(0x1200), ErrorClass::Timeout);
        assert_eq!(classify_error(0x2500), ErrorClass::Unprepared);
        assert_eq!(classify_error(0x2200), ErrorClass::Other);
    }
}
