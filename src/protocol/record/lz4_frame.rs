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
//! Only independent-block frames without a dictionary are decoded here; [`decode`] returns
//! `None` for anything else so the caller can use the general decoder. Checksums are not
//! verified: the batch CRC-32C already covers the compressed bytes.

const MAGIC: u32 = 0x184D_2204;

/// The outcome of decoding a whole stream of frames.
#[derive(Debug)]
pub(super) enum Lz4Outcome {
    Ok(Vec<u8>),
    TooLarge,
    Corrupt(&'static str),
}

fn le_u32(b: &[u8], at: usize) -> Option<u32> {
    let s = b.get(at..at + 4)?;
    Some(u32::from_le_bytes([s[0], s[1], s[2], s[3]]))
}

/// Decodes `data`, never holding more than `max_output` bytes of output. `None`: a frame this
/// decoder does not handle (dependent blocks, dictionary, unknown magic).
pub(super) fn decode(data: &[u8], max_output: usize) -> Option<Lz4Outcome> {
    let mut out: Vec<u8> = Vec::new();
    let mut filled = 0usize;
    let mut pos = 0usize;
    while pos < data.len() {
        if le_u32(data, pos)? != MAGIC {
            return None;
        }
        let flg = *data.get(pos + 4)?;
        let bd = *data.get(pos + 5)?;
        let independent = flg & 0x20 != 0;
        if flg >> 6 != 0b01 || !independent || flg & 0x01 != 0 {
            return None;
        }
        let block_checksum = flg & 0x10 != 0;
        let content_size = flg & 0x08 != 0;
        let content_checksum = flg & 0x04 != 0;
        let block_max = match (bd >> 4) & 0x07 {
            4 => 64 << 10,
            5 => 256 << 10,
            6 => 1 << 20,
            7 => 4 << 20,
            _ => return Some(Lz4Outcome::Corrupt("invalid lz4 block size")),
        };
        pos += 6 + if content_size { 8 } else { 0 } + 1;
        loop {
            let Some(word) = le_u32(data, pos) else {
                return Some(Lz4Outcome::Corrupt("truncated lz4 block header"));
            };
            pos += 4;
            if word == 0 {
                break;
            }
            let stored = word & 0x8000_0000 != 0;
            let len = (word & 0x7fff_ffff) as usize;
            if len > block_max {
                return Some(Lz4Outcome::Corrupt(
                    "lz4 block larger than the frame allows",
                ));
            }
            let Some(block) = data.get(pos..pos + len) else {
                return Some(Lz4Outcome::Corrupt("truncated lz4 block"));
            };
            pos += len + if block_checksum { 4 } else { 0 };
            let room = max_output - filled;
            if stored {
                if len > room {
                    return Some(Lz4Outcome::TooLarge);
                }
                out.truncate(filled);
                out.extend_from_slice(block);
                filled += len;
                continue;
            }
            // Guess a typical ratio first, so small batches do not zero a whole 64 KiB block;
            // retry at the bound when the guess was short.
            let bound = block_max.min(room);
            let mut size = len.saturating_mul(6).max(4096).min(bound);
            loop {
                if out.len() < filled + size {
                    out.resize(filled + size, 0);
                }
                match lz4_flex::block::decompress_into(block, &mut out[filled..filled + size]) {
                    Ok(n) => {
                        filled += n;
                        break;
                    }
                    Err(lz4_flex::block::DecompressError::OutputTooSmall { .. })
                        if size < bound =>
                    {
                        size = bound;
                    }
                    Err(lz4_flex::block::DecompressError::OutputTooSmall { .. })
                        if bound < block_max =>
                    {
                        return Some(Lz4Outcome::TooLarge);
                    }
                    Err(_) => return Some(Lz4Outcome::Corrupt("invalid lz4 block")),
                }
            }
        }
        if content_checksum {
            pos += 4;
        }
    }
    out.truncate(filled);
    Some(Lz4Outcome::Ok(out))
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
        let Some(Lz4Outcome::Ok(out)) = decode(&z, 1 << 20) else {
            panic!("not decoded");
        };
        assert_eq!(&out[..data.len()], &data[..]);
        assert_eq!(&out[data.len()..], b"tail");
        assert!(matches!(decode(&z, data.len()), Some(Lz4Outcome::TooLarge)));
    }

    #[test]
    fn leaves_linked_frames_to_the_general_decoder() {
        use lz4_flex::frame::{BlockMode, FrameInfo};
        let z = frame(&text(1000), FrameInfo::new().block_mode(BlockMode::Linked));
        assert!(decode(&z, 1 << 20).is_none());
        assert!(decode(b"nope", 10).is_none());
    }

    #[test]
    fn incompressible_blocks_are_stored() {
        let data: Vec<u8> = (0..5000u32)
            .map(|i| (i.wrapping_mul(2654435761) >> 13) as u8)
            .collect();
        let z = frame(&data, lz4_flex::frame::FrameInfo::new());
        let Some(Lz4Outcome::Ok(out)) = decode(&z, 5000) else {
            panic!("not decoded");
        };
        assert_eq!(out, data);
        assert!(matches!(decode(&z, 4999), Some(Lz4Outcome::TooLarge)));
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
            if let Some(Lz4Outcome::Ok(out)) = decode(&m, 30_000) {
                assert!(out.len() <= 30_000);
            }
        }
    }
}
