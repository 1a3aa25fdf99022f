include!("src/command_list.rs");

const COMMANDS: &[&str] = with_commands!(command_names);

/// The `commands` permission set: `allow-<command>` for every command, what
/// capabilities/default.json grants the window. Written only when it changes.
fn write_command_set() {
    let mut toml = String::from(
        "# Written by build.rs from src/command_list.rs: do not edit.\n\n[[set]]\n\
         identifier = \"commands\"\n\
         description = \"Every command of the Switchboard UI.\"\n\
         permissions = [\n",
    );
    for c in COMMANDS {
        toml.push_str(&format!("  \"allow-{}\",\n", c.replace('_', "-")));
    }
    toml.push_str("]\n");
    let path = std::path::Path::new("permissions/commands.toml");
    if std::fs::read_to_string(path).ok().as_deref() != Some(toml.as_str()) {
        std::fs::create_dir_all("permissions").expect("create permissions/");
        std::fs::write(path, toml).expect("write permissions/commands.toml");
    }
}

fn main() {
    println!("cargo:rerun-if-changed=src/command_list.rs");
    write_command_set();
    // Declaring the app's commands makes Tauri generate an `allow-<command>`
    // permission for each, so capabilities/default.json can grant exactly
    // the commands the UI uses instead of all of them.
    tauri_build::try_build(
        tauri_build::Attributes::new()
            .app_manifest(tauri_build::AppManifest::new().commands(COMMANDS)),
    )
    .expect("tauri-build failed");
}
