//! Hand-written support for the generated `messages` test module: [`Gen`], a small seeded
//! random source; [`Arb`], random values of the codec's value types; [`Visit`], called once per
//! top-level message type.

// Test code: a failed expectation panics with the message, version and value.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use bytes::Bytes;
use kcli::protocol::codec::{Cx, Message, RawTaggedField, StrBytes, Uuid};

/// A seeded splitmix64 generator with a nesting depth, so that arrays of structs stay small.
pub struct Gen {
    state: u64,
    depth: u32,
    /// Strings are valid UTF-8 (the kafka-protocol crate rejects anything else).
    pub utf8_only: bool,
}

impl Gen {
    pub fn new(seed: u64) -> Self {
        Gen {
            state: seed,
            depth: 0,
            utf8_only: false,
        }
    }

    pub fn next(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    fn run(&mut self, max: u64) -> Vec<u8> {
        let len = self.below(max + 1) as usize;
        (0..len).map(|_| self.next() as u8).collect()
    }

    /// Zero to two unknown tagged fields with tags above any Kafka uses, in tag order.
    pub fn unknown_tags(&mut self) -> Vec<RawTaggedField> {
        let n = if self.below(4) == 0 { self.below(3) } else { 0 };
        (0..n)
            .map(|i| RawTaggedField {
                tag: 10_000 + 7 * i as u32 + self.below(7) as u32,
                data: Bytes::from(self.run(5)),
            })
            .collect()
    }
}

/// A random value valid at the context's version.
pub trait Arb: Sized {
    fn arb(g: &mut Gen, cx: Cx) -> Self;
}

macro_rules! arb_int {
    ($($t:ty),*) => {$(
        impl Arb for $t {
            fn arb(g: &mut Gen, _cx: Cx) -> Self {
                // Favour small and boundary values, which exercise defaults and varints.
                match g.below(4) {
                    0 => 0 as $t,
                    1 => (g.below(3) as $t).wrapping_sub(1 as $t),
                    _ => g.next() as $t,
                }
            }
        }
    )*};
}
arb_int!(i8, i16, u16, i32, i64);

impl Arb for bool {
    fn arb(g: &mut Gen, _cx: Cx) -> Self {
        g.below(2) == 1
    }
}

impl Arb for f64 {
    fn arb(g: &mut Gen, _cx: Cx) -> Self {
        (g.next() as i32) as f64 / 8.0
    }
}

impl Arb for Uuid {
    fn arb(g: &mut Gen, _cx: Cx) -> Self {
        if g.below(3) == 0 {
            Uuid::nil()
        } else {
            Uuid::from_u64_pair(g.next(), g.next())
        }
    }
}

impl Arb for StrBytes {
    fn arb(g: &mut Gen, _cx: Cx) -> Self {
        let len = g.below(9) as usize;
        let utf8 = g.utf8_only || g.below(8) != 0;
        let bytes: Vec<u8> = (0..len)
            .map(|_| {
                if utf8 {
                    b'a' + g.below(26) as u8
                } else {
                    g.next() as u8
                }
            })
            .collect();
        StrBytes::from_bytes(Bytes::from(bytes))
    }
}

impl Arb for Bytes {
    fn arb(g: &mut Gen, _cx: Cx) -> Self {
        Bytes::from(g.run(12))
    }
}

impl<T: Arb> Arb for Vec<T> {
    fn arb(g: &mut Gen, cx: Cx) -> Self {
        let max = if g.depth >= 3 { 0 } else { 3 };
        let n = g.below(max + 1);
        g.depth += 1;
        let out = (0..n).map(|_| T::arb(g, cx.element())).collect();
        g.depth -= 1;
        out
    }
}

impl<T: Arb> Arb for Option<T> {
    fn arb(g: &mut Gen, cx: Cx) -> Self {
        if cx.nullable && g.below(3) == 0 {
            None
        } else {
            Some(T::arb(g, cx))
        }
    }
}

/// Called with every top-level message type.
pub trait Visit {
    fn visit<M: Message + Arb>(&mut self);
}
