fn main() {
    // Declaring the app's commands makes Tauri generate an `allow-<command>`
    // permission for each, so capabilities/default.json can grant exactly
    // the commands the UI uses instead of all of them.
    tauri_build::try_build(
        tauri_build::Attributes::new()
            .app_manifest(tauri_build::AppManifest::new().commands(&["app_info"])),
    )
    .expect("tauri-build failed");
}
