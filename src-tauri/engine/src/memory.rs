//! How the process's memory allocator holds on to memory. Switchboard is a
//! few threads that mostly wait, holding one copy of many servers' tool
//! lists; glibc's defaults suit many busy threads instead.

/// One malloc arena for the whole process. glibc gives each thread that
/// allocates while another holds the lock an arena of its own (up to eight
/// per core), and memory freed in one arena serves only that arena's
/// threads. With 200 servers and 10,000 tools the app held ~19 MiB more
/// with the default than with one arena (`.ci/bench`'s memory figures;
/// `MALLOC_ARENA_MAX=1` measured the same). Call it first thing in `main`.
/// An explicit `MALLOC_ARENA_MAX` in the environment is left to win.
pub fn one_arena() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    if std::env::var_os("MALLOC_ARENA_MAX").is_none() {
        // SAFETY: mallopt only changes a malloc tunable; M_ARENA_MAX limits
        // arenas made from now on.
        unsafe {
            libc::mallopt(libc::M_ARENA_MAX, 1);
        }
    }
}

/// A big tool list leaves megabytes of freed parser buffers behind (the
/// pages as received, before descriptions were cut); glibc keeps such memory
/// unless asked to give it back (measured: 76 → 69 MiB peak with a server of
/// 10,000 tools in pages of 1,000 beside twenty small ones).
pub fn release_freed() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only returns free heap pages to the OS.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// How long after the last poke [`QuietTrim`] gives memory back.
const QUIET: std::time::Duration = std::time::Duration::from_secs(2);

/// Gives freed memory back once a burst of work is over: servers connecting
/// together leave their parsed tool lists, the app's serialized lists and
/// the reviews behind, and glibc keeps what they freed (with 200 servers,
/// one `malloc_trim` after the start measured 195 → 184 MiB). `poke` after
/// such work; the trim comes once no poke came for two seconds. While
/// nothing happens nothing runs: no timer waits without a poke before it.
#[derive(Debug, Default)]
pub struct QuietTrim {
    wake: std::sync::OnceLock<std::sync::Arc<tokio::sync::Notify>>,
}

impl QuietTrim {
    /// Note work that freed memory. Outside a Tokio runtime it does nothing.
    /// The task it starts ends with `stop`.
    pub fn poke(&self, stop: &tokio_util::sync::CancellationToken) {
        let Ok(rt) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let wake = self.wake.get_or_init(|| {
            let wake = std::sync::Arc::new(tokio::sync::Notify::new());
            let (w, stop) = (wake.clone(), stop.clone());
            rt.spawn(async move {
                stop.run_until_cancelled(async move {
                    loop {
                        w.notified().await;
                        // Each poke within QUIET of the last one waits again.
                        while tokio::time::timeout(QUIET, w.notified()).await.is_ok() {}
                        release_freed();
                    }
                })
                .await;
            });
            wake
        });
        wake.notify_one();
    }
}
