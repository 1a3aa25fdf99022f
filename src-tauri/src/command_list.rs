// Every command the UI may call, written once. `lib.rs` builds from it the
// invoke handler and `COMMANDS`; `build.rs` includes this file too, to
// declare the commands to Tauri (which then generates an `allow-<command>`
// permission for each) and to write the `commands` permission set
// (`permissions/commands.toml`) that `capabilities/default.json` grants.
// A test checks that the UI calls exactly these.

/// Calls `$then!` with every command as `module::function`.
macro_rules! with_commands {
    ($then:ident) => {
        $then! {
            commands::app_info,
            commands::list_servers,
            commands::list_sources,
            commands::list_projects,
            commands::list_tools,
            commands::call_tool,
            commands::cancel_tool_call,
            commands::server_logs,
            commands::diagnostic_report,
            commands::app_settings,
            commands::set_keep_in_tray,
            commands::set_server_defaults,
            commands::set_start_at_login,
            commands::set_project_config,
            commands::open_data_folder,
            commands::plan_copy,
            commands::copy_server,
            commands::rename_server,
            commands::start_server,
            commands::stop_server,
            commands::restart_server,
            commands::set_enabled,
            commands::add_server,
            commands::update_server,
            commands::remove_server,
            commands::set_priority,
            commands::promote,
            commands::add_project,
            commands::remove_project,
            commands::approve_project,
            commands::list_resources,
            commands::read_resource,
            commands::list_prompts,
            commands::get_prompt,
            commands::subscribe_resource,
            commands::unsubscribe_resource,
            commands::test_connection,
            catalog::registry_search,
            catalog::registry_server,
            catalog::check_runtime,
            catalog::install_server,
            catalog::keep_in_keychain,
            catalog::open_catalog_link,
            catalog::registry_settings,
            catalog::set_registry_url,
            catalog::pick_path,
            commands::answer_elicitation,
            commands::sign_in,
            commands::cancel_sign_in,
            commands::sign_out,
            commands::sign_in_status,
            commands::list_accounts,
            commands::sign_out_everywhere,
            commands::set_oauth_client_secret,
            commands::oauth_client_secret_status,
            commands::step_up,
            commands::entry_text,
            commands::parse_entry_text,
            commands::list_history,
            commands::undo,
            commands::gateway_status,
            commands::set_gateway_settings,
            commands::gateway_token,
            commands::set_tool_enabled,
            commands::set_gateway_excluded,
            commands::list_connections,
            commands::plan_connect,
            commands::connect_client,
            commands::disconnect_client,
            commands::tool_review,
            commands::approve_tools,
            commands::set_approval_mode,
            commands::list_profiles,
            commands::tool_costs,
            commands::change_profile,
            commands::switch_profile,
            commands::apply_profile,
            commands::client_costs,
            share::export_profile,
            share::preview_profile_import,
            share::import_profile,
            share::pick_save_path,
            activity::activity_query,
            activity::activity_aggregates,
            activity::activity_stats,
            activity::activity_export,
        }
    };
}

/// The names of the commands `with_commands!` lists.
macro_rules! command_names {
    ($($module:ident :: $command:ident),* $(,)?) => {
        &[$(stringify!($command)),*]
    };
}
