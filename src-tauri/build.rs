/// Keep equal to `switchboard_app::COMMANDS` (a test checks).
const COMMANDS: &[&str] = &[
    "app_info",
    "list_servers",
    "list_sources",
    "list_projects",
    "list_tools",
    "call_tool",
    "cancel_tool_call",
    "server_logs",
    "diagnostic_report",
    "start_server",
    "stop_server",
    "restart_server",
    "set_enabled",
    "add_server",
    "update_server",
    "remove_server",
    "set_priority",
    "promote",
    "add_project",
    "remove_project",
    "approve_project",
    "list_resources",
    "read_resource",
    "list_prompts",
    "get_prompt",
    "subscribe_resource",
    "unsubscribe_resource",
    "test_connection",
    "answer_elicitation",
    "sign_in",
    "cancel_sign_in",
    "sign_out",
    "sign_in_status",
    "entry_text",
    "parse_entry_text",
    "list_history",
    "undo",
    "gateway_status",
    "set_gateway_settings",
    "gateway_token",
    "set_tool_enabled",
    "set_gateway_excluded",
    "list_connections",
    "plan_connect",
    "connect_client",
    "disconnect_client",
    "tool_review",
    "approve_tools",
    "set_approval_mode",
];

fn main() {
    // Declaring the app's commands makes Tauri generate an `allow-<command>`
    // permission for each, so capabilities/default.json can grant exactly
    // the commands the UI uses instead of all of them.
    tauri_build::try_build(
        tauri_build::Attributes::new()
            .app_manifest(tauri_build::AppManifest::new().commands(COMMANDS)),
    )
    .expect("tauri-build failed");
}
