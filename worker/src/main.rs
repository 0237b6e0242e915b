//! Entry point of the worker binary that Trunk builds with `data-type="worker"`.

fn main() {
    #[cfg(target_arch = "wasm32")]
    flint_worker::glue::start();
    #[cfg(not(target_arch = "wasm32"))]
    eprintln!("flint-worker runs in a browser; build it with Trunk (see index.html)");
}
