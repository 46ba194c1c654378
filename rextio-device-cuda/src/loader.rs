//! The shared driver loader: one reviewed CUDA driver image, opened by absolute path.
//!
//! Linux tries an architecture-specific list of absolute `libcuda.so.1` paths
//! ([`reviewed_candidates`]). The first path that exists is selected (later ones are never tried,
//! so a broken primary install fails closed instead of falling through), canonicalised, and must
//! lie under a reviewed system root ([`reviewed_roots`]), be owned by root, and have no group- or
//! world-writable file or ancestor directory. Only then is it opened with
//! `dlopen(RTLD_NOW | RTLD_LOCAL)`. There is no `PATH`, `LD_LIBRARY_PATH`, registry or
//! common-directory search. Absolute selection does not neutralise `LD_PRELOAD`, transitive
//! `DT_NEEDED` resolution, a compromised same-user process or a hostile OS: run it on a trusted
//! filesystem.
//!
//! Windows (load `nvcuda.dll` from System32 only) is not implemented yet: there the loader
//! reports [`LoadError::Unsupported`].

use crate::ffi::{DriverFns, InventoryFns, INVENTORY_SYMBOLS, RUNTIME_SYMBOLS};
use crate::trust::{check_trusted_file, TrustError, TrustPolicy};
use std::path::{Path, PathBuf};

/// Why the driver image could not be opened or resolved.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LoadError {
    /// No candidate path exists.
    #[error("no CUDA driver image exists at any reviewed path")]
    Missing,
    /// The selected image failed the trust checks.
    #[error("the CUDA driver image is not trusted: {0}")]
    Untrusted(TrustError),
    /// `dlopen` failed.
    #[error("the CUDA driver image could not be loaded: {0}")]
    Load(String),
    /// A required symbol is absent.
    #[error("the CUDA driver image lacks `{0}`")]
    Symbol(&'static str),
    /// No reviewed loader on this platform.
    #[error("no reviewed CUDA driver loader exists for this platform")]
    Unsupported,
}

/// The absolute `libcuda.so.1` paths tried on this architecture, in order.
pub fn reviewed_candidates() -> &'static [&'static str] {
    if cfg!(all(target_os = "linux", target_arch = "x86_64")) {
        &[
            "/usr/lib/x86_64-linux-gnu/libcuda.so.1",
            "/usr/lib64/libcuda.so.1",
            "/usr/lib/wsl/lib/libcuda.so.1",
            "/usr/lib/libcuda.so.1",
        ]
    } else if cfg!(all(target_os = "linux", target_arch = "aarch64")) {
        &[
            "/usr/lib/aarch64-linux-gnu/libcuda.so.1",
            "/usr/lib/aarch64-linux-gnu/tegra/libcuda.so.1",
            "/usr/lib64/libcuda.so.1",
            "/usr/lib/libcuda.so.1",
        ]
    } else {
        &[]
    }
}

/// The system roots a canonical driver image must lie under.
pub fn reviewed_roots() -> &'static [&'static str] {
    if cfg!(target_os = "linux") {
        &["/usr/lib", "/usr/lib64"]
    } else {
        &[]
    }
}

/// Select the driver image: the first candidate that exists, which must then pass `policy`.
///
/// Returns the canonical path to load.
pub fn select_driver_image(
    candidates: &[&Path],
    policy: &TrustPolicy,
) -> Result<PathBuf, LoadError> {
    let selected = candidates
        .iter()
        .find(|c| std::fs::symlink_metadata(c).is_ok())
        .ok_or(LoadError::Missing)?;
    check_trusted_file(selected, policy).map_err(|e| match e {
        TrustError::Missing => LoadError::Missing,
        other => LoadError::Untrusted(other),
    })
}

/// An open, reviewed CUDA driver image. Closing it (drop) unloads nothing while symbols
/// resolved from it are in use only because every [`crate::runtime::DriverApi`] holds an `Arc`
/// to it.
#[derive(Debug)]
pub struct DriverImage {
    #[cfg(unix)]
    image: rextio_plugin_api::dl::DlImage,
    #[cfg(not(unix))]
    path: PathBuf,
}

impl DriverImage {
    /// Open the reviewed driver image of this host (production policy).
    pub fn open_reviewed() -> Result<DriverImage, LoadError> {
        if reviewed_candidates().is_empty() {
            return Err(LoadError::Unsupported);
        }
        let candidates: Vec<&Path> = reviewed_candidates().iter().map(Path::new).collect();
        let path = select_driver_image(&candidates, &TrustPolicy::driver_image(reviewed_roots()))?;
        DriverImage::open_canonical(path)
    }

    /// The canonical path that was loaded.
    pub fn path(&self) -> &Path {
        #[cfg(unix)]
        {
            self.image.path()
        }
        #[cfg(not(unix))]
        {
            &self.path
        }
    }

    #[cfg(unix)]
    fn open_canonical(path: PathBuf) -> Result<DriverImage, LoadError> {
        use rextio_plugin_api::dl::{DlImage, NOW_LOCAL};
        // SAFETY: loading the reviewed driver (trusted by `select_driver_image`) runs its
        // initialisers, which is the point of loading it.
        let image = unsafe { DlImage::open(&path, NOW_LOCAL) }.map_err(LoadError::Load)?;
        Ok(DriverImage { image })
    }

    #[cfg(not(unix))]
    fn open_canonical(_path: PathBuf) -> Result<DriverImage, LoadError> {
        Err(LoadError::Unsupported)
    }

    /// Look a symbol up in this image only.
    #[cfg(unix)]
    pub fn symbol(&self, name: &'static str) -> Result<*mut std::ffi::c_void, LoadError> {
        self.image
            .symbol(name)
            .map(std::ptr::NonNull::as_ptr)
            .map_err(|_| LoadError::Symbol(name))
    }

    /// Look a symbol up in this image only.
    #[cfg(not(unix))]
    pub fn symbol(&self, name: &'static str) -> Result<*mut std::ffi::c_void, LoadError> {
        Err(LoadError::Symbol(name))
    }

    /// Resolve the inventory entry points (all the probe calls).
    pub fn inventory(&self) -> Result<InventoryFns, LoadError> {
        let [init, version, count, get, name, attr] = INVENTORY_SYMBOLS;
        // SAFETY (each transmute): the symbol comes from the reviewed CUDA driver image, whose
        // exported entry point of that name has exactly the declared C signature.
        unsafe {
            Ok(InventoryFns {
                init: std::mem::transmute::<*mut std::ffi::c_void, crate::ffi::CuInitFn>(
                    self.symbol(init)?,
                ),
                driver_get_version: std::mem::transmute::<
                    *mut std::ffi::c_void,
                    crate::ffi::CuDriverGetVersionFn,
                >(self.symbol(version)?),
                device_get_count: std::mem::transmute::<
                    *mut std::ffi::c_void,
                    crate::ffi::CuDeviceGetCountFn,
                >(self.symbol(count)?),
                device_get: std::mem::transmute::<*mut std::ffi::c_void, crate::ffi::CuDeviceGetFn>(
                    self.symbol(get)?,
                ),
                device_get_name: std::mem::transmute::<
                    *mut std::ffi::c_void,
                    crate::ffi::CuDeviceGetNameFn,
                >(self.symbol(name)?),
                device_get_attribute: std::mem::transmute::<
                    *mut std::ffi::c_void,
                    crate::ffi::CuDeviceGetAttributeFn,
                >(self.symbol(attr)?),
            })
        }
    }

    /// Resolve every entry point the RAII runtime uses.
    pub fn driver_fns(&self) -> Result<DriverFns, LoadError> {
        let inventory = self.inventory()?;
        let [ctx_create, ctx_destroy, push, pop, s_create, s_sync, s_destroy, alloc, free] =
            RUNTIME_SYMBOLS;
        // SAFETY (each transmute): as in `inventory`.
        unsafe {
            use std::ffi::c_void;
            use std::mem::transmute;
            Ok(DriverFns {
                inventory,
                ctx_create: transmute::<*mut c_void, crate::ffi::CuCtxCreateFn>(
                    self.symbol(ctx_create)?,
                ),
                ctx_destroy: transmute::<*mut c_void, crate::ffi::CuCtxDestroyFn>(
                    self.symbol(ctx_destroy)?,
                ),
                ctx_push_current: transmute::<*mut c_void, crate::ffi::CuCtxPushCurrentFn>(
                    self.symbol(push)?,
                ),
                ctx_pop_current: transmute::<*mut c_void, crate::ffi::CuCtxPopCurrentFn>(
                    self.symbol(pop)?,
                ),
                stream_create: transmute::<*mut c_void, crate::ffi::CuStreamCreateFn>(
                    self.symbol(s_create)?,
                ),
                stream_synchronize: transmute::<*mut c_void, crate::ffi::CuStreamSynchronizeFn>(
                    self.symbol(s_sync)?,
                ),
                stream_destroy: transmute::<*mut c_void, crate::ffi::CuStreamDestroyFn>(
                    self.symbol(s_destroy)?,
                ),
                mem_alloc: transmute::<*mut c_void, crate::ffi::CuMemAllocFn>(self.symbol(alloc)?),
                mem_free: transmute::<*mut c_void, crate::ffi::CuMemFreeFn>(self.symbol(free)?),
            })
        }
    }
}

#[cfg(test)]
#[cfg(unix)]
mod tests {
    use super::*;
    use crate::trust::{OwnerRule, Subject};
    use std::fs;
    use std::os::unix::fs::{symlink, PermissionsExt};

    #[test]
    fn reviewed_candidates_are_absolute_and_under_reviewed_roots() {
        for c in reviewed_candidates() {
            let p = Path::new(c);
            assert!(p.is_absolute(), "{c}");
            assert!(p.ends_with("libcuda.so.1"), "{c}");
            assert!(
                reviewed_roots().iter().any(|r| p.starts_with(r)),
                "{c} outside reviewed roots"
            );
        }
        if cfg!(all(target_os = "linux", target_arch = "x86_64")) {
            assert_eq!(
                reviewed_candidates()[0],
                "/usr/lib/x86_64-linux-gnu/libcuda.so.1"
            );
        }
    }

    fn policy(root: &Path) -> TrustPolicy {
        TrustPolicy {
            // SAFETY: geteuid has no preconditions.
            owner: OwnerRule::Uids(vec![unsafe { libc::geteuid() }]),
            ancestors_until: Some(root.to_path_buf()),
            require_executable: false,
            allowed_roots: vec![root.join("lib")],
        }
    }

    #[test]
    fn selection_takes_the_first_existing_candidate_and_fails_closed() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        fs::set_permissions(&root, fs::Permissions::from_mode(0o755)).unwrap();
        let lib = root.join("lib");
        fs::create_dir(&lib).unwrap();
        fs::set_permissions(&lib, fs::Permissions::from_mode(0o755)).unwrap();
        let first = lib.join("first/libcuda.so.1");
        let second = lib.join("libcuda.so.1");
        let image = lib.join("libcuda.so.550.1");
        fs::write(&image, b"\x7fELF").unwrap();
        fs::set_permissions(&image, fs::Permissions::from_mode(0o644)).unwrap();
        symlink(&image, &second).unwrap();
        let p = policy(&root);

        assert_eq!(
            select_driver_image(&[first.as_path()], &p),
            Err(LoadError::Missing)
        );
        assert_eq!(
            select_driver_image(&[first.as_path(), second.as_path()], &p).unwrap(),
            image,
            "the symlink is canonicalised to the versioned image"
        );

        // A world-writable image is refused, not skipped in favour of a later candidate.
        fs::set_permissions(&image, fs::Permissions::from_mode(0o666)).unwrap();
        let other = lib.join("other.so");
        fs::write(&other, b"").unwrap();
        assert!(matches!(
            select_driver_image(&[second.as_path(), other.as_path()], &p),
            Err(LoadError::Untrusted(TrustError::Writable {
                subject: Subject::File,
                ..
            }))
        ));
        fs::set_permissions(&image, fs::Permissions::from_mode(0o644)).unwrap();

        // A link that escapes the reviewed roots is refused.
        let outside = root.join("evil.so");
        fs::write(&outside, b"").unwrap();
        fs::set_permissions(&outside, fs::Permissions::from_mode(0o644)).unwrap();
        let escape = lib.join("escape.so.1");
        symlink(&outside, &escape).unwrap();
        assert_eq!(
            select_driver_image(&[escape.as_path()], &p),
            Err(LoadError::Untrusted(TrustError::OutsideRoots))
        );

        // The production policy demands root ownership.
        let prod = TrustPolicy {
            ancestors_until: Some(root.clone()),
            ..TrustPolicy::driver_image(&[])
        };
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } != 0 {
            assert!(matches!(
                select_driver_image(&[second.as_path()], &prod),
                Err(LoadError::Untrusted(TrustError::Owner { .. }))
            ));
        } else {
            assert_eq!(
                select_driver_image(&[second.as_path()], &prod).unwrap(),
                image
            );
        }
    }

    #[test]
    fn a_non_library_fails_to_load_with_a_message() {
        let dir = tempfile::tempdir().unwrap();
        let fake = dir.path().join("libcuda.so.1");
        fs::write(&fake, b"not an ELF file").unwrap();
        let err = DriverImage::open_canonical(fake).unwrap_err();
        assert!(
            matches!(err, LoadError::Load(ref m) if !m.is_empty()),
            "{err}"
        );
    }
}
