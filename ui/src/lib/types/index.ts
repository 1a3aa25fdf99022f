// Types shared with the Rust side. Hand-written for now; once the engine's
// command types settle they are generated from Rust (ts-rs) into this folder.

/** `app_info` command: src-tauri/src/commands.rs `AppInfo`. */
export interface AppInfo {
  name: string;
  version: string;
}

/** What a failed command rejects with: `{ code, message }` from the Rust side. */
export interface CommandErrorPayload {
  code: string;
  message: string;
}
