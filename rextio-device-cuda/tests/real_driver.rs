//! Real-driver smoke tests. They need an NVIDIA GPU, its driver at a reviewed path, and a
//! trusted filesystem, so they are ignored by default. On such a host run:
//! `cargo test -p rextio-device-cuda --test real_driver -- --ignored`.
//! Passing them is lifetime/inventory evidence only: no kernel runs, support_claim stays false.
#![cfg(target_os = "linux")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use rextio_device_cuda::probe::inventory::collect_reviewed;
use rextio_device_cuda::runtime::{CudaContext, DriverApi};
use rextio_device_cuda::ProbeStatus;

#[test]
#[ignore = "needs an NVIDIA GPU and driver"]
fn real_driver_inventory_lists_a_device() {
    let report = collect_reviewed();
    report.validate().unwrap();
    assert_eq!(report.status, ProbeStatus::Ok, "{report:?}");
    assert!(report.driver_version.unwrap() >= 12000, "{report:?}");
    assert!(report.device_count >= 1, "{report:?}");
}

#[test]
#[ignore = "needs an NVIDIA GPU and driver"]
fn real_driver_raii_lifetime_smoke() {
    let api = DriverApi::load_reviewed().unwrap();
    assert!(api.image().is_some());
    let ctx = CudaContext::create(&api, 0).unwrap();
    let stream = ctx.create_stream().unwrap();
    let mem = ctx.allocate(1 << 20).unwrap();
    assert_ne!(mem.as_raw(), 0);
    stream.synchronize().unwrap();
    drop(ctx); // children keep it alive
    mem.close().unwrap();
    stream.close().unwrap();
    drop(api);
}
