//! Signals: Ctrl-C (and `SIGTERM`, `SIGHUP`) removes the temporary files
//! of unfinished outputs before the process ends, so an interrupted save
//! leaves the old file and nothing else; `SIGXFSZ` (a write past `ulimit
//! -f`) is caught, so the write fails with "File too large" and the
//! output is cleaned up, instead of the process being killed.

/// Installs the handlers (Unix; nothing elsewhere). If they cannot be
/// installed, the default actions stay.
#[cfg(unix)]
pub(crate) fn install() {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM, SIGXFSZ};
    // A handler that does nothing replaces the default "terminate": the
    // write that went past the limit then returns EFBIG.
    let flag = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let _ = signal_hook::flag::register(SIGXFSZ, flag);
    let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP]) else {
        return;
    };
    let _ = std::thread::Builder::new()
        .name("harness-signals".into())
        .spawn(move || {
            if let Some(signal) = signals.forever().next() {
                let removed = harness::remove_unfinished_outputs();
                let what = if removed == 0 {
                    String::new()
                } else {
                    format!("; {removed} unfinished output removed, the old file kept")
                };
                crate::output::note(&format!("error: interrupted (signal {signal}){what}"));
                std::process::exit(128 + signal);
            }
        });
}

#[cfg(not(unix))]
pub(crate) fn install() {}
