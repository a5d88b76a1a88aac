//! Records that reach a log from outside memory: a replica fetcher's records still in the pipe
//! its fetch response was spliced into. The log lets them write themselves into its segment
//! file (one kernel copy, no pass through user space) or, where it cannot take them in place,
//! reads them into a buffer.

use std::fs::File;
use std::io;

/// `len()` bytes of whole or partial record batches, consumed once: by
/// [`write_to`](RecordsSource::write_to) or by [`read_into`](RecordsSource::read_into).
pub trait RecordsSource {
    /// How many bytes there are.
    fn len(&self) -> usize;

    /// Whether there are none.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Writes all of them into `file` at `position`. An error is the file's: the bytes are
    /// already at hand, so nothing else can fail.
    fn write_to(&mut self, file: &File, position: u64) -> io::Result<()>;

    /// Appends all of them to `buf`.
    fn read_into(&mut self, buf: &mut Vec<u8>) -> io::Result<()>;
}

/// Records already in memory, for tests and for callers that hold a buffer.
impl RecordsSource for &[u8] {
    fn len(&self) -> usize {
        <[u8]>::len(self)
    }

    fn write_to(&mut self, file: &File, position: u64) -> io::Result<()> {
        std::os::unix::fs::FileExt::write_all_at(file, self, position)?;
        *self = &[];
        Ok(())
    }

    fn read_into(&mut self, buf: &mut Vec<u8>) -> io::Result<()> {
        buf.extend_from_slice(self);
        *self = &[];
        Ok(())
    }
}
