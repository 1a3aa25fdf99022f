//! Settings of the app's webview that cost nothing visible.

use switchboard_engine::launch::keep_to_this_process;

/// WebKitGTK's switch for drawing pages without GPU (accelerated) compositing.
const NO_COMPOSITING: &str = "WEBKIT_DISABLE_COMPOSITING_MODE";
/// Set (to anything) to keep WebKitGTK's GPU compositing.
pub const KEEP_COMPOSITING: &str = "SWITCHBOARD_GPU_COMPOSITING";
/// WebKitGTK's switch for its system memory-pressure monitor.
const NO_PRESSURE_MONITOR: &str = "WEBKIT_DISABLE_MEMORY_PRESSURE_MONITOR";
/// Set (to anything) to keep WebKitGTK's system memory-pressure monitor.
pub const KEEP_PRESSURE_MONITOR: &str = "SWITCHBOARD_WEBKIT_MEMORY_MONITOR";

/// The WebKitGTK switches Switchboard turns on, each with the variable that
/// keeps WebKitGTK's default instead.
///
/// - No GPU compositing. Switchboard's page is lists and forms with a few
///   short transitions: nothing that compositing layers make smoother.
///   Without them the web process holds ~85 MB less (measured with 20
///   servers under Xvfb, `.ci/bench`), and the window does not go blank on
///   GPU drivers that WebKitGTK's compositor handles badly.
/// - No memory-pressure handling. Otherwise WebKitGTK's app process wakes
///   every 1 to 5 s, for ever, to read `/proc/meminfo` and the cgroup's
///   memory files one byte per system call (~800 calls a look), and the web
///   process reads its own `/proc/self/smaps` every 30 s (~10 ms each): with
///   20 idle servers that was ~30 of the ~60 ms of CPU the whole app used in
///   a minute (measured with the scheduler's per-thread counters,
///   `tests/e2e/app.bench.mjs`). What it buys: under system-wide memory
///   pressure, or past WebKitGTK's limit for a page, the page drops caches
///   or its process is ended. Switchboard's page is lists and forms (~140 MB
///   with 200 servers) with no images or media to drop; should the system's
///   out-of-memory killer end it anyway, the page comes back
///   ([`reload_when_page_dies`]).
const SWITCHES: [(&str, &str); 2] = [
    (NO_COMPOSITING, KEEP_COMPOSITING),
    (NO_PRESSURE_MONITOR, KEEP_PRESSURE_MONITOR),
];

/// GTK's own switch for OpenGL: `disable` keeps GTK from loading and
/// probing the GL driver when it opens the display.
const GDK_GL: &str = "GDK_GL";

/// Sets WebKitGTK's switches ([`SWITCHES`]) unless the user chose otherwise
/// (set the switch or its keep-variable themselves).
///
/// With compositing off, nothing in the window draws with OpenGL (the page
/// is drawn in software and handed to GTK as an image), so GTK is also told
/// not to set up OpenGL ([`GDK_GL`]): it otherwise loads and probes the GL
/// driver while it opens the display, before the window can appear. On a
/// machine without a GPU that is Mesa's software driver with LLVM, which
/// took ~1 s of a cold start under Xvfb on the 2-core test machine
/// (`.ci/bench`; ~0.1 s with `GDK_GL=disable`). Left alone when the user
/// turned compositing off or on themselves, or set `GDK_GL`.
///
/// WebKitGTK and GTK read these only from the environment, when the display
/// is opened and the first webview is made: call it first thing in `main`,
/// while no other thread exists. The MCP servers and other programs
/// Switchboard starts do not inherit them.
pub fn prepare_process() {
    #[cfg(target_os = "linux")]
    {
        let unset = |name: &str| std::env::var_os(name).is_none();
        let mut ours = vec![];
        for (switch, keep) in SWITCHES {
            if unset(switch) && unset(keep) {
                std::env::set_var(switch, "1");
                ours.push(switch);
            }
        }
        if ours.contains(&NO_COMPOSITING) && unset(GDK_GL) {
            std::env::set_var(GDK_GL, "disable");
            ours.push(GDK_GL);
        }
        keep_to_this_process(&ours);
    }
}

/// How many times the page is brought back within [`CRASH_WINDOW`] before
/// Switchboard stops trying (a page that dies at every load would otherwise
/// restart its process in a loop).
const CRASH_RELOADS: usize = 3;
const CRASH_WINDOW: std::time::Duration = std::time::Duration::from_secs(60);

/// Whether a crash at `now` may reload the page, given the times of the
/// reloads before it (kept to those inside [`CRASH_WINDOW`]).
fn may_reload(
    reloads: &mut std::collections::VecDeque<std::time::Instant>,
    now: std::time::Instant,
) -> bool {
    while reloads
        .front()
        .is_some_and(|t| now.duration_since(*t) > CRASH_WINDOW)
    {
        reloads.pop_front();
    }
    if reloads.len() >= CRASH_RELOADS {
        return false;
    }
    reloads.push_back(now);
    true
}

/// Brings the window's page back when the process that draws it ends
/// (WebKitGTK runs the page in a separate web process; a crash of the GPU
/// driver or the system's out-of-memory killer ends it and leaves the window
/// blank). The page reloads and reads everything from the engine again: no
/// server, sign-in or setting lives in the page. Logged to stderr.
#[cfg(target_os = "linux")]
pub fn reload_when_page_dies(window: &tauri::WebviewWindow) {
    let _ = window.with_webview(|webview| {
        use webkit2gtk::{WebProcessTerminationReason as Why, WebViewExt};
        let reloads = std::cell::RefCell::new(std::collections::VecDeque::new());
        webview
            .inner()
            .connect_web_process_terminated(move |view, why| {
                let what = match why {
                    Why::Crashed => "crashed",
                    Why::ExceededMemoryLimit => "went over its memory limit",
                    // The app itself ended it (closing): nothing to bring back.
                    Why::TerminatedByApi => return,
                    _ => "ended",
                };
                if may_reload(&mut reloads.borrow_mut(), std::time::Instant::now()) {
                    eprintln!("switchboard: the window's page process {what}; reloading the page");
                    view.reload();
                } else {
                    eprintln!(
                        "switchboard: the window's page process {what} again ({CRASH_RELOADS} times within {} s): not reloading it; quit and start Switchboard again",
                        CRASH_WINDOW.as_secs()
                    );
                }
            });
    });
}

#[cfg(not(target_os = "linux"))]
pub fn reload_when_page_dies(_window: &tauri::WebviewWindow) {}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    #[test]
    fn a_page_that_keeps_crashing_is_reloaded_three_times_a_minute() {
        let mut reloads = std::collections::VecDeque::new();
        let t0 = Instant::now();
        let at = |s: u64| t0 + Duration::from_secs(s);
        assert!(may_reload(&mut reloads, at(0)));
        assert!(may_reload(&mut reloads, at(1)));
        assert!(may_reload(&mut reloads, at(2)));
        assert!(
            !may_reload(&mut reloads, at(3)),
            "a fourth crash within a minute is left alone"
        );
        assert!(!may_reload(&mut reloads, at(59)));
        // A minute after the first reload, one more is allowed again.
        assert!(may_reload(&mut reloads, at(61)));
        assert!(
            !may_reload(&mut reloads, at(61)),
            "the reloads at 1, 2 and 61 s fill the minute"
        );
        // Crashes far apart are always reloaded.
        let mut apart = std::collections::VecDeque::new();
        for i in 0..10 {
            assert!(may_reload(&mut apart, at(i * 120)));
        }
    }
}
