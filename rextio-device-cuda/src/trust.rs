//! The trust boundary for files the provider executes or loads.
//!
//! A file is trusted when it is given by absolute path, exists as a regular file, and neither it
//! nor any ancestor directory of its canonical path is group- or world-writable or owned by an
//! unexpected user. Production policies check every ancestor up to `/`; tests may stop the
//! ancestor walk at a private temporary directory (whose own parents, such as `/tmp`, are
//! world-writable) through [`TrustPolicy::ancestors_until`].

use std::path::{Path, PathBuf};

/// Who may own the file and its ancestor directories.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OwnerRule {
    /// Only root (uid 0): the driver image.
    Root,
    /// Root or the effective user running the provider: the probe executable.
    RootOrCurrentUser,
    /// Exactly these uids (tests).
    Uids(Vec<u32>),
}

/// How a file on the trust boundary is checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrustPolicy {
    /// Allowed owners of the file and of each checked ancestor.
    pub owner: OwnerRule,
    /// Stop the ancestor walk after this (canonical) directory; `None` walks up to `/`.
    pub ancestors_until: Option<PathBuf>,
    /// Whether the file must carry an execute bit.
    pub require_executable: bool,
    /// Canonical roots the file must lie under; empty allows any location.
    pub allowed_roots: Vec<PathBuf>,
}

impl TrustPolicy {
    /// The production policy for `probe_executable`: owned by root or the current user, no
    /// group/world-writable file or ancestor up to `/`, executable.
    pub fn probe_executable() -> TrustPolicy {
        TrustPolicy {
            owner: OwnerRule::RootOrCurrentUser,
            ancestors_until: None,
            require_executable: true,
            allowed_roots: Vec::new(),
        }
    }

    /// The production policy for the CUDA driver image: root-owned, under the given reviewed
    /// roots, no group/world-writable file or ancestor up to `/`.
    pub fn driver_image(roots: &[&str]) -> TrustPolicy {
        TrustPolicy {
            owner: OwnerRule::Root,
            ancestors_until: None,
            require_executable: false,
            allowed_roots: roots.iter().map(PathBuf::from).collect(),
        }
    }
}

/// Which object on the trust boundary failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Subject {
    /// The file itself.
    File,
    /// An ancestor directory, this many levels above the file (1 = its directory).
    Ancestor(usize),
}

impl Subject {
    /// Words for messages that must not contain the path.
    pub fn describe(self) -> String {
        match self {
            Subject::File => "the file itself".to_owned(),
            Subject::Ancestor(1) => "its directory".to_owned(),
            Subject::Ancestor(n) => format!("its ancestor directory {n} levels up"),
        }
    }
}

/// Why a file is not trusted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TrustError {
    /// Relative path.
    #[error("the path is not absolute")]
    NotAbsolute,
    /// Nothing at the path.
    #[error("the file does not exist")]
    Missing,
    /// A directory, device, fifo...
    #[error("the path is not a regular file")]
    NotFile,
    /// No execute bit.
    #[error("the file has no execute permission")]
    NotExecutable,
    /// Group- or world-writable.
    #[error("{} is group- or world-writable (mode {mode:o})", subject.describe())]
    Writable {
        /// What failed.
        subject: Subject,
        /// Its permission bits.
        mode: u32,
    },
    /// Unexpected owner.
    #[error("{} is owned by uid {uid}, which the policy does not trust", subject.describe())]
    Owner {
        /// What failed.
        subject: Subject,
        /// Its owner.
        uid: u32,
    },
    /// Canonical path outside the allowed roots.
    #[error("the canonical path lies outside the reviewed roots")]
    OutsideRoots,
    /// An I/O error while inspecting.
    #[error("cannot inspect the file: {0}")]
    Io(String),
    /// No ownership model on this platform.
    #[error("file trust checks are not implemented on this platform")]
    Unsupported,
}

/// Check `path` against `policy`; on success return its canonical path, which is what the
/// caller must execute or load (so a swapped symlink cannot redirect it afterwards).
pub fn check_trusted_file(path: &Path, policy: &TrustPolicy) -> Result<PathBuf, TrustError> {
    if !path.is_absolute() {
        return Err(TrustError::NotAbsolute);
    }
    imp::check(path, policy)
}

#[cfg(unix)]
mod imp {
    use super::*;
    use std::fs;
    use std::io::ErrorKind;
    use std::os::unix::fs::{MetadataExt, PermissionsExt};

    fn owner_ok(rule: &OwnerRule, uid: u32) -> bool {
        match rule {
            OwnerRule::Root => uid == 0,
            // SAFETY: geteuid has no preconditions and cannot fail.
            OwnerRule::RootOrCurrentUser => uid == 0 || uid == unsafe { libc::geteuid() },
            OwnerRule::Uids(uids) => uids.contains(&uid),
        }
    }

    fn check_one(
        meta: &fs::Metadata,
        subject: Subject,
        rule: &OwnerRule,
    ) -> Result<(), TrustError> {
        let mode = meta.permissions().mode() & 0o7777;
        if mode & 0o022 != 0 {
            return Err(TrustError::Writable { subject, mode });
        }
        if !owner_ok(rule, meta.uid()) {
            return Err(TrustError::Owner {
                subject,
                uid: meta.uid(),
            });
        }
        Ok(())
    }

    pub(super) fn check(path: &Path, policy: &TrustPolicy) -> Result<PathBuf, TrustError> {
        let canonical = fs::canonicalize(path).map_err(|e| match e.kind() {
            ErrorKind::NotFound => TrustError::Missing,
            _ => TrustError::Io(e.kind().to_string()),
        })?;
        if !policy.allowed_roots.is_empty()
            && !policy
                .allowed_roots
                .iter()
                .any(|root| canonical.starts_with(root))
        {
            return Err(TrustError::OutsideRoots);
        }
        let meta = fs::metadata(&canonical).map_err(|e| TrustError::Io(e.kind().to_string()))?;
        if !meta.is_file() {
            return Err(TrustError::NotFile);
        }
        if policy.require_executable && meta.permissions().mode() & 0o111 == 0 {
            return Err(TrustError::NotExecutable);
        }
        check_one(&meta, Subject::File, &policy.owner)?;
        for (depth, dir) in canonical.ancestors().skip(1).enumerate() {
            let meta = fs::metadata(dir).map_err(|e| TrustError::Io(e.kind().to_string()))?;
            check_one(&meta, Subject::Ancestor(depth + 1), &policy.owner)?;
            if policy.ancestors_until.as_deref() == Some(dir) {
                break;
            }
        }
        Ok(canonical)
    }
}

#[cfg(not(unix))]
mod imp {
    use super::*;

    pub(super) fn check(_path: &Path, _policy: &TrustPolicy) -> Result<PathBuf, TrustError> {
        Err(TrustError::Unsupported)
    }
}

#[cfg(test)]
#[cfg(unix)]
mod tests {
    use super::*;
    use std::fs;
    use std::os::unix::fs::{symlink, PermissionsExt};

    fn chmod(p: &Path, mode: u32) {
        fs::set_permissions(p, fs::Permissions::from_mode(mode)).unwrap();
    }

    fn setup() -> (tempfile::TempDir, PathBuf, TrustPolicy) {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        chmod(&root, 0o755);
        fs::create_dir(root.join("bin")).unwrap();
        chmod(&root.join("bin"), 0o755);
        let file = root.join("bin/tool");
        fs::write(&file, "#!/bin/sh\n").unwrap();
        chmod(&file, 0o755);
        let policy = TrustPolicy {
            // SAFETY: geteuid has no preconditions.
            owner: OwnerRule::Uids(vec![unsafe { libc::geteuid() }]),
            ancestors_until: Some(root),
            require_executable: true,
            allowed_roots: Vec::new(),
        };
        (dir, file, policy)
    }

    #[test]
    fn a_private_executable_is_trusted_and_canonicalised() {
        let (dir, file, policy) = setup();
        assert_eq!(check_trusted_file(&file, &policy).unwrap(), file);
        let link = dir.path().join("link");
        symlink(&file, &link).unwrap();
        assert_eq!(check_trusted_file(&link, &policy).unwrap(), file);
    }

    #[test]
    fn each_violation_has_its_error() {
        let (dir, file, policy) = setup();
        let root = dir.path().canonicalize().unwrap();
        assert_eq!(
            check_trusted_file(Path::new("bin/tool"), &policy),
            Err(TrustError::NotAbsolute)
        );
        assert_eq!(
            check_trusted_file(&root.join("nope"), &policy),
            Err(TrustError::Missing)
        );
        assert_eq!(
            check_trusted_file(&root.join("bin"), &policy),
            Err(TrustError::NotFile)
        );
        chmod(&file, 0o644);
        assert_eq!(
            check_trusted_file(&file, &policy),
            Err(TrustError::NotExecutable)
        );
        chmod(&file, 0o775);
        assert!(matches!(
            check_trusted_file(&file, &policy),
            Err(TrustError::Writable {
                subject: Subject::File,
                ..
            })
        ));
        chmod(&file, 0o757);
        assert!(matches!(
            check_trusted_file(&file, &policy),
            Err(TrustError::Writable {
                subject: Subject::File,
                ..
            })
        ));
        chmod(&file, 0o755);
        chmod(&root.join("bin"), 0o777);
        assert!(matches!(
            check_trusted_file(&file, &policy),
            Err(TrustError::Writable {
                subject: Subject::Ancestor(1),
                ..
            })
        ));
        chmod(&root.join("bin"), 0o755);
        chmod(&root, 0o775);
        assert!(matches!(
            check_trusted_file(&file, &policy),
            Err(TrustError::Writable {
                subject: Subject::Ancestor(2),
                ..
            })
        ));
        chmod(&root, 0o755);
        let foreign = TrustPolicy {
            owner: OwnerRule::Uids(vec![4_000_000]),
            ..policy.clone()
        };
        assert!(matches!(
            check_trusted_file(&file, &foreign),
            Err(TrustError::Owner {
                subject: Subject::File,
                ..
            })
        ));
        let rooted = TrustPolicy {
            allowed_roots: vec![PathBuf::from("/usr/lib")],
            ..policy.clone()
        };
        assert_eq!(
            check_trusted_file(&file, &rooted),
            Err(TrustError::OutsideRoots)
        );
        assert_eq!(check_trusted_file(&file, &policy).unwrap(), file);
    }

    #[test]
    fn production_walk_reaches_world_writable_tmp() {
        // Without a stop directory the walk continues to `/`, and `/tmp` (mode 1777) fails it:
        // the production probe policy refuses executables below a world-writable directory.
        let (dir, file, _) = setup();
        if fs::metadata(std::env::temp_dir())
            .unwrap()
            .permissions()
            .mode()
            & 0o002
            == 0
        {
            return; // temp dir not world-writable here; nothing to demonstrate
        }
        let err = check_trusted_file(&file, &TrustPolicy::probe_executable()).unwrap_err();
        assert!(
            matches!(
                err,
                TrustError::Writable {
                    subject: Subject::Ancestor(_),
                    ..
                }
            ),
            "{err}"
        );
        drop(dir);
    }
}
