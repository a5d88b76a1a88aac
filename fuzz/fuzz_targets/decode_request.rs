//! Fuzzes the broker's request decoder: any bytes after the size prefix must decode or fail
//! with an error, never panic; whatever decodes must re-encode, and decode again to the same
//! value.

#![no_main]

use bytes::Bytes;
use kcli::protocol::messages::{decode_request, encode_request_frame};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok((header, body)) = decode_request(Bytes::copy_from_slice(data)) else {
        return;
    };
    if let Ok(frame) = encode_request_frame(&header, &body) {
        let again = decode_request(Bytes::from(frame.to_vec()).slice(4..));
        assert_eq!(again.ok(), Some((header, body)));
    }
});
