//! Peak resident memory of this process.

/// The peak resident set size of this process, in bytes: `VmHWM` from
/// `/proc/self/status` on Linux; `None` elsewhere or when it cannot be
/// read.
///
/// # Examples
///
/// ```
/// let peak = harness::peak_resident_bytes();
/// if cfg!(target_os = "linux") {
///     assert!(peak.unwrap() > 0);
/// }
/// ```
pub fn peak_resident_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    parse_vm_hwm(&status)
}

fn parse_vm_hwm(status: &str) -> Option<u64> {
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let mut words = line["VmHWM:".len()..].split_whitespace();
    let value: u64 = words.next()?.parse().ok()?;
    match words.next() {
        Some("kB") => Some(value * 1024),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn vm_hwm_is_read_in_bytes() {
        let status = "Name:\tharness\nVmPeak:\t  9000 kB\nVmHWM:\t    1234 kB\nVmRSS:\t 1000 kB\n";
        assert_eq!(super::parse_vm_hwm(status), Some(1234 * 1024));
        assert_eq!(super::parse_vm_hwm("VmRSS: 5 kB\n"), None);
    }
}
