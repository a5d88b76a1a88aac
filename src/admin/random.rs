//! The random source of Kafka's two assignment draws, and the draws themselves.
//!
//! Kafka draws the start index and then the replica shift from one `java.util.Random`
//! (`AdminUtils.RAND`, never seeded). kcli draws them from the same generator, implemented from
//! its specification (a 48-bit linear congruential generator, `nextInt(bound)` by rejection), so
//! a seed gives the same draws on every machine and in every kcli version, and `--seed N` draws
//! exactly what `new java.util.Random(N)` would. A fixed start index fixes the shift too, as
//! Kafka's `fixedStartIndex` does; a fixed shift alone (beyond Kafka) fixes only the shift.

/// `java.util.Random`: `seed' = (seed * 0x5DEECE66D + 0xB) mod 2^48`, the top bits of the new
/// state are the output. Invariant: `seed < 2^48`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JavaRandom {
    seed: u64,
}

const MULTIPLIER: u64 = 0x5_DEEC_E66D;
const ADDEND: u64 = 0xB;
const MASK: u64 = (1 << 48) - 1;

impl JavaRandom {
    /// `new Random(seed)`: the seed is scrambled with the multiplier, as Java's `setSeed` does.
    pub fn new(seed: i64) -> Self {
        JavaRandom {
            seed: (seed.cast_unsigned() ^ MULTIPLIER) & MASK,
        }
    }

    /// A generator seeded from the operating system's entropy, with the seed it used (so the
    /// draws can be repeated with [`JavaRandom::new`]).
    pub fn from_entropy() -> (Self, i64) {
        let seed = rand::random::<i64>();
        (JavaRandom::new(seed), seed)
    }

    /// `next(bits)`: the top `bits` bits of the next state, as a Java int.
    fn next(&mut self, bits: u32) -> i32 {
        self.seed = (self.seed.wrapping_mul(MULTIPLIER).wrapping_add(ADDEND)) & MASK;
        // The value has at most 32 significant bits; Java's cast keeps the low 32.
        ((self.seed >> (48 - bits)) as u32).cast_signed()
    }

    /// `nextInt(bound)`: uniform in `0..bound`, `bound > 0`. A power of two takes the high
    /// bits; any other bound rejects the few values that would bias the remainder.
    pub fn next_int(&mut self, bound: i32) -> i32 {
        if bound <= 0 {
            return 0;
        }
        if bound & (bound - 1) == 0 {
            let bits = i64::from(self.next(31));
            return ((i64::from(bound) * bits) >> 31) as i32;
        }
        loop {
            let bits = self.next(31);
            let value = bits % bound;
            // Java's overflow test: `bits - value + (bound - 1) < 0` in 32-bit arithmetic.
            if bits.wrapping_sub(value).wrapping_add(bound - 1) >= 0 {
                return value;
            }
        }
    }

    /// A draw in `0..n` as an index (`n` brokers; 0 when there are none).
    pub fn next_index(&mut self, n: usize) -> usize {
        let bound = i32::try_from(n).unwrap_or(i32::MAX);
        usize::try_from(self.next_int(bound)).unwrap_or(0)
    }
}

/// Where Kafka's assignment starts: both values are random in Kafka unless a fixed start index
/// is given, which then serves as both.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AssignmentStart {
    /// Index, in the (rack-alternated, with racks) broker list, of the first replica of
    /// partition 0; partition `p`'s leader is at `(p + start_index) % n`.
    pub start_index: usize,
    /// The initial shift of the second replica from the first (`nextReplicaShift`); it grows by
    /// one every `n` partitions.
    pub replica_shift: usize,
}

impl AssignmentStart {
    /// Kafka's `fixedStartIndex`: the start index and the shift are both `start_index`.
    pub fn fixed(start_index: usize) -> Self {
        AssignmentStart {
            start_index,
            replica_shift: start_index,
        }
    }

    /// The draws for `n` brokers: the start index unless fixed, then the shift unless fixed
    /// (by itself or by a fixed start index), in Kafka's order, from `rng`.
    pub fn draw(
        n: usize,
        fixed_start: Option<usize>,
        fixed_shift: Option<usize>,
        rng: &mut JavaRandom,
    ) -> Self {
        let start_index = fixed_start.unwrap_or_else(|| rng.next_index(n));
        let replica_shift = fixed_shift
            .or(fixed_start)
            .unwrap_or_else(|| rng.next_index(n));
        AssignmentStart {
            start_index,
            replica_shift,
        }
    }

    /// Kafka's unseeded draws (CreateTopics on the controller, `--generate`).
    pub fn random(n: usize) -> Self {
        let (mut rng, _) = JavaRandom::from_entropy();
        AssignmentStart::draw(n, None, None, &mut rng)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_java_util_random() {
        // `new java.util.Random(42)`: nextInt() x3, then nextInt(10) x5, nextInt(16) x2
        // and other bounds (values printed by OpenJDK's java.util.Random).
        let mut r = JavaRandom::new(42);
        assert_eq!(r.next(32), -1170105035);
        assert_eq!(r.next(32), 234785527);
        assert_eq!(r.next(32), -1360544799);
        let mut r = JavaRandom::new(42);
        let tens: Vec<i32> = (0..5).map(|_| r.next_int(10)).collect();
        assert_eq!(tens, [0, 3, 8, 4, 0]);
        let mut r = JavaRandom::new(0);
        assert_eq!(r.next_int(16), 11);
        assert_eq!(r.next_int(16), 13);
        let mut r = JavaRandom::new(-3);
        let sevens: Vec<i32> = (0..5).map(|_| r.next_int(7)).collect();
        assert_eq!(sevens, [2, 0, 6, 1, 5]);
        let mut r = JavaRandom::new(123_456_789);
        let big: Vec<i32> = (0..6).map(|_| r.next_int(1_000_000_007)).collect();
        assert_eq!(
            big,
            [
                426010958, 639209593, 981296483, 547328344, 838606290, 465137554
            ]
        );
    }

    #[test]
    fn a_fixed_start_fixes_the_shift_and_a_fixed_shift_only_itself() {
        let mut rng = JavaRandom::new(7);
        assert_eq!(
            AssignmentStart::draw(5, Some(3), None, &mut rng),
            AssignmentStart::fixed(3)
        );
        // Nothing was drawn.
        assert_eq!(rng, JavaRandom::new(7));
        let mut expected = JavaRandom::new(7);
        let start = expected.next_index(5);
        assert_eq!(
            AssignmentStart::draw(5, None, Some(4), &mut rng),
            AssignmentStart {
                start_index: start,
                replica_shift: 4
            }
        );
        let both = AssignmentStart::draw(5, None, None, &mut JavaRandom::new(9));
        let mut again = JavaRandom::new(9);
        assert_eq!(both.start_index, again.next_index(5));
        assert_eq!(both.replica_shift, again.next_index(5));
    }

    #[test]
    fn draws_stay_in_range() {
        let mut rng = JavaRandom::new(-3);
        for n in 1..40 {
            let s = AssignmentStart::draw(n, None, None, &mut rng);
            assert!(s.start_index < n && s.replica_shift < n);
        }
        assert_eq!(rng.next_index(0), 0);
    }
}
