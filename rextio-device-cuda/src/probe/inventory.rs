//! What the probe binary does: load the reviewed driver and take the inventory.

use super::{
    ComputeCapability, ProbeDevice, ProbeErrorDetail, ProbeReport, ProbeStatus, MAX_DEVICES,
};
use crate::ffi::{
    CuDevice, CuResult, InventoryFns, CUDA_ERROR_NO_DEVICE, CUDA_SUCCESS,
    CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
};
use crate::loader::{DriverImage, LoadError};
use std::ffi::{c_char, c_int};

/// `CUDA_ERROR_UNKNOWN`, reported when the driver returns nonsense (a negative device count).
const CUDA_ERROR_UNKNOWN: CuResult = 999;

fn failed(
    status: ProbeStatus,
    entry_point: &str,
    code: CuResult,
    driver_version: Option<u32>,
) -> ProbeReport {
    ProbeReport {
        driver_version,
        error: Some(ProbeErrorDetail {
            entry_point: entry_point.to_owned(),
            code: Some(code),
        }),
        ..ProbeReport::with_status(status)
    }
}

/// Take the inventory through these entry points.
///
/// Calls `cuDriverGetVersion`, `cuInit(0)`, `cuDeviceGetCount`, and per device `cuDeviceGet`,
/// `cuDeviceGetName` and `cuDeviceGetAttribute` for the two compute-capability attributes;
/// nothing else. `cuInit` answering `CUDA_ERROR_NO_DEVICE` is an `ok` report with no devices.
///
/// # Safety
/// Every pointer in `fns` must be a function with the declared CUDA Driver API signature and
/// semantics (the real driver, or a test fake honouring the same contract).
pub unsafe fn collect_inventory(fns: &InventoryFns) -> ProbeReport {
    let mut version: c_int = 0;
    // SAFETY: the caller guarantees the signature; `version` is a valid out-pointer.
    let rc = unsafe { (fns.driver_get_version)(&mut version) };
    if rc != CUDA_SUCCESS {
        return failed(
            ProbeStatus::DriverQueryFailed,
            "cuDriverGetVersion",
            rc,
            None,
        );
    }
    let driver_version = u32::try_from(version).ok();
    let Some(driver_version) = driver_version else {
        return failed(
            ProbeStatus::DriverQueryFailed,
            "cuDriverGetVersion",
            CUDA_ERROR_UNKNOWN,
            None,
        );
    };
    // SAFETY: as above.
    let rc = unsafe { (fns.init)(0) };
    if rc == CUDA_ERROR_NO_DEVICE {
        return ProbeReport::ok(driver_version, &[]);
    }
    if rc != CUDA_SUCCESS {
        return failed(
            ProbeStatus::DriverInitFailed,
            "cuInit",
            rc,
            Some(driver_version),
        );
    }
    let mut count: c_int = 0;
    // SAFETY: as above.
    let rc = unsafe { (fns.device_get_count)(&mut count) };
    if rc != CUDA_SUCCESS {
        return failed(
            ProbeStatus::DriverQueryFailed,
            "cuDeviceGetCount",
            rc,
            Some(driver_version),
        );
    }
    let Some(count) = u32::try_from(count).ok().filter(|&c| c <= MAX_DEVICES) else {
        return failed(
            ProbeStatus::DriverQueryFailed,
            "cuDeviceGetCount",
            CUDA_ERROR_UNKNOWN,
            Some(driver_version),
        );
    };
    let mut devices = Vec::new();
    for ordinal in 0..count {
        // SAFETY: the function's contract.
        match unsafe { device_at(fns, ordinal, driver_version) } {
            Ok(d) => devices.push(d),
            Err(report) => return report,
        }
    }
    ProbeReport {
        device_count: count,
        devices,
        driver_version: Some(driver_version),
        ..ProbeReport::with_status(ProbeStatus::Ok)
    }
}

/// Device `ordinal`'s name and compute capability, or the failed report.
///
/// # Safety
/// As [`collect_inventory`].
unsafe fn device_at(
    fns: &InventoryFns,
    ordinal: u32,
    driver_version: u32,
) -> Result<ProbeDevice, ProbeReport> {
    let query_failed = |call: &str, rc| {
        failed(
            ProbeStatus::DriverQueryFailed,
            call,
            rc,
            Some(driver_version),
        )
    };
    // `ordinal < count <= MAX_DEVICES` fits in c_int.
    let index = c_int::try_from(ordinal).unwrap_or(c_int::MAX);
    let mut device: CuDevice = 0;
    // SAFETY: the caller guarantees the signatures; `device` is a valid out-pointer.
    let rc = unsafe { (fns.device_get)(&mut device, index) };
    if rc != CUDA_SUCCESS {
        return Err(query_failed("cuDeviceGet", rc));
    }
    let mut name = [0 as c_char; 257];
    // SAFETY: as above; the driver writes at most 256 bytes including the NUL, and the extra
    // byte keeps the buffer terminated whatever it does.
    let rc = unsafe { (fns.device_get_name)(name.as_mut_ptr(), 256, device) };
    if rc != CUDA_SUCCESS {
        return Err(query_failed("cuDeviceGetName", rc));
    }
    let mut cc = [0 as c_int; 2];
    for (slot, attribute) in cc.iter_mut().zip([
        CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
        CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
    ]) {
        // SAFETY: as above.
        let rc = unsafe { (fns.device_get_attribute)(slot, attribute, device) };
        if rc != CUDA_SUCCESS {
            return Err(query_failed("cuDeviceGetAttribute", rc));
        }
    }
    let (Ok(major), Ok(minor)) = (u32::try_from(cc[0]), u32::try_from(cc[1])) else {
        return Err(query_failed("cuDeviceGetAttribute", CUDA_ERROR_UNKNOWN));
    };
    Ok(ProbeDevice {
        ordinal,
        name: device_name(&name),
        compute_capability: ComputeCapability { major, minor },
    })
}

/// A device name as the driver wrote it (NUL-terminated), without control characters and
/// surrounding blanks; `unnamed CUDA device` when nothing is left.
fn device_name(raw: &[c_char]) -> String {
    let bytes: Vec<u8> = raw
        .iter()
        .take_while(|&&c| c != 0)
        .map(|&c| c.to_ne_bytes()[0])
        .collect();
    let name: String = String::from_utf8_lossy(&bytes)
        .chars()
        .filter(|c| !c.is_control())
        .collect();
    match name.trim() {
        "" => "unnamed CUDA device".to_owned(),
        trimmed => trimmed.to_owned(),
    }
}

/// Open the reviewed driver image of this host and take the inventory. Never panics: every
/// failure is a report status.
pub fn collect_reviewed() -> ProbeReport {
    let image = match DriverImage::open_reviewed() {
        Ok(image) => image,
        Err(e) => return load_failure_report(&e),
    };
    let fns = match image.inventory() {
        Ok(fns) => fns,
        Err(e) => return load_failure_report(&e),
    };
    // SAFETY: the entry points were resolved by name from the reviewed CUDA driver image.
    let report = unsafe { collect_inventory(&fns) };
    drop(image);
    report
}

/// The report for a loader failure.
pub fn load_failure_report(err: &LoadError) -> ProbeReport {
    match err {
        LoadError::Missing => ProbeReport::with_status(ProbeStatus::DriverMissing),
        LoadError::Untrusted(_) => ProbeReport::with_status(ProbeStatus::DriverUntrusted),
        LoadError::Load(_) => ProbeReport::with_status(ProbeStatus::DriverLoadFailed),
        LoadError::Symbol(name) => ProbeReport {
            error: Some(ProbeErrorDetail {
                entry_point: (*name).to_owned(),
                code: None,
            }),
            ..ProbeReport::with_status(ProbeStatus::DriverSymbolMissing)
        },
        LoadError::Unsupported => ProbeReport::with_status(ProbeStatus::PlatformUnsupported),
    }
}

#[cfg(test)]
mod tests {
    //! The inventory logic against a fake driver table (there is no GPU in CI).
    use super::*;
    use crate::trust::TrustError;
    use std::cell::RefCell;

    #[derive(Clone)]
    struct FakeInventory {
        version: (CuResult, c_int),
        init: CuResult,
        count: (CuResult, c_int),
        names: Vec<&'static str>,
        cc: Vec<(c_int, c_int)>,
        fail_attribute: CuResult,
    }

    thread_local! {
        static FAKE: RefCell<Option<FakeInventory>> = const { RefCell::new(None) };
        static CALLS: RefCell<Vec<&'static str>> = const { RefCell::new(Vec::new()) };
    }

    fn fake<R>(f: impl FnOnce(&FakeInventory) -> R) -> R {
        FAKE.with(|s| f(s.borrow().as_ref().unwrap()))
    }
    fn record(name: &'static str) {
        CALLS.with(|c| c.borrow_mut().push(name));
    }

    unsafe extern "C" fn fake_init(_flags: std::ffi::c_uint) -> CuResult {
        record("cuInit");
        fake(|f| f.init)
    }
    unsafe extern "C" fn fake_version(v: *mut c_int) -> CuResult {
        record("cuDriverGetVersion");
        let (rc, value) = fake(|f| f.version);
        // SAFETY: the caller passes a valid out-pointer.
        unsafe { *v = value };
        rc
    }
    unsafe extern "C" fn fake_count(n: *mut c_int) -> CuResult {
        record("cuDeviceGetCount");
        let (rc, value) = fake(|f| f.count);
        // SAFETY: the caller passes a valid out-pointer.
        unsafe { *n = value };
        rc
    }
    unsafe extern "C" fn fake_get(d: *mut CuDevice, ordinal: c_int) -> CuResult {
        record("cuDeviceGet");
        // SAFETY: the caller passes a valid out-pointer.
        unsafe { *d = ordinal + 100 };
        0
    }
    unsafe extern "C" fn fake_name(buf: *mut c_char, len: c_int, d: CuDevice) -> CuResult {
        record("cuDeviceGetName");
        let name = fake(|f| f.names[usize::try_from(d - 100).unwrap()]);
        let bytes = name.as_bytes();
        assert!(bytes.len() < usize::try_from(len).unwrap());
        for (i, b) in bytes.iter().chain(std::iter::once(&0)).enumerate() {
            // SAFETY: i < len, the buffer holds len bytes.
            unsafe { *buf.add(i) = *b as c_char };
        }
        0
    }
    unsafe extern "C" fn fake_attr(v: *mut c_int, attr: c_int, d: CuDevice) -> CuResult {
        record("cuDeviceGetAttribute");
        let (rc, (major, minor)) =
            fake(|f| (f.fail_attribute, f.cc[usize::try_from(d - 100).unwrap()]));
        // SAFETY: the caller passes a valid out-pointer.
        unsafe {
            *v = match attr {
                CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR => major,
                CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR => minor,
                _ => panic!("the probe asked for attribute {attr}, not a compute capability"),
            }
        };
        rc
    }

    const FNS: InventoryFns = InventoryFns {
        init: fake_init,
        driver_get_version: fake_version,
        device_get_count: fake_count,
        device_get: fake_get,
        device_get_name: fake_name,
        device_get_attribute: fake_attr,
    };

    fn healthy() -> FakeInventory {
        FakeInventory {
            version: (0, 12080),
            init: 0,
            count: (0, 2),
            names: vec!["NVIDIA H200", "  NVIDIA A100\u{7}  "],
            cc: vec![(9, 0), (8, 0)],
            fail_attribute: 0,
        }
    }

    fn run_fake(f: FakeInventory) -> (ProbeReport, Vec<&'static str>) {
        FAKE.with(|s| *s.borrow_mut() = Some(f));
        CALLS.with(|c| c.borrow_mut().clear());
        // SAFETY: the fakes honour the declared signatures.
        let report = unsafe { collect_inventory(&FNS) };
        (report, CALLS.with(|c| c.borrow().clone()))
    }

    #[test]
    fn device_names_lose_control_characters_and_blanks_and_are_never_empty() {
        let raw = |s: &str| -> Vec<c_char> {
            s.bytes()
                .map(|b| c_char::from_ne_bytes([b]))
                .chain([0, b'x' as c_char])
                .collect()
        };
        assert_eq!(
            super::device_name(&raw(" NVIDIA A100\u{7} ")),
            "NVIDIA A100"
        );
        assert_eq!(super::device_name(&raw("")), "unnamed CUDA device");
        assert_eq!(
            super::device_name(&raw(" \t\u{1b} ")),
            "unnamed CUDA device"
        );
        // Nothing past the terminator is read.
        assert_eq!(super::device_name(&raw("H200")), "H200");
    }

    #[test]
    fn fake_driver_inventory_lists_devices_with_sanitised_names() {
        let (report, calls) = run_fake(healthy());
        report.validate().unwrap();
        assert_eq!(
            report,
            ProbeReport::ok(12080, &[("NVIDIA H200", 9, 0), ("NVIDIA A100", 8, 0)])
        );
        assert_eq!(
            calls[..3],
            ["cuDriverGetVersion", "cuInit", "cuDeviceGetCount"]
        );
        assert!(calls
            .iter()
            .all(|c| crate::ffi::INVENTORY_SYMBOLS.contains(c)));
        assert_eq!(
            calls
                .iter()
                .filter(|c| **c == "cuDeviceGetAttribute")
                .count(),
            4
        );
    }

    #[test]
    fn fake_driver_failures_become_report_statuses() {
        type Row = (
            fn(&mut FakeInventory),
            ProbeStatus,
            Option<(&'static str, i32)>,
        );
        let table: Vec<Row> = vec![
            (
                |f| f.version = (3, 0),
                ProbeStatus::DriverQueryFailed,
                Some(("cuDriverGetVersion", 3)),
            ),
            (
                |f| f.version = (0, -5),
                ProbeStatus::DriverQueryFailed,
                Some(("cuDriverGetVersion", 999)),
            ),
            (
                |f| f.init = 35,
                ProbeStatus::DriverInitFailed,
                Some(("cuInit", 35)),
            ),
            (
                |f| f.count = (4, 0),
                ProbeStatus::DriverQueryFailed,
                Some(("cuDeviceGetCount", 4)),
            ),
            (
                |f| f.count = (0, -1),
                ProbeStatus::DriverQueryFailed,
                Some(("cuDeviceGetCount", 999)),
            ),
            (
                |f| f.fail_attribute = 101,
                ProbeStatus::DriverQueryFailed,
                Some(("cuDeviceGetAttribute", 101)),
            ),
            (|f| f.init = CUDA_ERROR_NO_DEVICE, ProbeStatus::Ok, None),
            (|f| f.count = (0, 0), ProbeStatus::Ok, None),
        ];
        for (i, (edit, status, error)) in table.into_iter().enumerate() {
            let mut f = healthy();
            edit(&mut f);
            let (report, _) = run_fake(f);
            report.validate().unwrap_or_else(|e| panic!("row {i}: {e}"));
            assert_eq!(report.status, status, "row {i}");
            assert_eq!(
                report
                    .error
                    .as_ref()
                    .map(|e| (e.entry_point.as_str(), e.code.unwrap())),
                error,
                "row {i}"
            );
            if status == ProbeStatus::Ok {
                assert_eq!(report.device_count, 0, "row {i}");
            }
        }
    }

    #[test]
    fn loader_failures_become_valid_reports() {
        let table = [
            (LoadError::Missing, ProbeStatus::DriverMissing),
            (
                LoadError::Untrusted(TrustError::OutsideRoots),
                ProbeStatus::DriverUntrusted,
            ),
            (LoadError::Load("x".into()), ProbeStatus::DriverLoadFailed),
            (
                LoadError::Symbol("cuInit"),
                ProbeStatus::DriverSymbolMissing,
            ),
            (LoadError::Unsupported, ProbeStatus::PlatformUnsupported),
        ];
        for (err, status) in table {
            let report = load_failure_report(&err);
            report.validate().unwrap();
            assert_eq!(report.status, status);
        }
    }
}
