//! How much memory this process may still take: the least of the
//! machine's free memory, what its cgroup's memory limit leaves, and what
//! its address-space limit (`ulimit -v`, `RLIMIT_AS`) leaves, read from
//! `/proc` and `/sys/fs/cgroup` on Linux.

/// What this process may still allocate, and which limit says so.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemoryBudget {
    /// Bytes.
    pub bytes: u64,
    /// The limit that gives the figure: `"free memory"`, `"the cgroup
    /// memory limit"` or `"the address-space limit (ulimit -v)"`.
    pub limit: &'static str,
}

/// Memory the machine can give this process now, bytes: `MemAvailable`
/// plus `SwapFree` from `/proc/meminfo` on Linux; `None` elsewhere or when
/// it cannot be read.
pub fn available_memory_bytes() -> Option<u64> {
    let meminfo = std::fs::read_to_string("/proc/meminfo").ok()?;
    Some(
        kb_field(&meminfo, "MemAvailable:")?
            .saturating_add(kb_field(&meminfo, "SwapFree:").unwrap_or(0)),
    )
}

/// The least of what free memory, the cgroup memory limit and the
/// address-space limit leave this process, with the limit's name; `None`
/// when none is known (not Linux).
///
/// # Examples
///
/// ```
/// if let Some(budget) = harness::memory_budget() {
///     assert!(budget.bytes > 0, "{budget:?}");
/// }
/// ```
pub fn memory_budget() -> Option<MemoryBudget> {
    let free = available_memory_bytes().map(|bytes| MemoryBudget {
        bytes,
        limit: "free memory",
    });
    let cgroup = cgroup_left().map(|bytes| MemoryBudget {
        bytes,
        limit: "the cgroup memory limit",
    });
    let address = address_space_left().map(|bytes| MemoryBudget {
        bytes,
        limit: "the address-space limit (ulimit -v)",
    });
    [free, cgroup, address]
        .into_iter()
        .flatten()
        .min_by_key(|b| b.bytes)
}

/// A `NAME:  1234 kB` line's value, in bytes.
fn kb_field(text: &str, name: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with(name))?;
    let mut words = line[name.len()..].split_whitespace();
    let value: u64 = words.next()?.parse().ok()?;
    (words.next() == Some("kB")).then(|| value.saturating_mul(1024))
}

/// The soft `Max address space` of `/proc/self/limits`, bytes; `None`
/// when unlimited.
fn parse_address_limit(limits: &str) -> Option<u64> {
    let line = limits
        .lines()
        .find(|l| l.starts_with("Max address space"))?;
    line["Max address space".len()..]
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// What `RLIMIT_AS` leaves beyond the process's virtual size.
fn address_space_left() -> Option<u64> {
    let limit = parse_address_limit(&std::fs::read_to_string("/proc/self/limits").ok()?)?;
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    Some(limit.saturating_sub(kb_field(&status, "VmSize:").unwrap_or(0)))
}

/// A cgroup limit or usage file's value; `None` for `max` or a v1 "no
/// limit" (a figure near 2^63).
fn parse_cgroup_value(text: &str) -> Option<u64> {
    let value: u64 = text.trim().parse().ok()?;
    (value < 1 << 60).then_some(value)
}

/// The cgroup paths of `/proc/self/cgroup`: the v2 one (`0::/path`), the
/// v1 memory controller's (`N:memory:/path`).
fn parse_cgroup_paths(text: &str) -> (Option<&str>, Option<&str>) {
    let mut v2 = None;
    let mut v1 = None;
    for line in text.lines() {
        let mut parts = line.splitn(3, ':');
        let (_, controllers, path) = (parts.next(), parts.next(), parts.next());
        match (controllers, path) {
            (Some(""), Some(path)) => v2 = Some(path),
            (Some(c), Some(path)) if c.split(',').any(|c| c == "memory") => v1 = Some(path),
            _ => {}
        }
    }
    (v2, v1)
}

/// The least of `limit - usage` over the cgroup folder `dir` and its
/// ancestors up to `root`.
fn left_in(root: &str, path: &str, limit: &str, usage: &str) -> Option<u64> {
    let mut best: Option<u64> = None;
    let mut dir = std::path::PathBuf::from(format!("{root}{}", path.trim_end_matches('/')));
    loop {
        let read = |name: &str| std::fs::read_to_string(dir.join(name)).ok();
        if let Some(max) = read(limit).as_deref().and_then(parse_cgroup_value) {
            let used = read(usage)
                .as_deref()
                .and_then(parse_cgroup_value)
                .unwrap_or(0);
            let left = max.saturating_sub(used);
            best = Some(best.map_or(left, |b| b.min(left)));
        }
        if dir.as_os_str().len() <= root.len() || !dir.pop() {
            return best;
        }
    }
}

/// What the cgroup memory limit leaves (v2, else v1).
fn cgroup_left() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let (v2, v1) = parse_cgroup_paths(&text);
    let v2 = v2.and_then(|p| left_in("/sys/fs/cgroup", p, "memory.max", "memory.current"));
    let v1 = v1.and_then(|p| {
        left_in(
            "/sys/fs/cgroup/memory",
            p,
            "memory.limit_in_bytes",
            "memory.usage_in_bytes",
        )
    });
    match (v2, v1) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_limits_files_are_parsed() {
        let limits = "Limit                     Soft Limit           Hard Limit           Units\n\
                      Max processes             63704                63704                processes\n\
                      Max address space         4294967296           unlimited            bytes\n";
        assert_eq!(parse_address_limit(limits), Some(4 << 30));
        let unlimited =
            "Max address space         unlimited            unlimited            bytes\n";
        assert_eq!(parse_address_limit(unlimited), None);
        assert_eq!(kb_field("VmSize:\t  2048 kB\n", "VmSize:"), Some(2 << 20));
        assert_eq!(parse_cgroup_value("max\n"), None);
        assert_eq!(parse_cgroup_value("9223372036854771712\n"), None);
        assert_eq!(parse_cgroup_value("4294967296\n"), Some(4 << 30));
        assert_eq!(
            parse_cgroup_paths("4:memory:/a/b\n1:cpu:/\n0::/user.slice\n"),
            (Some("/user.slice"), Some("/a/b"))
        );
        assert_eq!(parse_cgroup_paths("3:cpu,memory:/x\n"), (None, Some("/x")));
    }

    #[test]
    fn the_budget_is_the_least_known_limit() {
        if let Some(budget) = memory_budget() {
            let free = available_memory_bytes().unwrap();
            assert!(budget.bytes <= free, "{budget:?} {free}");
        }
    }
}
