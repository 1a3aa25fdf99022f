// No console window next to the app on Windows release builds.
#![cfg_attr(not(debug_assertions), windows_subsystem = "windows")]

fn main() {
    // First, while this is the only thread: the environment is still safe to change.
    switchboard_engine::memory::one_arena();
    switchboard_app::webview::prepare_process();
    switchboard_app::run();
}
