//! Kafka's compression codecs with capped decompression.
//!
//! Wire formats, as the Java client writes them:
//! - gzip: RFC 1952 members (decoded as a multi-member stream).
//! - snappy: xerial framing: the 16-byte header `\x82SNAPPY\0`, version `1` and compatible
//!   version `1` (big-endian i32s), then blocks `[u32 BE length][raw snappy block]` of at most
//!   32 KiB of input each. librdkafka sends plain raw snappy, so decoding accepts both.
//! - lz4: the LZ4 frame format (64 KiB independent blocks, no checksums, as Kafka writes).
//! - zstd: standard frames, which may lack the content size, so decoding streams.
//!
//! Decompression never holds more than `max_output + 1` bytes of output: every codec is read
//! through a bounded reader, and snappy block lengths are checked against the cap before any
//! allocation. zstd also keeps a window of up to the frame's declared window size, whatever the
//! output cap; `zstd_decoder` limits that to [`ZSTD_WINDOW_LOG_MAX`].

use std::fmt;
use std::io::{Read, Write};

use super::error::RecordError;
use super::lz4_frame::Lz4Outcome;

/// Kafka's compression codecs, numbered as in the batch attributes (bits 0..=2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CompressionType {
    None,
    Gzip,
    Snappy,
    Lz4,
    Zstd,
}

impl CompressionType {
    /// Every codec, in id order.
    pub const ALL: [CompressionType; 5] = [
        CompressionType::None,
        CompressionType::Gzip,
        CompressionType::Snappy,
        CompressionType::Lz4,
        CompressionType::Zstd,
    ];

    /// The id stored in the attributes.
    pub fn id(self) -> u8 {
        match self {
            CompressionType::None => 0,
            CompressionType::Gzip => 1,
            CompressionType::Snappy => 2,
            CompressionType::Lz4 => 3,
            CompressionType::Zstd => 4,
        }
    }

    /// The codec with the given id; 5..=7 are not defined by Kafka.
    pub fn from_id(id: u8) -> Result<Self, RecordError> {
        match id {
            0 => Ok(CompressionType::None),
            1 => Ok(CompressionType::Gzip),
            2 => Ok(CompressionType::Snappy),
            3 => Ok(CompressionType::Lz4),
            4 => Ok(CompressionType::Zstd),
            other => Err(RecordError::UnknownCompression(other)),
        }
    }

    /// Kafka's name, as in `compression.type`.
    pub fn name(self) -> &'static str {
        match self {
            CompressionType::None => "none",
            CompressionType::Gzip => "gzip",
            CompressionType::Snappy => "snappy",
            CompressionType::Lz4 => "lz4",
            CompressionType::Zstd => "zstd",
        }
    }
}

impl fmt::Display for CompressionType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The first 8 bytes of a xerial snappy stream.
const XERIAL_MAGIC: [u8; 8] = [0x82, b'S', b'N', b'A', b'P', b'P', b'Y', 0];
/// Xerial header: magic, version 1, minimum compatible version 1.
const XERIAL_HEADER_LEN: usize = 16;
/// snappy-java's default block size, which Kafka's producer uses.
const XERIAL_BLOCK: usize = 32 * 1024;

pub(super) fn codec_err(
    op: &'static str,
    codec: CompressionType,
    e: impl fmt::Display,
) -> RecordError {
    RecordError::Codec {
        op,
        codec: codec.name(),
        reason: e.to_string(),
    }
}

/// The largest zstd window kcli decodes: 2^24 bytes (16 MiB), so each concurrent zstd decode
/// holds at most that much window whatever a frame declares (zstd's own default limit is 2^27).
/// Every standard compression level (1 to 19) compresses with a window of at most 2^23, so only
/// the "ultra" levels 20 to 22 of a streaming producer go beyond; such a batch is refused as
/// corrupt, with zstd's "Frame requires too much memory" in the message.
pub const ZSTD_WINDOW_LOG_MAX: u32 = 24;

/// A streaming zstd decoder over `data` whose window is limited to [`ZSTD_WINDOW_LOG_MAX`].
pub(super) fn zstd_decoder(
    data: &[u8],
) -> std::io::Result<zstd::stream::read::Decoder<'static, &[u8]>> {
    let mut decoder = zstd::stream::read::Decoder::with_buffer(data)?;
    decoder.window_log_max(ZSTD_WINDOW_LOG_MAX)?;
    Ok(decoder)
}

/// Compresses `data` as Kafka's Java producer would.
pub fn compress(codec: CompressionType, data: &[u8]) -> Result<Vec<u8>, RecordError> {
    let mut compressor = Compressor::new(codec)?;
    compressor.write(data)?;
    compressor.finish()
}

/// A codec's stream encoder, writing what Kafka's Java producer writes (see the module doc):
/// bytes go in by [`write`](Compressor::write) as they are produced, and
/// [`finish`](Compressor::finish) returns the compressed stream, so a caller never holds the
/// uncompressed whole.
pub struct Compressor {
    codec: CompressionType,
    encoder: Encoder,
}

impl fmt::Debug for Compressor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Compressor")
            .field("codec", &self.codec)
            .finish_non_exhaustive()
    }
}

/// Xerial framing: `pending` collects up to one 32 KiB block of input.
struct XerialEncoder {
    out: Vec<u8>,
    pending: Vec<u8>,
    raw: snap::raw::Encoder,
}

enum Encoder {
    None(Vec<u8>),
    Gzip(flate2::write::GzEncoder<Vec<u8>>),
    Snappy(Box<XerialEncoder>),
    Lz4(Box<lz4_flex::frame::FrameEncoder<Vec<u8>>>),
    Zstd(zstd::stream::write::Encoder<'static, Vec<u8>>),
}

impl Compressor {
    pub fn new(codec: CompressionType) -> Result<Self, RecordError> {
        let encoder = match codec {
            CompressionType::None => Encoder::None(Vec::new()),
            CompressionType::Gzip => Encoder::Gzip(flate2::write::GzEncoder::new(
                Vec::new(),
                flate2::Compression::default(),
            )),
            CompressionType::Snappy => {
                let mut out = Vec::with_capacity(XERIAL_HEADER_LEN + XERIAL_BLOCK);
                out.extend_from_slice(&XERIAL_MAGIC);
                out.extend_from_slice(&1i32.to_be_bytes());
                out.extend_from_slice(&1i32.to_be_bytes());
                Encoder::Snappy(Box::new(XerialEncoder {
                    out,
                    pending: Vec::with_capacity(XERIAL_BLOCK),
                    raw: snap::raw::Encoder::new(),
                }))
            }
            CompressionType::Lz4 => {
                let info = lz4_flex::frame::FrameInfo::new()
                    .block_size(lz4_flex::frame::BlockSize::Max64KB)
                    .block_mode(lz4_flex::frame::BlockMode::Independent);
                Encoder::Lz4(Box::new(lz4_flex::frame::FrameEncoder::with_frame_info(
                    info,
                    Vec::new(),
                )))
            }
            // Kafka's default zstd level is 3, as is zstd's.
            CompressionType::Zstd => Encoder::Zstd(
                zstd::stream::write::Encoder::new(Vec::new(), 3)
                    .map_err(|e| codec_err("compress", codec, e))?,
            ),
        };
        Ok(Compressor { codec, encoder })
    }

    /// Feeds the next uncompressed bytes.
    pub fn write(&mut self, data: &[u8]) -> Result<(), RecordError> {
        let codec = self.codec;
        let err = |e: std::io::Error| codec_err("compress", codec, e);
        match &mut self.encoder {
            Encoder::None(out) => out.extend_from_slice(data),
            Encoder::Gzip(enc) => enc.write_all(data).map_err(err)?,
            Encoder::Snappy(xerial) => {
                let XerialEncoder { out, pending, raw } = &mut **xerial;
                let mut rest = data;
                while !rest.is_empty() {
                    let take = (XERIAL_BLOCK - pending.len()).min(rest.len());
                    let (now, later) = rest.split_at(take);
                    pending.extend_from_slice(now);
                    rest = later;
                    if pending.len() == XERIAL_BLOCK {
                        snappy_block_out(codec, raw, pending, out)?;
                    }
                }
            }
            Encoder::Lz4(enc) => enc.write_all(data).map_err(err)?,
            Encoder::Zstd(enc) => enc.write_all(data).map_err(err)?,
        }
        Ok(())
    }

    /// Ends the stream and returns it.
    pub fn finish(self) -> Result<Vec<u8>, RecordError> {
        let codec = self.codec;
        let err = |e: std::io::Error| codec_err("compress", codec, e);
        match self.encoder {
            Encoder::None(out) => Ok(out),
            Encoder::Gzip(enc) => enc.finish().map_err(err),
            Encoder::Snappy(xerial) => {
                let XerialEncoder {
                    mut out,
                    mut pending,
                    mut raw,
                } = *xerial;
                if !pending.is_empty() {
                    snappy_block_out(codec, &mut raw, &mut pending, &mut out)?;
                }
                Ok(out)
            }
            Encoder::Lz4(enc) => enc.finish().map_err(|e| codec_err("compress", codec, e)),
            Encoder::Zstd(enc) => enc.finish().map_err(err),
        }
    }
}

/// Compresses `pending` as one xerial block `[u32 BE length][raw snappy]` onto `out`, and
/// empties it.
fn snappy_block_out(
    codec: CompressionType,
    raw: &mut snap::raw::Encoder,
    pending: &mut Vec<u8>,
    out: &mut Vec<u8>,
) -> Result<(), RecordError> {
    let compressed = raw
        .compress_vec(pending)
        .map_err(|e| codec_err("compress", codec, e))?;
    let len = u32::try_from(compressed.len()).map_err(|e| codec_err("compress", codec, e))?;
    out.extend_from_slice(&len.to_be_bytes());
    out.extend_from_slice(&compressed);
    pending.clear();
    Ok(())
}

/// Decompresses `data`; more than `max_output` bytes of output is an error
/// ([`RecordError::DecompressedTooLarge`]) and nothing beyond the cap is ever allocated.
pub fn decompress(
    codec: CompressionType,
    data: &[u8],
    max_output: usize,
) -> Result<Vec<u8>, RecordError> {
    match codec {
        CompressionType::None => {
            if data.len() > max_output {
                return Err(too_large(codec, max_output));
            }
            Ok(data.to_vec())
        }
        CompressionType::Gzip => read_capped(
            codec,
            flate2::read::MultiGzDecoder::new(data),
            data.len(),
            max_output,
        ),
        CompressionType::Snappy => {
            if data.len() >= XERIAL_HEADER_LEN && data[..8] == XERIAL_MAGIC {
                xerial_decompress(&data[XERIAL_HEADER_LEN..], max_output)
            } else {
                let mut out = Vec::new();
                snappy_block(data, &mut out, max_output)?;
                Ok(out)
            }
        }
        CompressionType::Lz4 => match super::lz4_frame::decode(data, max_output) {
            Lz4Outcome::Ok(out) => Ok(out),
            Lz4Outcome::TooLarge => Err(too_large(codec, max_output)),
            Lz4Outcome::Corrupt(reason) => Err(codec_err("decompress", codec, reason)),
            // From the first frame the direct decoder does not handle (linked blocks,
            // dictionaries) on, as `record_stream` does too.
            Lz4Outcome::Partial { out, rest } => {
                let rest = data.get(rest..).unwrap_or_default();
                read_capped_after(
                    out,
                    codec,
                    lz4_flex::frame::FrameDecoder::new(rest),
                    rest.len(),
                    max_output,
                )
            }
        },
        CompressionType::Zstd => {
            let dec = zstd_decoder(data).map_err(|e| codec_err("decompress", codec, e))?;
            read_capped(codec, dec, data.len(), max_output)
        }
    }
}

pub(super) fn too_large(codec: CompressionType, limit: usize) -> RecordError {
    RecordError::DecompressedTooLarge {
        codec: codec.name(),
        limit,
    }
}

/// Reads `reader` to its end into a vector that never grows past `max_output + 1` bytes: the
/// one extra byte is how an over-long stream is told apart from one that ends exactly at the cap.
fn read_capped(
    codec: CompressionType,
    reader: impl Read,
    input_len: usize,
    max_output: usize,
) -> Result<Vec<u8>, RecordError> {
    read_capped_after(Vec::new(), codec, reader, input_len, max_output)
}

/// [`read_capped`] appending to `out`, which counts towards the cap.
fn read_capped_after(
    mut out: Vec<u8>,
    codec: CompressionType,
    mut reader: impl Read,
    input_len: usize,
    max_output: usize,
) -> Result<Vec<u8>, RecordError> {
    let limit = max_output.saturating_add(1);
    let mut filled = out.len();
    // Start from a guess of the ratio; grow by doubling, clamped to the limit.
    // (`clamp` would panic when the limit is below the floor.)
    let guess = filled.saturating_add(input_len.saturating_mul(4).max(4096));
    out.resize(guess.min(limit).max(filled), 0);
    loop {
        if filled == out.len() {
            if out.len() >= limit {
                return Err(too_large(codec, max_output));
            }
            let grown = out.len().saturating_mul(2).min(limit);
            out.resize(grown, 0);
        }
        match reader.read(&mut out[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(codec_err("decompress", codec, e)),
        }
    }
    if filled > max_output {
        return Err(too_large(codec, max_output));
    }
    out.truncate(filled);
    Ok(out)
}

/// Decodes one raw snappy block, appending to `out`, after checking its declared length against
/// what is left of the cap.
fn snappy_block(block: &[u8], out: &mut Vec<u8>, max_output: usize) -> Result<(), RecordError> {
    let codec = CompressionType::Snappy;
    let len = snap::raw::decompress_len(block).map_err(|e| codec_err("decompress", codec, e))?;
    if len > max_output.saturating_sub(out.len()) {
        return Err(too_large(codec, max_output));
    }
    let start = out.len();
    out.resize(start + len, 0);
    let n = snap::raw::Decoder::new()
        .decompress(block, &mut out[start..])
        .map_err(|e| codec_err("decompress", codec, e))?;
    out.truncate(start + n);
    Ok(())
}

/// Decodes every `[u32 BE length][raw block]` that follows the xerial header.
fn xerial_decompress(mut rest: &[u8], max_output: usize) -> Result<Vec<u8>, RecordError> {
    let mut out = Vec::new();
    while !rest.is_empty() {
        let Some((len_bytes, after)) = rest.split_first_chunk::<4>() else {
            return Err(codec_err(
                "decompress",
                CompressionType::Snappy,
                "truncated xerial block length",
            ));
        };
        let len = u32::from_be_bytes(*len_bytes) as usize;
        if len > after.len() {
            return Err(codec_err(
                "decompress",
                CompressionType::Snappy,
                format!("xerial block of {len} bytes but {} remain", after.len()),
            ));
        }
        let (block, next) = after.split_at(len);
        snappy_block(block, &mut out, max_output)?;
        rest = next;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn sample(n: usize) -> Vec<u8> {
        (0..n).map(|i| (i % 251) as u8 ^ (i / 1000) as u8).collect()
    }

    #[test]
    fn ids_and_names() {
        for c in CompressionType::ALL {
            assert_eq!(CompressionType::from_id(c.id()).unwrap(), c);
            assert_eq!(c.to_string(), c.name());
        }
        assert!(CompressionType::from_id(5).is_err());
        assert_eq!(CompressionType::Lz4.name(), "lz4");
    }

    #[test]
    fn every_codec_round_trips_large_input() {
        let data = sample(200_000);
        for c in CompressionType::ALL {
            let z = compress(c, &data).unwrap();
            assert_eq!(decompress(c, &z, data.len()).unwrap(), data, "{c}");
            let err = decompress(c, &z, data.len() - 1).unwrap_err();
            assert!(
                matches!(err, RecordError::DecompressedTooLarge { .. }),
                "{c}: {err}"
            );
        }
    }

    #[test]
    fn xerial_framing_has_header_and_all_blocks() {
        let data = sample(100_000);
        let z = compress(CompressionType::Snappy, &data).unwrap();
        assert_eq!(&z[..8], &XERIAL_MAGIC);
        assert_eq!(&z[8..16], &[0, 0, 0, 1, 0, 0, 0, 1]);
        // 100 000 bytes in 32 KiB blocks: four blocks, all of which must be decoded.
        assert_eq!(
            decompress(CompressionType::Snappy, &z, 1 << 20).unwrap(),
            data
        );
    }

    #[test]
    fn raw_snappy_is_accepted() {
        let data = sample(5000);
        let raw = snap::raw::Encoder::new().compress_vec(&data).unwrap();
        assert_eq!(
            decompress(CompressionType::Snappy, &raw, 5000).unwrap(),
            data
        );
        assert!(decompress(CompressionType::Snappy, &raw, 4999).is_err());
    }

    #[test]
    fn zstd_frames_without_content_size_decode() {
        let data = sample(70_000);
        let mut enc = zstd::stream::write::Encoder::new(Vec::new(), 3).unwrap();
        enc.include_contentsize(false).unwrap();
        enc.write_all(&data).unwrap();
        let z = enc.finish().unwrap();
        assert_eq!(
            decompress(CompressionType::Zstd, &z, data.len()).unwrap(),
            data
        );
    }

    /// A streamed zstd frame (no content size) that declares a window of `2^window_log`.
    fn zstd_with_window(data: &[u8], window_log: u32) -> Vec<u8> {
        let mut enc = zstd::stream::write::Encoder::new(Vec::new(), 3).unwrap();
        enc.include_contentsize(false).unwrap();
        enc.window_log(window_log).unwrap();
        enc.write_all(data).unwrap();
        enc.finish().unwrap()
    }

    #[test]
    fn zstd_windows_beyond_the_limit_are_refused_before_decoding() {
        let data = sample(70_000);
        // Level 19's window, the largest of the standard levels, decodes.
        let ok = zstd_with_window(&data, 23);
        assert_eq!(
            decompress(CompressionType::Zstd, &ok, data.len()).unwrap(),
            data
        );
        let at_limit = zstd_with_window(&data, ZSTD_WINDOW_LOG_MAX);
        assert_eq!(
            decompress(CompressionType::Zstd, &at_limit, 1 << 20).unwrap(),
            data
        );
        // One more doubling is refused, however small the content and however high the cap.
        let wide = zstd_with_window(&data, ZSTD_WINDOW_LOG_MAX + 1);
        let err = decompress(CompressionType::Zstd, &wide, 256 << 20).unwrap_err();
        assert!(
            err.to_string().contains("too much memory"),
            "unexpected error: {err}"
        );
    }

    #[test]
    fn gzip_bomb_is_capped() {
        let zeros = vec![0u8; 10 << 20];
        let z = compress(CompressionType::Gzip, &zeros).unwrap();
        assert!(z.len() < 64 << 10);
        assert!(decompress(CompressionType::Gzip, &z, 1 << 20).is_err());
    }

    #[test]
    fn concatenated_gzip_members_decode() {
        let mut z = compress(CompressionType::Gzip, b"abc").unwrap();
        z.extend(compress(CompressionType::Gzip, b"def").unwrap());
        assert_eq!(
            decompress(CompressionType::Gzip, &z, 100).unwrap(),
            b"abcdef"
        );
    }

    proptest! {
        #[test]
        fn round_trip(data in proptest::collection::vec(any::<u8>(), 0..3000), id in 0u8..5) {
            let c = CompressionType::from_id(id).unwrap();
            let z = compress(c, &data).unwrap();
            prop_assert_eq!(decompress(c, &z, data.len()).unwrap(), data);
        }

        #[test]
        fn garbage_never_panics(data in proptest::collection::vec(any::<u8>(), 0..300), id in 0u8..5) {
            let c = CompressionType::from_id(id).unwrap();
            if let Ok(out) = decompress(c, &data, 4096) {
                prop_assert!(out.len() <= 4096);
            }
        }
    }
}
