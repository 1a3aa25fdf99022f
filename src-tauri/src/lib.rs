//! Switchboard's desktop shell: builds the Tauri app around the engine.
//!
//! The builder is generic over `tauri::Runtime` so the real app (Wry) and
//! headless tests (`tauri::test::MockRuntime`) share one setup.

pub mod commands;
pub mod error;

/// Plugins, state and command handlers shared by the app and its tests.
pub fn builder<R: tauri::Runtime>(builder: tauri::Builder<R>) -> tauri::Builder<R> {
    builder
        .plugin(tauri_plugin_opener::init())
        .invoke_handler(tauri::generate_handler![commands::app_info])
}

/// Entry point of the `switchboard-app` binary.
pub fn run() {
    builder(tauri::Builder::default())
        .run(tauri::generate_context!())
        .expect("error while running Switchboard");
}

#[cfg(test)]
mod tests {
    use super::*;
    use tauri::test::{get_ipc_response, mock_builder, mock_context, noop_assets, INVOKE_KEY};
    use tauri::webview::InvokeRequest;
    use tauri::WebviewWindowBuilder;

    #[test]
    fn app_info_returns_package_name_and_version() {
        let app = builder(mock_builder())
            .build(mock_context(noop_assets()))
            .expect("mock app builds");
        let webview = WebviewWindowBuilder::new(&app, "main", Default::default())
            .build()
            .expect("mock webview builds");

        let response = get_ipc_response(
            &webview,
            InvokeRequest {
                cmd: "app_info".into(),
                callback: tauri::ipc::CallbackFn(0),
                error: tauri::ipc::CallbackFn(1),
                // On Linux the IPC origin is the custom protocol, not http://.
                url: "tauri://localhost".parse().unwrap(),
                body: tauri::ipc::InvokeBody::default(),
                headers: Default::default(),
                invoke_key: INVOKE_KEY.to_string(),
            },
        )
        .expect("app_info succeeds");

        let info: serde_json::Value = response.deserialize().expect("JSON body");
        let pkg = app.package_info();
        assert_eq!(info["name"], pkg.name.as_str(), "name comes from the package info: {info}");
        assert_eq!(info["version"], pkg.version.to_string(), "version comes from the package info: {info}");
    }
}
