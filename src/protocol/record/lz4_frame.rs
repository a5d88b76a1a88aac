//! A direct LZ4 frame decoder for the frames Kafka writes, decoding each block straight into
//! the capped output instead of through `lz4_flex::frame::FrameDecoder`'s internal buffers
//! (which cost two 64 KiB+ allocations per batch).
//!
//! Frame format (lz4 spec): magic `0x184D2204` (LE), FLG (version 01, block independence,
//! block checksum, content size, content checksum, dict id), BD (max block size 64 KiB..4 MiB),
//! optional 8-byte content size and 4-byte dict id, 1 header-checksum byte; then blocks
//! `[u32 LE size, high bit = stored uncompressed][data][4-byte checksum if flagged]` up to a zero
//! size, then a 4-byte content checksum if flagged. Frames may be concatenated.
//!
//! Only independent-block frames without a dictionary are decoded here; [`decode`] and
//! [`Lz4Blocks`] (the block-at-a-time form that `record_stream` uses) stop at the first frame
//! of any other kind, so that the caller can hand the rest to the general decoder. Checksums are not verified: the batch CRC-32C already covers the compressed
//! bytes.

const MAGIC: u32 = 0x184D_2204;

/// The outcome of decoding a whole stream of frames.
#[derive(Debug)]
pub(super) enum Lz4Outcome {
    Ok(Vec<u8>),
    /// The frames before byte `rest` of the input decoded to `out`; the frame at `rest` is one
    /// this decoder does not handle, for the general decoder to continue from.
    Partial {
        out: Vec<u8>,
        rest: usize,
    },
    TooLarge,
    Corrupt(&'static str),
}

/// What [`Lz4Blocks::next_block`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Lz4Step {
    /// This many bytes were decoded (possibly 0, for an empty block).
    Block(usize),
    /// Every frame has been decoded.
    End,
    /// The frame at [`Lz4Blocks::rest`] is not one this decoder handles (or the bytes there do
    /// not start a frame); nothing of it was consumed.
    Unsupported,
    /// The next block would take the output past the caller's room.
    TooLarge,
    Corrupt(&'static str),
}

/// The flags of the frame being decoded that matter between blocks.
#[derive(Debug, Clone, Copy)]
struct Frame {
    block_checksum: bool,
    content_checksum: bool,
    block_max: usize,
}

/// A stream of frames decoded one block at a time, so a caller can hold one block of output
/// rather than the whole stream (`record_stream` walks records that way).
#[derive(Debug)]
pub(super) struct Lz4Blocks<'a> {
    data: &'a [u8],
    pos: usize,
    /// The frame whose blocks are being read; `None` between frames.
    frame: Option<Frame>,
}

fn le_u32(b: &[u8], at: usize) -> Option<u32> {
    let s = b.get(at..at.checked_add(4)?)?;
    Some(u32::from_le_bytes([s[0], s[1], s[2], s[3]]))
}

impl<'a> Lz4Blocks<'a> {
    pub(super) fn new(data: &'a [u8]) -> Self {
        Lz4Blocks {
            data,
            pos: 0,
            frame: None,
        }
    }

    /// The input from the current position: after [`Lz4Step::Unsupported`], the frame the
    /// general decoder must take over from.
    pub(super) fn rest(&self) -> &'a [u8] {
        self.data.get(self.pos..).unwrap_or_default()
    }

    /// The current position in the input.
    pub(super) fn position(&self) -> usize {
        self.pos
    }

    /// Reads the frame header at `pos`. `None`: not a frame this decoder handles, `pos` kept.
    fn frame_header(&mut self) -> Option<Result<Frame, &'static str>> {
        let (data, pos) = (self.data, self.pos);
        if le_u32(data, pos)? != MAGIC {
            return None;
        }
        let flg = *data.get(pos + 4)?;
        let bd = *data.get(pos + 5)?;
        let independent = flg & 0x20 != 0;
        if flg >> 6 != 0b01 || !independent || flg & 0x01 != 0 {
            return None;
        }
        let content_size = flg & 0x08 != 0;
        let block_max = match (bd >> 4) & 0x07 {
            4 => 64 << 10,
            5 => 256 << 10,
            6 => 1 << 20,
            7 => 4 << 20,
            _ => return Some(Err("invalid lz4 block size")),
        };
        self.pos = pos + 6 + if content_size { 8 } else { 0 } + 1;
        Some(Ok(Frame {
            block_checksum: flg & 0x10 != 0,
            content_checksum: flg & 0x04 != 0,
            block_max,
        }))
    }

    /// Decodes the next block into `out[filled..]`, growing `out` as needed (bytes past
    /// `filled` may be overwritten), producing at most `room` bytes.
    pub(super) fn next_block(&mut self, out: &mut Vec<u8>, filled: usize, room: usize) -> Lz4Step {
        let data = self.data;
        // Past frame headers and end marks to the next block (or the end).
        let (frame, word) = loop {
            let Some(frame) = self.frame else {
                if self.pos >= data.len() {
                    return Lz4Step::End;
                }
                match self.frame_header() {
                    Some(Ok(f)) => self.frame = Some(f),
                    Some(Err(reason)) => return Lz4Step::Corrupt(reason),
                    None => return Lz4Step::Unsupported,
                }
                continue;
            };
            let Some(word) = le_u32(data, self.pos) else {
                return Lz4Step::Corrupt("truncated lz4 block header");
            };
            self.pos += 4;
            if word != 0 {
                break (frame, word);
            }
            if frame.content_checksum {
                self.pos += 4;
            }
            self.frame = None;
        };
        let stored = word & 0x8000_0000 != 0;
        let len = (word & 0x7fff_ffff) as usize;
        if len > frame.block_max {
            return Lz4Step::Corrupt("lz4 block larger than the frame allows");
        }
        let Some(block) = data.get(self.pos..self.pos + len) else {
            return Lz4Step::Corrupt("truncated lz4 block");
        };
        self.pos += len + if frame.block_checksum { 4 } else { 0 };
        if stored {
            if len > room {
                return Lz4Step::TooLarge;
            }
            out.truncate(filled);
            out.extend_from_slice(block);
            return Lz4Step::Block(len);
        }
        // Guess a typical ratio first, so small batches do not zero a whole 64 KiB block;
        // retry at the bound when the guess was short.
        let bound = frame.block_max.min(room);
        let mut size = len.saturating_mul(6).max(4096).min(bound);
        loop {
            if out.len() < filled + size {
                out.resize(filled + size, 0);
            }
            match lz4_flex::block::decompress_into(block, &mut out[filled..filled + size]) {
                Ok(n) => return Lz4Step::Block(n),
                Err(lz4_flex::block::DecompressError::OutputTooSmall { .. }) if size < bound => {
                    size = bound;
                }
                Err(lz4_flex::block::DecompressError::OutputTooSmall { .. })
                    if bound < frame.block_max =>
                {
                    return Lz4Step::TooLarge;
                }
                Err(_) => return Lz4Step::Corrupt("invalid lz4 block"),
            }
        }
    }
}

/// Decodes `data`, never holding more than `max_output` bytes of output, up to the first frame
/// this decoder does not handle (dependent blocks, dictionary, unknown magic), if any.
pub(super) fn decode(data: &[u8], max_output: usize) -> Lz4Outcome {
    let mut out: Vec<u8> = Vec::new();
    let mut filled = 0usize;
    let mut blocks = Lz4Blocks::new(data);
    loop {
        match blocks.next_block(&mut out, filled, max_output.saturating_sub(filled)) {
            Lz4Step::Block(n) => filled += n,
            Lz4Step::End => break,
            Lz4Step::Unsupported => {
                out.truncate(filled);
                return Lz4Outcome::Partial {
                    out,
                    rest: blocks.position(),
                };
            }
            Lz4Step::TooLarge => return Lz4Outcome::TooLarge,
            Lz4Step::Corrupt(reason) => return Lz4Outcome::Corrupt(reason),
        }
    }
    out.truncate(filled);
    Lz4Outcome::Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn frame(data: &[u8], info: lz4_flex::frame::FrameInfo) -> Vec<u8> {
        let mut enc = lz4_flex::frame::FrameEncoder::with_frame_info(info, Vec::new());
        enc.write_all(data).unwrap();
        enc.finish().unwrap()
    }

    fn text(n: usize) -> Vec<u8> {
        (0..n)
            .map(|i| b"{\"id\":1,\"x\":\"abc\"}"[i % 18] ^ (i / 977) as u8)
            .collect()
    }

    #[test]
    fn decodes_independent_frames_with_checksums_and_sizes() {
        use lz4_flex::frame::{BlockMode, BlockSize, FrameInfo};
        let data = text(300_000);
        let info = FrameInfo::new()
            .block_mode(BlockMode::Independent)
            .block_size(BlockSize::Max64KB)
            .block_checksums(true)
            .content_checksum(true)
            .content_size(Some(data.len() as u64));
        let mut z = frame(&data, info);
        // Two frames back to back decode as one stream.
        z.extend(frame(
            b"tail",
            FrameInfo::new().block_mode(BlockMode::Independent),
        ));
        let Lz4Outcome::Ok(out) = decode(&z, 1 << 20) else {
            panic!("not decoded");
        };
        assert_eq!(&out[..data.len()], &data[..]);
        assert_eq!(&out[data.len()..], b"tail");
        assert!(matches!(decode(&z, data.len()), Lz4Outcome::TooLarge));
    }

    #[test]
    fn leaves_linked_frames_to_the_general_decoder() {
        use lz4_flex::frame::{BlockMode, FrameInfo};
        let z = frame(&text(1000), FrameInfo::new().block_mode(BlockMode::Linked));
        assert!(
            matches!(decode(&z, 1 << 20), Lz4Outcome::Partial { ref out, rest: 0 } if out.is_empty())
        );
        assert!(matches!(
            decode(b"nope", 10),
            Lz4Outcome::Partial { rest: 0, .. }
        ));
        // After frames it handles, it hands over at the first one it does not.
        let mut two = frame(
            b"first",
            FrameInfo::new().block_mode(BlockMode::Independent),
        );
        let first_len = two.len();
        two.extend_from_slice(&z);
        let Lz4Outcome::Partial { out, rest } = decode(&two, 1 << 20) else {
            panic!("not partial");
        };
        assert_eq!((out.as_slice(), rest), (&b"first"[..], first_len));
    }

    #[test]
    fn incompressible_blocks_are_stored() {
        let data: Vec<u8> = (0..5000u32)
            .map(|i| (i.wrapping_mul(2654435761) >> 13) as u8)
            .collect();
        let z = frame(&data, lz4_flex::frame::FrameInfo::new());
        let Lz4Outcome::Ok(out) = decode(&z, 5000) else {
            panic!("not decoded");
        };
        assert_eq!(out, data);
        assert!(matches!(decode(&z, 4999), Lz4Outcome::TooLarge));
    }

    #[test]
    fn every_prefix_and_flipped_byte_is_handled() {
        let data = text(20_000);
        let z = frame(&data, lz4_flex::frame::FrameInfo::new());
        for cut in 0..z.len() {
            let _ = decode(&z[..cut], 1 << 20);
        }
        for i in 0..z.len() {
            let mut m = z.clone();
            m[i] ^= 0xa5;
            if let Lz4Outcome::Ok(out) = decode(&m, 30_000) {
                assert!(out.len() <= 30_000);
            }
        }
    }
}
