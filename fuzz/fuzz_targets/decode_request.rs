//! Fuzzes the broker's request decoder: any bytes after the size prefix must decode or fail
//! with an error, never panic; whatever decodes must re-encode, and that encoding must decode
//! and re-encode to the very same bytes (values are compared as bytes: a float64 NaN is not
//! equal to itself).

#![no_main]

use bytes::Bytes;
use kcli::protocol::messages::{decode_request, encode_request_frame};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok((header, body)) = decode_request(Bytes::copy_from_slice(data)) else {
        return;
    };
    let Ok(first) = encode_request_frame(&header, &body) else {
        return;
    };
    let first = Bytes::from(first.to_vec());
    let (header2, body2) = decode_request(first.slice(4..)).expect("our own encoding decodes");
    let second = encode_request_frame(&header2, &body2).expect("and encodes again");
    assert_eq!(&first[..], &second[..]);
});
