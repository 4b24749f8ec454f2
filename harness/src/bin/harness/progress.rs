//! The progress bar, shown on a terminal only.

use std::io::IsTerminal;

use indicatif::{ProgressBar, ProgressStyle};

/// A bar over `total` ticks; hidden when `quiet` or when the output is not
/// a terminal.
pub(crate) fn bar(total: u64, quiet: bool) -> ProgressBar {
    if quiet || !std::io::stdout().is_terminal() || !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new(total);
    let style = ProgressStyle::with_template(
        "{spinner} [{elapsed_precise}] {wide_bar} {pos}/{len} ticks ({per_sec}, {eta} left)",
    )
    .expect("a valid template");
    bar.set_style(style);
    bar
}
