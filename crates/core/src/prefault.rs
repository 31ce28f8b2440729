//! A large output buffer's fresh pages, faulted in on another thread while
//! the buffer is written. The first write to each page of a new buffer
//! costs the writer a page fault and the kernel's zeroing of the page
//! (most of the time a large buffer takes to write once); a helper thread
//! asking the kernel to populate the pages ahead of the writer
//! (`madvise(MADV_POPULATE_WRITE)`, which never changes what a page holds)
//! takes that off the writer. Linux only; elsewhere, and where
//! the kernel refuses, nothing is done.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

/// Buffers smaller than this many bytes are left to fault as they are
/// written. glibc's malloc gives allocations up to this size (its largest
/// mmap threshold) from memory a program freed before, mostly faulted in
/// already, where a helper only costs; larger ones are always fresh pages.
pub const MIN_BYTES: usize = 32 << 20;

/// Bytes populated per request, between which the helper looks for a stop.
const CHUNK: usize = 1 << 20;

/// The helper populating a buffer's pages; stopped and joined on drop,
/// which must come before the buffer is freed or moved.
#[derive(Default)]
pub struct Prefault {
    helper: Option<(Arc<AtomicBool>, JoinHandle<()>)>,
}

impl Prefault {
    /// Starts populating the first `len` elements of the spare capacity of
    /// `buf` (at most all of it: what the caller will surely write, so no
    /// page is made that nothing writes), where they take at least
    /// [`MIN_BYTES`] and a thread can be started. The caller keeps the
    /// returned guard while it writes into that capacity.
    pub fn start<T>(buf: &mut Vec<T>, len: usize) -> Prefault {
        let spare = buf.spare_capacity_mut();
        let len = len.min(spare.len());
        let spare = &mut spare[..len];
        let bytes = std::mem::size_of_val(spare);
        if bytes < MIN_BYTES || !cfg!(target_os = "linux") {
            return Prefault::default();
        }
        // Only the address crosses: the helper never reads or writes
        // through it, it names the range to the kernel.
        let start = spare.as_mut_ptr() as usize;
        let stop = Arc::new(AtomicBool::new(false));
        let stopped = Arc::clone(&stop);
        let helper = std::thread::Builder::new()
            .name("prime-compaction-prefault".into())
            // It makes one system call at a time; no deep stack.
            .stack_size(64 << 10)
            .spawn(move || populate(start, bytes, &stopped));
        Prefault {
            helper: helper.ok().map(|handle| (stop, handle)),
        }
    }
}

impl Drop for Prefault {
    fn drop(&mut self) {
        if let Some((stop, handle)) = self.helper.take() {
            stop.store(true, Ordering::Relaxed);
            let _ = handle.join();
        }
    }
}

/// Populates the whole pages of `start..start + bytes`, a chunk at a time,
/// until done, stopped or refused.
#[cfg(target_os = "linux")]
fn populate(start: usize, bytes: usize, stop: &AtomicBool) {
    const PAGE: usize = 4096;
    let end = start + bytes;
    let mut at = start.next_multiple_of(PAGE);
    while at < end && !stop.load(Ordering::Relaxed) {
        let len = CHUNK.min(end - at) / PAGE * PAGE;
        if len == 0 {
            break;
        }
        // SAFETY: madvise only asks the kernel to fault in pages of this
        // range; it reads and writes no memory of this process and never
        // changes what a page holds. The range is the caller's buffer while
        // the guard lives, if the caller keeps the guard's rule; were the
        // buffer moved meanwhile, the range is unmapped (the kernel refuses,
        // and this stops) or another mapping's, whose pages are faulted in
        // holding what they held.
        let refused =
            unsafe { libc::madvise(at as *mut libc::c_void, len, libc::MADV_POPULATE_WRITE) != 0 };
        if refused {
            break;
        }
        at += len;
    }
}

#[cfg(not(target_os = "linux"))]
fn populate(_start: usize, _bytes: usize, _stop: &AtomicBool) {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_buffer_written_beside_its_helper_holds_what_was_written() {
        let n = MIN_BYTES / 2 * 3;
        let mut buf: Vec<u16> = Vec::with_capacity(n);
        let guard = Prefault::start(&mut buf, n);
        assert_eq!(guard.helper.is_some(), cfg!(target_os = "linux"));
        buf.extend((0..n).map(|i| (i % 65_521) as u16));
        drop(guard);
        assert!(buf
            .iter()
            .enumerate()
            .all(|(i, &u)| u == (i % 65_521) as u16));
    }

    #[test]
    fn small_buffers_get_no_helper() {
        let mut buf: Vec<u8> = Vec::with_capacity(MIN_BYTES - 1);
        assert!(Prefault::start(&mut buf, usize::MAX).helper.is_none());
        // Only the part the caller will write counts.
        let mut large: Vec<u8> = Vec::with_capacity(MIN_BYTES * 2);
        assert!(Prefault::start(&mut large, MIN_BYTES - 1).helper.is_none());
        let mut written: Vec<u8> = vec![0; MIN_BYTES * 2];
        // No spare capacity: nothing to populate.
        assert!(Prefault::start(&mut written, usize::MAX).helper.is_none());
    }
}
