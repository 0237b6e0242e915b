//! Mounts Flint's app; everything else lives in the library.

fn main() {
    console_error_panic_hook::set_once();
    leptos::mount::mount_to_body(flint_app::App);
}
