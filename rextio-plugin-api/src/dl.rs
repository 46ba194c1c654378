//! One wrapper around the dynamic loader (feature `dl`, Unix): open an image, look a symbol up
//! in that image only, close it once. Callers decide which image and which flags (a runtime
//! binding the framework's already-mapped libraries, a device provider loading a reviewed
//! driver) and word their own errors; what this module guarantees is the `dlerror` protocol
//! (cleared before each call, read right after a failure) and one `dlclose` per open.

use std::ffi::{c_int, c_void, CStr, CString};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::ptr::NonNull;

/// `RTLD_NOW | RTLD_LOCAL`: bind every symbol at open, export none to later loads.
pub const NOW_LOCAL: c_int = libc::RTLD_NOW | libc::RTLD_LOCAL;
/// `NOW_LOCAL | RTLD_NOLOAD`: the same, and only an image this process has already mapped.
pub const NOW_LOCAL_NOLOAD: c_int = NOW_LOCAL | libc::RTLD_NOLOAD;

/// An open image; closed when dropped (unless [`DlImage::retain`]ed).
#[derive(Debug)]
pub struct DlImage {
    handle: NonNull<c_void>,
    path: PathBuf,
}

// SAFETY: a dlopen handle is process-wide; dlsym and dlclose are thread-safe and nothing is
// mutated through the handle.
unsafe impl Send for DlImage {}
// SAFETY: as above; `&DlImage` only allows dlsym lookups.
unsafe impl Sync for DlImage {}

/// The loader's text for the last failure on this thread.
pub fn last_error() -> String {
    // SAFETY: dlerror returns null or a NUL-terminated thread-local string.
    let p = unsafe { libc::dlerror() };
    if p.is_null() {
        "no loader error text".to_owned()
    } else {
        // SAFETY: non-null dlerror text is a valid C string until the next dl* call.
        unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
    }
}

impl DlImage {
    /// `dlopen(path, flags)`. `Err` is the loader's text (or says the path holds a NUL).
    ///
    /// # Safety
    /// Opening an image that is not yet mapped runs its initialisers: the caller must trust it
    /// (with [`NOW_LOCAL_NOLOAD`] nothing new is ever loaded).
    pub unsafe fn open(path: &Path, flags: c_int) -> Result<DlImage, String> {
        let c_path = CString::new(path.as_os_str().as_bytes())
            .map_err(|_| "the path contains a NUL byte".to_owned())?;
        // SAFETY: a valid NUL-terminated path; the caller vouches for the image.
        let raw = unsafe {
            libc::dlerror();
            libc::dlopen(c_path.as_ptr(), flags)
        };
        match NonNull::new(raw) {
            Some(handle) => Ok(DlImage {
                handle,
                path: path.to_owned(),
            }),
            None => Err(last_error()),
        }
    }

    /// The path it was opened with.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// `dlsym(handle, name)`: this image only, never `RTLD_DEFAULT`. `Err` is the loader's text.
    pub fn symbol(&self, name: &str) -> Result<NonNull<c_void>, String> {
        let c_name =
            CString::new(name).map_err(|_| format!("symbol name {name:?} contains NUL"))?;
        // SAFETY: the handle is open for self's lifetime; the name is NUL-terminated.
        let p = unsafe {
            libc::dlerror();
            libc::dlsym(self.handle.as_ptr(), c_name.as_ptr())
        };
        NonNull::new(p).ok_or_else(last_error)
    }

    /// Keep the image open for the life of the process (pointers into it outlive this value);
    /// returns the raw handle.
    pub fn retain(self) -> usize {
        let raw = self.handle.as_ptr() as usize;
        std::mem::forget(self);
        raw
    }
}

impl Drop for DlImage {
    fn drop(&mut self) {
        // SAFETY: the handle came from a successful dlopen and is closed exactly once.
        unsafe {
            libc::dlclose(self.handle.as_ptr());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn libc_opens_resolves_and_refuses_what_is_absent() {
        // The C library is mapped in every test process.
        let libc_path = Path::new(if cfg!(target_os = "macos") {
            "/usr/lib/libSystem.B.dylib"
        } else {
            "libc.so.6"
        });
        // SAFETY: the C library is already mapped; NOLOAD loads nothing new.
        let image = unsafe { DlImage::open(libc_path, NOW_LOCAL_NOLOAD) }.unwrap();
        assert!(image.symbol("strlen").is_ok());
        let missing = image.symbol("rextio_no_such_symbol").unwrap_err();
        assert!(missing.contains("rextio_no_such_symbol"), "{missing}");
        assert!(image.symbol("a\0b").unwrap_err().contains("NUL"));
        // SAFETY: NOLOAD never maps an image that is not already mapped.
        let err = unsafe { DlImage::open(Path::new("librextio-absent.so.9"), NOW_LOCAL_NOLOAD) }
            .unwrap_err();
        assert!(!err.is_empty());
        assert!(unsafe { DlImage::open(Path::new("a\0b"), NOW_LOCAL) }
            .unwrap_err()
            .contains("NUL"));
    }
}
