//! What a run may hold (issue 39): the process's resident memory, read from `/proc/self/statm`
//! while a run goes (its budget, [`over_budget`]), and an allocation the system refuses, which
//! ends the process with one line saying so and exit status 2 instead of Rust's abort
//! (`handle_alloc_error` prints "memory allocation of N bytes failed" and raises SIGABRT, with
//! a backtrace when `RUST_BACKTRACE` is set).
//!
//! The allocator is the system's ([`std::alloc::System`]); [`Guarded`] only looks at what it
//! returns. A refusal cannot be returned to the run as an error: a global allocator may not
//! unwind, and every `Vec` that grows would need a fallible path. It is therefore the end of
//! the process; runs a sweep committed before it are in the database (each commit is durable),
//! and the sweep resumes from them.

use std::alloc::{GlobalAlloc, Layout, System};

/// The global allocator of the extension: the system's, with a refusal turned into
/// [`out_of_memory`].
pub struct Guarded;

// SAFETY: every call is `System`'s, with the same layout; only a null result is acted on.
unsafe impl GlobalAlloc for Guarded {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract is `System`'s.
        let ptr = unsafe { System.alloc(layout) };
        if ptr.is_null() {
            out_of_memory(layout.size());
        }
        ptr
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as `alloc`.
        let ptr = unsafe { System.alloc_zeroed(layout) };
        if ptr.is_null() {
            out_of_memory(layout.size());
        }
        ptr
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: as `alloc`.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: as `alloc`.
        let grown = unsafe { System.realloc(ptr, layout, new_size) };
        if grown.is_null() {
            out_of_memory(new_size);
        }
        grown
    }
}

/// Ends the process: one line on stderr naming what could not be had and what the process
/// holds, then exit status 2 (bondsim's for an error the user can fix). Nothing here may
/// allocate: the line is put together on the stack and written with `write(2)`.
fn out_of_memory(size: usize) -> ! {
    let mut line = Line::default();
    line.push(b"error: out of memory: the system refused ");
    line.push_gb(size as u64);
    line.push(b" more to this run (this process holds ");
    line.push_gb(resident_bytes().unwrap_or(0));
    line.push(b" resident); make the run smaller (fewer requests or flows, a shorter stop_s) or give it more memory\n");
    // SAFETY: writes our own buffer to stderr, then ends the process without running anything
    // that might allocate (no destructors, no atexit handlers).
    unsafe {
        libc::write(2, line.bytes.as_ptr().cast(), line.len);
        libc::_exit(2);
    }
}

/// The process's resident memory, bytes (`/proc/self/statm`'s second field, in pages), read
/// without allocating; None where there is no such file.
pub fn resident_bytes() -> Option<u64> {
    let mut buf = [0u8; 128];
    // SAFETY: a NUL-terminated path, a buffer of the length given, the descriptor closed.
    let read = unsafe {
        let fd = libc::open(c"/proc/self/statm".as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC);
        if fd < 0 {
            return None;
        }
        let read = libc::read(fd, buf.as_mut_ptr().cast(), buf.len());
        libc::close(fd);
        read
    };
    let text = buf.get(..usize::try_from(read).ok()?)?;
    let pages = text.split(|&b| b == b' ').nth(1)?;
    let pages = std::str::from_utf8(pages).ok()?.trim().parse::<u64>().ok()?;
    // SAFETY: sysconf reads a constant.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    Some(pages * u64::try_from(page).ok()?)
}

/// The error of a run whose process holds more than `limit` bytes resident (checked each time
/// the run reports progress), or None while it is within it.
pub fn over_budget(limit: Option<u64>) -> Option<String> {
    let limit = limit?;
    let held = resident_bytes()?;
    (held > limit).then(|| {
        format!(
            "the run was stopped holding {:.1} GB, above the memory budget of {:.1} GB; make it smaller, or \
             pass --force (force=True from Python) to run it anyway",
            held as f64 / 1e9,
            limit as f64 / 1e9,
        )
    })
}

/// A line of at most 256 bytes, written on the stack.
struct Line {
    bytes: [u8; 256],
    len: usize,
}

impl Default for Line {
    fn default() -> Self {
        Line { bytes: [0; 256], len: 0 }
    }
}

impl Line {
    fn push(&mut self, text: &[u8]) {
        let room = (self.bytes.len() - self.len).min(text.len());
        self.bytes[self.len..self.len + room].copy_from_slice(&text[..room]);
        self.len += room;
    }

    /// `bytes` as gigabytes with one decimal ("2.1 GB").
    fn push_gb(&mut self, bytes: u64) {
        let tenths = (bytes + 50_000_000) / 100_000_000;
        self.push_int(tenths / 10);
        self.push(b".");
        self.push_int(tenths % 10);
        self.push(b" GB");
    }

    fn push_int(&mut self, mut n: u64) {
        let mut digits = [0u8; 20];
        let mut i = digits.len();
        loop {
            i -= 1;
            digits[i] = b'0' + (n % 10) as u8;
            n /= 10;
            if n == 0 {
                break;
            }
        }
        self.push(&digits[i..]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_says_gigabytes_with_one_decimal() {
        let mut line = Line::default();
        line.push_gb(2_147_483_648);
        line.push(b" ");
        line.push_gb(0);
        line.push(b" ");
        line.push_gb(12_949_999_999);
        assert_eq!(&line.bytes[..line.len], b"2.1 GB 0.0 GB 12.9 GB");
    }

    #[test]
    fn the_resident_memory_is_read_and_judged() {
        let held = resident_bytes().expect("Linux has /proc/self/statm");
        assert!(held > 1 << 20, "{held}");
        assert!(over_budget(Some(1)).expect("above one byte").contains("memory budget"));
        assert_eq!(over_budget(Some(u64::MAX)), None);
        assert_eq!(over_budget(None), None);
    }
}
