//! The `.lock` of a log dir: one broker process per directory, as Kafka's `FileLock` on
//! `<log dir>/.lock`.
//!
//! Java's `FileChannel.tryLock()` takes a POSIX record lock (`fcntl(F_SETLK)`, write lock, whole
//! file). We take an open-file-description lock (`F_OFD_SETLK`) on the same range: Linux makes
//! OFD locks and POSIX record locks conflict with each other, so a kcli broker and a Java Kafka
//! broker exclude each other, and unlike POSIX locks an OFD lock is not dropped when some other
//! descriptor of the same file in this process is closed. OFD locks also conflict between two
//! opens within one process, so a second open of the same dir fails here too.

use std::fs::{File, OpenOptions};
use std::io::ErrorKind;
use std::path::{Path, PathBuf};

use nix::errno::Errno;
use nix::fcntl::{FcntlArg, fcntl};
use nix::libc;

use crate::storage::StorageError;

/// The lock file's name inside a log dir.
pub const LOCK_FILENAME: &str = ".lock";

/// An exclusive lock on `<log dir>/.lock`, held until dropped (closing the descriptor releases
/// it). The file itself is left in place, as Kafka leaves it until a clean shutdown.
#[derive(Debug)]
pub struct LogDirLock {
    path: PathBuf,
    file: File,
}

/// A write lock over the whole file: `l_len = 0` means "to the end, however far", which is what
/// Java's `tryLock()` (position 0, size `Long.MAX_VALUE`) asks for too.
fn whole_file_write_lock() -> libc::flock {
    let mut lock = zeroed_flock();
    lock.l_type = libc::F_WRLCK as libc::c_short;
    lock.l_whence = libc::SEEK_SET as libc::c_short;
    lock.l_start = 0;
    lock.l_len = 0;
    // OFD locks require l_pid = 0.
    lock.l_pid = 0;
    lock
}

/// A zero `flock`, built field by field so no `unsafe` (`mem::zeroed`) is needed.
fn zeroed_flock() -> libc::flock {
    libc::flock {
        l_type: 0,
        l_whence: 0,
        l_start: 0,
        l_len: 0,
        l_pid: 0,
    }
}

impl LogDirLock {
    /// Creates `<dir>/.lock` if needed and locks it; [`StorageError::LogDirLocked`] when another
    /// process (or another open in this one) holds it.
    pub fn try_acquire(dir: &Path) -> Result<LogDirLock, StorageError> {
        let path = dir.join(LOCK_FILENAME);
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(|e| StorageError::io(&path, e))?;
        let lock = whole_file_write_lock();
        match fcntl(&file, FcntlArg::F_OFD_SETLK(&lock)) {
            Ok(_) => Ok(LogDirLock { path, file }),
            Err(Errno::EAGAIN | Errno::EACCES) => Err(StorageError::LogDirLocked {
                path: dir.to_path_buf(),
            }),
            Err(errno) => Err(StorageError::io(&path, errno.into())),
        }
    }

    /// The lock file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Releases the lock and deletes the lock file, as Kafka's `FileLock.destroy` at shutdown.
    pub fn destroy(self) -> Result<(), StorageError> {
        match std::fs::remove_file(&self.path) {
            Ok(()) => {}
            Err(e) if e.kind() == ErrorKind::NotFound => {}
            Err(e) => return Err(StorageError::io(&self.path, e)),
        }
        drop(self.file);
        Ok(())
    }
}

/// Whether some process (this one included, through another open) holds a lock on
/// `<dir>/.lock` that would stop us from taking it. A missing file is unlocked.
pub fn is_locked(dir: &Path) -> Result<bool, StorageError> {
    let path = dir.join(LOCK_FILENAME);
    let file = match File::open(&path) {
        Ok(file) => file,
        Err(e) if e.kind() == ErrorKind::NotFound => return Ok(false),
        Err(e) => return Err(StorageError::io(&path, e)),
    };
    let mut probe = whole_file_write_lock();
    fcntl(&file, FcntlArg::F_OFD_GETLK(&mut probe))
        .map_err(|errno| StorageError::io(&path, errno.into()))?;
    Ok(probe.l_type != libc::F_UNLCK as libc::c_short)
}

impl LogDirLock {
    /// Same as the free function [`is_locked`].
    pub fn is_locked(dir: &Path) -> Result<bool, StorageError> {
        is_locked(dir)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn second_open_in_the_same_process_conflicts() {
        let dir = tempfile::tempdir().unwrap();
        assert!(!is_locked(dir.path()).unwrap());
        let lock = LogDirLock::try_acquire(dir.path()).unwrap();
        assert!(dir.path().join(".lock").exists());
        assert!(is_locked(dir.path()).unwrap());
        let err = LogDirLock::try_acquire(dir.path()).unwrap_err();
        assert!(matches!(err, StorageError::LogDirLocked { .. }), "{err}");
        drop(lock);
        assert!(!is_locked(dir.path()).unwrap());
        let again = LogDirLock::try_acquire(dir.path()).unwrap();
        again.destroy().unwrap();
        assert!(!dir.path().join(".lock").exists());
    }

    #[test]
    fn conflicts_with_a_posix_lock_held_by_another_process() {
        // flock(1) takes BSD locks, which do not interact with fcntl locks; python's
        // fcntl.lockf takes the POSIX record lock Java's tryLock takes.
        let python = which("python3").expect("python3 is required; tests/run installs it");
        let dir = tempfile::tempdir().unwrap();
        let lock_path = dir.path().join(".lock");
        let ready = dir.path().join("ready");
        let script = format!(
            "import fcntl,os,time\nf=open({:?},'a+')\nfcntl.lockf(f,fcntl.LOCK_EX|fcntl.LOCK_NB)\nopen({:?},'w').close()\ntime.sleep(30)\n",
            lock_path, ready
        );
        let mut child = std::process::Command::new(python)
            .arg("-c")
            .arg(script)
            .spawn()
            .unwrap();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while !ready.exists() && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        assert!(ready.exists(), "child never took the lock");
        assert!(is_locked(dir.path()).unwrap());
        let err = LogDirLock::try_acquire(dir.path()).unwrap_err();
        assert!(matches!(err, StorageError::LogDirLocked { .. }), "{err}");
        child.kill().unwrap();
        child.wait().unwrap();
        assert!(!is_locked(dir.path()).unwrap());
        LogDirLock::try_acquire(dir.path()).unwrap();
    }

    #[test]
    fn a_java_try_lock_fails_while_we_hold_the_lock() {
        let java = which("java").expect("a JDK is required; tests/run installs it");
        let dir = tempfile::tempdir().unwrap();
        let source = dir.path().join("TryLock.java");
        std::fs::write(
            &source,
            "import java.nio.channels.*; import java.nio.file.*;\n\
             public class TryLock { public static void main(String[] a) throws Exception {\n\
             FileChannel c = FileChannel.open(Paths.get(a[0]), StandardOpenOption.CREATE,\n\
             StandardOpenOption.READ, StandardOpenOption.WRITE);\n\
             System.out.print(c.tryLock() == null ? \"held\" : \"acquired\"); } }\n",
        )
        .unwrap();
        let lock_path = dir.path().join(".lock");
        let run = || {
            let out = std::process::Command::new(&java)
                .arg(&source)
                .arg(&lock_path)
                .output()
                .unwrap();
            String::from_utf8_lossy(&out.stdout).into_owned()
        };
        let lock = LogDirLock::try_acquire(dir.path()).unwrap();
        assert_eq!(run(), "held");
        drop(lock);
        assert_eq!(run(), "acquired");
    }

    fn which(name: &str) -> Result<PathBuf, ()> {
        std::env::var_os("PATH")
            .and_then(|paths| {
                std::env::split_paths(&paths)
                    .map(|p| p.join(name))
                    .find(|p| p.is_file())
            })
            .ok_or(())
    }
}
