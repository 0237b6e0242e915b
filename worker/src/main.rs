//! Entry point of the worker binary, built for wasm with `data-type="worker"` (index.html).

fn main() {
    #[cfg(target_arch = "wasm32")]
    flint_worker::glue::start();
    #[cfg(not(target_arch = "wasm32"))]
    eprintln!("flint-worker runs in a browser; `cargo xtask build` builds it (see index.html)");
}
