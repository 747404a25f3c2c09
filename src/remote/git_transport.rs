//! gix's transport with the packet lines it reads counted (issue 21 M4): gix keeps every ref a
//! server advertises in memory, and a server can advertise millions. Pack data is read as bytes,
//! not lines, and is bounded by the pack limit instead; what is read line by line (the ref
//! advertisement of protocol v0/v1 and v2's `ls-refs`, acknowledgements, shallow lines) stops
//! at [`MAX_LINES`] lines or [`MAX_LINE_BYTES`] bytes with an I/O error that names the bound.
//! Also what the fetch watches while the pack comes in: the heap ([`anon_memory`], issue 21 H5)
//! and the bytes on disk ([`dir_size`]).

use std::borrow::Cow;
use std::io;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use gix::bstr::BStr;
use gix::protocol::transport::Protocol;
use gix::protocol::transport::client::blocking_io::{
    ExtendedBufRead, HandleProgress, ReadlineBufRead, RequestWriter, SetServiceResponse, Transport,
};
use gix::protocol::transport::client::{Error, MessageKind, TransportWithoutIO, WriteMode};
use gix::protocol::transport::packetline::PacketLineRef;

/// Packet lines one fetch may read (refs, mostly): a catalog repository advertises a few for
/// the prefixes asked for.
pub(super) const MAX_LINES: u64 = 100_000;
/// Bytes of packet lines one fetch may read.
pub(super) const MAX_LINE_BYTES: u64 = 16 * 1024 * 1024;

/// What one fetch has read line by line, and whether it ran out.
#[derive(Default)]
pub(super) struct Budget {
    lines: AtomicU64,
    bytes: AtomicU64,
    exhausted: AtomicBool,
}

impl Budget {
    /// Whether a line was refused.
    pub(super) fn exhausted(&self) -> bool {
        self.exhausted.load(Ordering::Relaxed)
    }

    /// Count a line of `len` bytes; past a bound, the error that ends the read.
    fn charge(&self, len: usize) -> io::Result<()> {
        let lines = self.lines.fetch_add(1, Ordering::Relaxed) + 1;
        let bytes = self.bytes.fetch_add(len as u64, Ordering::Relaxed) + len as u64;
        if lines > MAX_LINES || bytes > MAX_LINE_BYTES {
            self.exhausted.store(true, Ordering::Relaxed);
            return Err(io::Error::other(format!(
                "the server sent more than {MAX_LINES} ref lines or {MAX_LINE_BYTES} bytes of them"
            )));
        }
        Ok(())
    }
}

/// A transport whose responses are [`Counted`].
pub(super) struct Bounded {
    pub(super) inner: Box<dyn Transport + Send>,
    pub(super) budget: Arc<Budget>,
}

impl TransportWithoutIO for Bounded {
    fn set_identity(&mut self, identity: gix::sec::identity::Account) -> Result<(), Error> {
        self.inner.set_identity(identity)
    }

    fn to_url(&self) -> Cow<'_, BStr> {
        self.inner.to_url()
    }

    fn supported_protocol_versions(&self) -> &[Protocol] {
        self.inner.supported_protocol_versions()
    }

    fn connection_persists_across_multiple_requests(&self) -> bool {
        self.inner.connection_persists_across_multiple_requests()
    }

    fn configure(&mut self, config: &dyn std::any::Any) -> gix::error::Result {
        self.inner.configure(config)
    }
}

impl Transport for Bounded {
    fn handshake<'a>(
        &mut self,
        service: gix::protocol::transport::Service,
        extra_parameters: &'a [(&'a str, Option<&'a str>)],
    ) -> Result<SetServiceResponse<'_>, Error> {
        let budget = self.budget.clone();
        let mut response = self.inner.handshake(service, extra_parameters)?;
        response.refs = response.refs.map(|refs| {
            Box::new(Counted {
                inner: refs,
                budget,
            }) as Box<dyn ReadlineBufRead + '_>
        });
        Ok(response)
    }

    fn request(
        &mut self,
        write_mode: WriteMode,
        on_into_read: MessageKind,
        trace: bool,
    ) -> Result<RequestWriter<'_>, Error> {
        let budget = self.budget.clone();
        let (writer, reader) = self
            .inner
            .request(write_mode, on_into_read, trace)?
            .into_parts();
        Ok(RequestWriter::new_from_bufread(
            writer,
            Box::new(Counted {
                inner: reader,
                budget,
            }),
            write_mode,
            on_into_read,
            trace,
        ))
    }
}

/// A response whose packet lines are charged to the fetch's [`Budget`]; bytes read as bytes
/// (the pack) pass through.
struct Counted<R> {
    inner: R,
    budget: Arc<Budget>,
}

impl<R: io::Read> io::Read for Counted<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.inner.read(buf)
    }
}

impl<R: io::BufRead> io::BufRead for Counted<R> {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        self.inner.fill_buf()
    }

    fn consume(&mut self, amount: usize) {
        self.inner.consume(amount);
    }
}

impl<R: ReadlineBufRead> ReadlineBufRead for Counted<R> {
    fn readline(&mut self) -> Option<io::Result<gix::error::Result<PacketLineRef<'_>>>> {
        let line = self.inner.readline();
        let len = match &line {
            Some(Ok(Ok(PacketLineRef::Data(data)))) => data.len(),
            _ => 0,
        };
        if let Err(err) = self.budget.charge(len) {
            return Some(Err(err));
        }
        line
    }

    fn readline_str(&mut self, line: &mut String) -> io::Result<usize> {
        let read = self.inner.readline_str(line)?;
        self.budget.charge(read)?;
        Ok(read)
    }
}

impl<'a, R: ExtendedBufRead<'a>> ExtendedBufRead<'a> for Counted<R> {
    fn set_progress_handler(&mut self, handle_progress: Option<HandleProgress<'a>>) {
        self.inner.set_progress_handler(handle_progress);
    }

    fn peek_data_line(&mut self) -> Option<io::Result<Result<&[u8], Error>>> {
        self.inner.peek_data_line()
    }

    fn reset(&mut self, version: Protocol) {
        self.inner.reset(version);
    }

    fn stopped_at(&self) -> Option<MessageKind> {
        self.inner.stopped_at()
    }
}

/// The process's anonymous resident memory (`RssAnon` of `/proc/self/status`: the heap, not
/// the pack mapped from disk); `None` where there is no such file.
pub(super) fn anon_memory() -> Option<u64> {
    let status = fs_err::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("RssAnon:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib.saturating_mul(1024))
}

/// Bytes under `dir` (the pack being received), depth-bounded, links not followed.
pub(super) fn dir_size(dir: &std::path::Path, depth: usize) -> u64 {
    let Ok(entries) = fs_err::read_dir(dir) else {
        return 0;
    };
    entries
        .flatten()
        .map(|e| match e.file_type() {
            Ok(t) if t.is_dir() && depth < 4 => dir_size(&e.path(), depth + 1),
            Ok(t) if t.is_file() => e.metadata().map_or(0, |m| m.len()),
            _ => 0,
        })
        .sum()
}
