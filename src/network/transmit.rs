//! The write side of a connection: a response's parts go out in order, buffers with vectored
//! writes and file ranges with `sendfile(2)` straight from the page cache to the socket.

use std::io::{self, IoSlice};
use std::os::fd::AsFd;

use bytes::Bytes;
use tokio::io::{AsyncWriteExt, Interest};
use tokio::net::TcpStream;

use super::request::{FileRange, ResponsePart};

/// At most this many buffers go to one `writev` (Linux's IOV_MAX is 1024).
const MAX_IOVECS: usize = 64;

/// Writes every part in order. Consecutive buffer parts are written together, so a response of
/// a header and a few small pieces costs one system call.
pub(crate) async fn write_parts(stream: &mut TcpStream, parts: &[ResponsePart]) -> io::Result<()> {
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
async fn write_buffers(stream: &mut TcpStream, buffers: &[&Bytes]) -> io::Result<()> {
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
