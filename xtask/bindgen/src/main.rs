//! `flint-bindgen --out-dir DIR --out-name NAME [--keep-debug] INPUT.wasm`: what
//! `wasm-bindgen --target web --no-typescript` writes, with the same library and the CLI's defaults
//! for every other option, so its files are the CLI's byte for byte (checked once by hand against
//! wasm-bindgen-cli 0.2.130 on the app and the worker; bench/setup.md).

use std::path::PathBuf;
use std::process::ExitCode;

use wasm_bindgen_cli_support::Bindgen;

struct Args {
    input: PathBuf,
    out_dir: PathBuf,
    out_name: String,
    keep_debug: bool,
}

fn parse(mut args: impl Iterator<Item = String>) -> Result<Args, String> {
    let (mut input, mut out_dir, mut out_name, mut keep_debug) = (None, None, None, false);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--out-dir" => out_dir = Some(args.next().ok_or("--out-dir needs a folder")?),
            "--out-name" => out_name = Some(args.next().ok_or("--out-name needs a name")?),
            "--keep-debug" => keep_debug = true,
            flag if flag.starts_with("--") => return Err(format!("unknown option {flag}")),
            _ if input.is_some() => return Err(format!("one input file, not also {arg}")),
            _ => input = Some(arg),
        }
    }
    Ok(Args {
        input: input.ok_or("no input .wasm file")?.into(),
        out_dir: out_dir.ok_or("no --out-dir")?.into(),
        out_name: out_name.ok_or("no --out-name")?,
        keep_debug,
    })
}

/// The library's errors and this file's, boxed alike.
type BoxError = Box<dyn std::error::Error + Send + Sync>;

fn bind(args: &Args) -> Result<(), BoxError> {
    let mut bindgen = Bindgen::new();
    bindgen.web(true)?;
    // The CLI's defaults, set as it sets them (`Bindgen::new()`'s own differ for some). The CLI
    // sets `reference_types` too, though deprecated (the wasm's target features decide).
    #[allow(deprecated)]
    bindgen
        .input_path(&args.input)
        .debug(false)
        .demangle(true)
        .keep_lld_exports(false)
        .keep_debug(args.keep_debug)
        .split_debug_info(false)
        .remove_name_section(false)
        .remove_producers_section(false)
        .typescript(false)
        .omit_imports(false)
        .omit_default_module_path(false)
        .split_linked_modules(false)
        .js_string_builtins(false)
        .ts_typed_array_buffers(false)
        .reference_types(false)
        .reset_state_function(false)
        .force_enable_abort_handler(false)
        .out_name(&args.out_name);
    bindgen.generate(&args.out_dir)?;
    Ok(())
}

fn main() -> ExitCode {
    let result = parse(std::env::args().skip(1)).map_err(Into::into).and_then(|args| bind(&args));
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("flint-bindgen: {err}");
            ExitCode::FAILURE
        }
    }
}
