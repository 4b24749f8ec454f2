//! A cache prefetch hint, for batch operations on large pools that know
//! the addresses they will touch before they touch them.

/// Asks the processor to bring the cache line holding `address` into the
/// cache closest to the core, without waiting for it. A hint only: it
/// reads nothing into the program and never faults, whatever the address
/// (a dangling or null pointer included). A no-op where the target has no
/// stable prefetch instruction (only `x86_64` has one in stable Rust).
#[inline(always)]
pub(crate) fn prefetch<T>(address: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: `prefetcht0` is a hint that never faults and never reads
    // memory into a register, so any address is sound; SSE, which the
    // intrinsic needs, is part of the x86_64 baseline.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(address.cast());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = address;
}
