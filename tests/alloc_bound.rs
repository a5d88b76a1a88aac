//! The protocol decoder's allocation bound: decoding a frame allocates at most 2 × its size +
//! 16 KiB, for hostile frames (counts of i32::MAX, counts just under the bytes remaining,
//! truncated and corrupted encodings of every message) and for random valid frames of every
//! message at every version.
//!
//! This is its own test target, not part of `tests/it`, because it installs a counting
//! `#[global_allocator]`, which would affect every test in a binary. The counter is per thread
//! (tests run in parallel) and counts every byte requested by `alloc` and `realloc`.
//!
//! Valid frames whose elements are far smaller on the wire than in memory (30 000 empty topic
//! names: 105× their size, counting every realloc) decode to more than twice their size, as they
//! do in Java; `dense_valid_frames_cost_their_decoded_size` bounds those by the decoded size. The
//! 2× bound is about what a frame can make the decoder reserve beyond what it really carries.
//!
//! It also checks that a leader append allocates nothing beyond its validation result, with or
//! without a producer id (the idempotence checks stay off the allocator).

// A GlobalAlloc impl is unsafe by definition; it only forwards to the system allocator.
#![allow(unsafe_code)]
// Test code: a failed expectation panics with the message, version and value.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "it/messages/mod.rs"]
#[rustfmt::skip]
mod messages;
#[path = "it/protocol_arb.rs"]
mod protocol_arb;

use bytes::Bytes;
use kcli::protocol::codec::{Message, Reader, cx};
use kcli::protocol::messages::decode_request;
use protocol_arb::{Arb, Gen, Visit};
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

struct Counting;

thread_local! {
    static ALLOCATED: Cell<usize> = const { Cell::new(0) };
}

fn add(n: usize) {
    // try_with: the thread-local may already be gone while a thread exits.
    let _ = ALLOCATED.try_with(|c| c.set(c.get().saturating_add(n)));
}

// SAFETY: every method forwards to `System` with the caller's arguments unchanged.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        add(layout.size());
        // SAFETY: forwarded as received.
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        add(layout.size());
        // SAFETY: forwarded as received.
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded as received.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        add(new_size);
        // SAFETY: forwarded as received.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Bytes allocated on this thread while running `f`.
fn allocated_by<T>(f: impl FnOnce() -> T) -> (usize, T) {
    let before = ALLOCATED.with(Cell::get);
    let out = f();
    (ALLOCATED.with(Cell::get) - before, out)
}

fn bound(frame_len: usize) -> usize {
    2 * frame_len + 16 * 1024
}

fn check_frame<M: Message>(frame: Bytes, v: i16, what: &str) {
    let len = frame.len();
    let (n, _) = allocated_by(move || M::decode_bytes(frame, v).map(drop));
    assert!(
        n <= bound(len),
        "{} v{v} ({what}): {n} bytes allocated for a {len}-byte frame",
        M::NAME
    );
}

#[test]
fn the_18_byte_metadata_frame_allocates_almost_nothing() {
    let frame = Bytes::from_static(&[0, 3, 0, 1, 0, 0, 0, 7, 0xff, 0xff, 0x7f, 0xff, 0xff, 0xff]);
    let (n, r) = allocated_by(|| decode_request(frame).map(drop));
    assert!(r.is_err());
    assert!(n <= 1024, "{n} bytes allocated");
}

/// Arrays whose count passes the bytes-remaining check but whose elements are not there: a
/// 64 KiB Metadata v0 body of a topic count and then bytes that are no valid topic name.
#[test]
fn counts_just_under_the_bytes_remaining_reserve_little() {
    for count in [1_000i32, 65_000, 65_531] {
        let mut frame = count.to_be_bytes().to_vec();
        frame.resize(65_536, 0xff);
        let len = frame.len();
        let (n, r) = allocated_by(|| {
            kcli::protocol::messages::MetadataRequest::decode(
                &mut Reader::new(Bytes::from(frame)),
                0,
            )
            .map(drop)
        });
        assert!(r.is_err());
        assert!(n <= bound(len), "{n} bytes for count {count}");
    }
}

struct Frames {
    checked: usize,
}

impl Visit for Frames {
    fn visit<M: Message + Arb>(&mut self) {
        for v in M::VERSIONS.min..=M::VERSIONS.max {
            for seed in 0..4u64 {
                let mut g = Gen::new(seed * 104_729 + v as u64);
                let bytes = M::arb(&mut g, cx(v, false))
                    .encode_to_bytes(v)
                    .unwrap()
                    .freeze();
                check_frame::<M>(bytes.clone(), v, "valid");
                for cut in [bytes.len() / 2, bytes.len().saturating_sub(1)] {
                    check_frame::<M>(bytes.slice(..cut), v, "truncated");
                }
                for at in 0..bytes.len().min(32) {
                    let mut copy = bytes.to_vec();
                    copy[at] = 0x7f;
                    check_frame::<M>(Bytes::from(copy), v, "corrupted");
                }
                self.checked += 1;
            }
        }
    }
}

#[test]
fn decoding_any_frame_allocates_at_most_twice_its_size_plus_16_kib() {
    let mut f = Frames { checked: 0 };
    messages::visit_all(&mut f);
    assert!(f.checked > 2000, "only {} frames", f.checked);
}

/// The one way past 2×: a valid frame whose elements are much smaller on the wire than in
/// memory. Metadata v0 with 30 000 empty topic names is 60 KB on the wire and 30 000 decoded
/// `MetadataRequestTopic`s (72 bytes each) in memory, as it would be in Java. The bound here is
/// the in-memory size of what the frame really holds, times 3 for the vector's doublings (every
/// `realloc` counts its whole new size).
#[test]
fn dense_valid_frames_cost_their_decoded_size() {
    let count = 30_000i32;
    let mut frame = count.to_be_bytes().to_vec();
    frame.resize(4 + 2 * count as usize, 0);
    let len = frame.len();
    let (n, r) = allocated_by(|| {
        kcli::protocol::messages::MetadataRequest::decode_bytes(Bytes::from(frame), 0).map(drop)
    });
    assert!(r.is_ok());
    let element =
        std::mem::size_of::<kcli::protocol::messages::metadata_request::MetadataRequestTopic>();
    eprintln!(
        "dense Metadata v0: {len} bytes on the wire, {n} allocated ({:.1}x)",
        n as f64 / len as f64
    );
    assert!(n <= 3 * element * count as usize + bound(len), "{n} bytes");
}

/// The plain produce path stays as lean as it was before producer state existed: a leader
/// append of a batch without a producer id allocates exactly what the validator's result
/// takes, nothing for the idempotence checks; a steady idempotent producer's append adds no
/// allocation either (its five-batch window is reused).
#[test]
fn leader_appends_allocate_only_the_validation_result() {
    use kcli::cluster::TopicPartition;
    use kcli::protocol::record::builder::{RecordBatchBuilder, SimpleRecord};
    use kcli::protocol::record::compression::CompressionType;
    use kcli::storage::log_config::LogConfig;
    use kcli::storage::log_validator::{AppendOrigin, ValidationContext, validate_records};
    use kcli::storage::unified_log::UnifiedLog;
    const NOW: i64 = 1_767_225_600_000;
    let batch = |pid: i64, seq: i32| {
        let mut b = RecordBatchBuilder::new(CompressionType::None);
        b.producer_id = pid;
        b.producer_epoch = if pid < 0 { -1 } else { 0 };
        b.base_sequence = seq;
        b.records = (0..10)
            .map(|i| SimpleRecord::new(NOW + i, None, Some(vec![b'x'; 100])))
            .collect();
        b.build().unwrap()
    };
    let dir = tempfile::tempdir().unwrap();
    // No index entries (their appends allocate a little, the same for every batch), so the
    // comparison sees the append path alone.
    let config = LogConfig {
        index_interval_bytes: i32::MAX,
        ..LogConfig::default()
    };
    let mut log = UnifiedLog::open(
        dir.path().to_path_buf(),
        TopicPartition::new("t", 0),
        config.clone(),
        0,
        0,
        true,
        NOW,
    )
    .unwrap();
    let plain = batch(-1, -1);
    // The first append records leader epoch 0 (a checkpoint write); later ones do not.
    log.append_as_leader(&plain, 0, AppendOrigin::Client, NOW)
        .unwrap();
    let ctx = ValidationContext {
        origin: AppendOrigin::Client,
        compacted: false,
        timestamp_type: config.message_timestamp_type,
        now_ms: NOW,
        timestamp_before_max_ms: config.timestamp_before_max_ms(),
        timestamp_after_max_ms: config.timestamp_after_max_ms(),
        max_message_bytes: usize::try_from(config.max_message_bytes).unwrap(),
        max_decompressed_bytes: 1 << 30,
        target_compression: None,
    };
    let (validation, _) = allocated_by(|| validate_records(&plain, &ctx).unwrap());
    assert!(validation > 0);
    let (append, _) = allocated_by(|| {
        log.append_as_leader(&plain, 0, AppendOrigin::Client, NOW)
            .unwrap()
    });
    assert_eq!(append, validation, "plain append beyond validation");
    // An idempotent producer: its first batch creates its entry; from the sixth on the
    // window of five is full and recycled.
    for seq in 0..6 {
        log.append_as_leader(&batch(7, seq * 10), 0, AppendOrigin::Client, NOW)
            .unwrap();
    }
    let next = batch(7, 60);
    let (idem_validation, _) = allocated_by(|| validate_records(&next, &ctx).unwrap());
    assert_eq!(idem_validation, validation);
    let (idempotent, _) = allocated_by(|| {
        log.append_as_leader(&next, 0, AppendOrigin::Client, NOW)
            .unwrap()
    });
    assert_eq!(
        idempotent, validation,
        "idempotent append beyond validation"
    );
}

/// Fetch v0-3's down-conversion streams a compressed batch record by record: a batch that
/// inflates to 16 MiB costs its codec's window, one record and the converted output, not the
/// inflated whole.
#[test]
fn down_converting_a_batch_allocates_far_less_than_it_inflates_to() {
    use kcli::protocol::record::builder::{RecordBatchBuilder, SimpleRecord};
    use kcli::protocol::record::compression::CompressionType;
    use kcli::protocol::record::down_convert::batches_to_message_set;
    const INFLATED: usize = 16 << 20;
    for codec in [CompressionType::Gzip, CompressionType::Lz4] {
        let mut b = RecordBatchBuilder::new(codec);
        b.records = (0..INFLATED / 1024)
            .map(|i| SimpleRecord::new(i as i64, None, Some(vec![0; 1024 - 16])))
            .collect();
        let batch = b.build().unwrap();
        assert!(
            batch.len() < INFLATED / 64,
            "{codec}: {} bytes",
            batch.len()
        );
        let (allocated, set) = allocated_by(|| batches_to_message_set(&batch, 1).unwrap());
        assert!(!set.is_empty());
        // The codecs' own state (a deflate encoder's tables are most of it) and the output;
        // inflating the batch whole and copying its records, as conversion once did, cost
        // three times the inflated size.
        let bound = INFLATED / 4;
        assert!(
            allocated < bound,
            "{codec}: down-conversion allocated {allocated} bytes (bound {bound}) for a batch of {} bytes",
            batch.len()
        );
    }
}
