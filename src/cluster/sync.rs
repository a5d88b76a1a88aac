//! The crate's poison-tolerant lock helpers. A panic while a std lock is held poisons it; every
//! structure behind these locks is either rebuilt from files or left whole by each critical
//! section (no half-written invariant that later callers trust over the files), so the broker
//! keeps serving with the inner value instead of failing every later request.

use std::sync::{Mutex, MutexGuard, RwLock, RwLockReadGuard, RwLockWriteGuard};

/// Locks `mutex`, taking the value over if a panicking holder poisoned it.
pub(crate) fn lock<T: ?Sized>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|p| p.into_inner())
}

/// Read-locks `rw`, taking the value over if it was poisoned.
pub(crate) fn read<T: ?Sized>(rw: &RwLock<T>) -> RwLockReadGuard<'_, T> {
    rw.read().unwrap_or_else(|p| p.into_inner())
}

/// Write-locks `rw`, taking the value over if it was poisoned.
pub(crate) fn write<T: ?Sized>(rw: &RwLock<T>) -> RwLockWriteGuard<'_, T> {
    rw.write().unwrap_or_else(|p| p.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_poisoned_lock_still_yields_its_value() {
        let mutex = std::sync::Arc::new(Mutex::new(5));
        let rw = std::sync::Arc::new(RwLock::new(7));
        let (m, r) = (mutex.clone(), rw.clone());
        let _ = std::thread::spawn(move || {
            let _g = m.lock().unwrap();
            let _w = r.write().unwrap();
            panic!("poison both");
        })
        .join();
        assert!(mutex.is_poisoned() && rw.is_poisoned());
        *lock(&mutex) += 1;
        assert_eq!(*lock(&mutex), 6);
        *write(&rw) += 1;
        assert_eq!(*read(&rw), 8);
    }
}
