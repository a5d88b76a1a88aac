//! The write side of a connection: a response's parts go out in order, buffers with vectored
//! writes and file ranges with `sendfile(2)` straight from the page cache to the socket.
//!
//! On TLS the kernel cannot encrypt, so the response is staged in the connection's
//! [`TlsStaging`] ([`TLS_CHUNK`] bytes at most): small buffer parts are copied in, file ranges
//! read into it with `pread`, and each full buffer is written through the TLS stream, so rustls
//! gets whole records instead of one per small part; the response is flushed at its end.
//! The plaintext path is chosen once per response
//! and is the same code as without TLS.

use std::io::{self, IoSlice};
use std::os::fd::AsFd;
use std::os::unix::fs::FileExt;

use bytes::Bytes;
use tokio::io::{AsyncWrite, AsyncWriteExt, Interest};
use tokio::net::TcpStream;

use super::request::{FileRange, ResponsePart};
use super::stream::ConnectionStream;

/// At most this many buffers go to one `writev` (Linux's IOV_MAX is 1024).
const MAX_IOVECS: usize = 64;

/// The staging buffer's size on a TLS connection: four full TLS records, so rustls is fed whole
/// records without holding much memory per connection.
pub(crate) const TLS_CHUNK: usize = 64 * 1024;

/// A TLS connection's staging buffer: allocated ([`TLS_CHUNK`] bytes) on its first response,
/// then reused. Invariant: `filled <= bytes.len()`, and `bytes[..filled]` is what is staged.
#[derive(Debug, Default)]
pub(crate) struct TlsStaging {
    bytes: Vec<u8>,
    filled: usize,
}

impl TlsStaging {
    /// Writes what is staged through `out` and empties the buffer.
    async fn drain<W: AsyncWrite + Unpin>(&mut self, out: &mut W) -> io::Result<()> {
        let staged = &self.bytes[..self.filled];
        self.filled = 0;
        out.write_all(staged).await
    }
}

/// Writes every part in order, by the stream's kind: see the module doc.
pub(crate) async fn write_parts(
    stream: &mut ConnectionStream,
    parts: &[ResponsePart],
    staging: &mut TlsStaging,
) -> io::Result<()> {
    match stream {
        ConnectionStream::Plain(tcp) => write_parts_plain(tcp, parts).await,
        ConnectionStream::Tls(tls) => write_parts_staged(tls.as_mut(), parts, staging).await,
    }
}

/// The copying path for TLS (see the module doc).
async fn write_parts_staged<W: AsyncWrite + Unpin>(
    out: &mut W,
    parts: &[ResponsePart],
    staging: &mut TlsStaging,
) -> io::Result<()> {
    if staging.bytes.len() < TLS_CHUNK {
        staging.bytes.resize(TLS_CHUNK, 0);
    }
    staging.filled = 0;
    for part in parts {
        match part {
            ResponsePart::Bytes(bytes) => {
                if staging.filled + bytes.len() > TLS_CHUNK {
                    staging.drain(out).await?;
                }
                if bytes.len() >= TLS_CHUNK {
                    out.write_all(bytes).await?;
                } else {
                    let at = staging.filled;
                    staging.bytes[at..at + bytes.len()].copy_from_slice(bytes);
                    staging.filled += bytes.len();
                }
            }
            ResponsePart::File(range) => copy_file_range(out, range, staging).await?,
        }
    }
    staging.drain(out).await?;
    out.flush().await
}

/// Reads `range` from its file into the staging buffer, writing the buffer through `out` each
/// time it is full; what is left stays staged.
async fn copy_file_range<W: AsyncWrite + Unpin>(
    out: &mut W,
    range: &FileRange,
    staging: &mut TlsStaging,
) -> io::Result<()> {
    let mut position = range.position;
    let end = range
        .position
        .checked_add(range.len)
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "file range beyond u64"))?;
    while position < end {
        if staging.filled == TLS_CHUNK {
            staging.drain(out).await?;
        }
        let at = staging.filled;
        let want = usize::try_from(end - position)
            .unwrap_or(usize::MAX)
            .min(TLS_CHUNK - at);
        // A page-cache read, as the read side of sendfile is; it never waits on the peer.
        let read = range
            .file
            .read_at(&mut staging.bytes[at..at + want], position)?;
        if read == 0 {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "file shorter than the response's file range",
            ));
        }
        staging.filled += read;
        position += read as u64;
    }
    Ok(())
}

/// The plaintext path: consecutive buffer parts are written together, so a response of a
/// header and a few small pieces costs one system call, and file ranges go by `sendfile(2)`.
async fn write_parts_plain(stream: &mut TcpStream, parts: &[ResponsePart]) -> io::Result<()> {
    let mut at = 0;
    while at < parts.len() {
        let run_end = parts[at..]
            .iter()
            .position(|p| matches!(p, ResponsePart::File(_)))
            .map_or(parts.len(), |i| at + i);
        if run_end > at {
            let buffers: Vec<&Bytes> = parts[at..run_end]
                .iter()
                .filter_map(|p| match p {
                    ResponsePart::Bytes(b) if !b.is_empty() => Some(b),
                    _ => None,
                })
                .collect();
            write_buffers(stream, &buffers).await?;
            at = run_end;
        } else if let ResponsePart::File(range) = &parts[at] {
            send_file_range(stream, range).await?;
            at += 1;
        }
    }
    Ok(())
}

/// `write_all` over several buffers with `writev`, resuming after partial writes.
async fn write_buffers<W: AsyncWrite + Unpin>(
    stream: &mut W,
    buffers: &[&Bytes],
) -> io::Result<()> {
    if let [one] = buffers {
        return stream.write_all(one).await;
    }
    let mut index = 0;
    let mut offset = 0; // into buffers[index]
    while index < buffers.len() {
        let slices: Vec<IoSlice<'_>> = buffers[index..]
            .iter()
            .take(MAX_IOVECS)
            .enumerate()
            .map(|(i, b)| IoSlice::new(if i == 0 { &b[offset..] } else { &b[..] }))
            .collect();
        let mut written = stream.write_vectored(&slices).await?;
        if written == 0 {
            return Err(io::ErrorKind::WriteZero.into());
        }
        while index < buffers.len() && written > 0 {
            let left = buffers[index].len() - offset;
            if written >= left {
                written -= left;
                index += 1;
                offset = 0;
            } else {
                offset += written;
                written = 0;
            }
        }
    }
    Ok(())
}

/// Sends `range` from its file with `sendfile(2)`, waiting for the socket to be writable between
/// partial sends. The kernel advances the file offset variable, never the file's own position, so
/// one `File` may serve many connections at once.
async fn send_file_range(stream: &TcpStream, range: &FileRange) -> io::Result<()> {
    let too_far = || io::Error::new(io::ErrorKind::InvalidInput, "file range beyond i64");
    let mut offset = i64::try_from(range.position).map_err(|_| too_far())?;
    let end = range
        .position
        .checked_add(range.len)
        .and_then(|end| i64::try_from(end).ok())
        .ok_or_else(too_far)?;
    while offset < end {
        stream.writable().await?;
        let count = usize::try_from(end - offset).unwrap_or(usize::MAX);
        let sent = stream.try_io(Interest::WRITABLE, || {
            nix::sys::sendfile::sendfile(
                stream.as_fd(),
                range.file.as_fd(),
                Some(&mut offset),
                count,
            )
            .map_err(io::Error::from)
        });
        match sent {
            // The file ended before the range did: the response would be corrupt.
            Ok(0) => {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "file shorter than the response's file range",
                ));
            }
            Ok(_) => {}
            // try_io cleared the readiness; wait for the next writable edge.
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::io::Write;
    use std::sync::Arc;

    use super::*;

    fn file_with(bytes: &[u8]) -> Arc<std::fs::File> {
        let mut file = tempfile::tempfile().unwrap();
        file.write_all(bytes).unwrap();
        Arc::new(file)
    }

    /// The staged path writes exactly the parts' bytes in order, whatever their sizes relative
    /// to the staging buffer, and reuses one buffer across responses.
    #[tokio::test]
    async fn staged_parts_come_out_in_order() {
        let content: Vec<u8> = (0..3 * TLS_CHUNK + 17).map(|i| (i % 251) as u8).collect();
        let file = file_with(&content);
        let big = Bytes::from(vec![9u8; TLS_CHUNK + 5]);
        let parts = vec![
            ResponsePart::Bytes(Bytes::from_static(b"head")),
            ResponsePart::File(FileRange {
                file: Arc::clone(&file),
                position: 3,
                len: (2 * TLS_CHUNK + 1) as u64,
            }),
            ResponsePart::Bytes(Bytes::from_static(b"mid")),
            ResponsePart::Bytes(big.clone()),
            ResponsePart::File(FileRange {
                file: Arc::clone(&file),
                position: 0,
                len: 10,
            }),
            ResponsePart::Bytes(Bytes::new()),
        ];
        let mut want = b"head".to_vec();
        want.extend_from_slice(&content[3..3 + 2 * TLS_CHUNK + 1]);
        want.extend_from_slice(b"mid");
        want.extend_from_slice(&big);
        want.extend_from_slice(&content[..10]);
        let mut staging = TlsStaging::default();
        for _ in 0..2 {
            let mut out = Vec::new();
            write_parts_staged(&mut out, &parts, &mut staging)
                .await
                .unwrap();
            assert_eq!(out, want);
            assert_eq!(staging.bytes.len(), TLS_CHUNK);
        }
    }

    #[tokio::test]
    async fn a_file_shorter_than_its_range_fails() {
        let file = file_with(b"short");
        let parts = vec![ResponsePart::File(FileRange {
            file,
            position: 2,
            len: 10,
        })];
        let mut out = Vec::new();
        let err = write_parts_staged(&mut out, &parts, &mut TlsStaging::default())
            .await
            .unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::UnexpectedEof);
    }
}
