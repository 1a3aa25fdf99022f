// Types shared with the Rust side, generated from src-tauri/src/types.rs
// into generated.ts (a Rust test fails when it drifts). Import from here.

export * from './generated';
