# Read by llama.cpp's CMake (CMAKE_PROJECT_INCLUDE, set in .cargo/config.toml) after each project().
# llama-cpp-2 0.1.160 turns on its sys crate's default `common` feature, so llama.cpp's `common`
# library (argument parsing, JSON, an HTTP client: half of llama.cpp's build) would be built
# though Flint uses none of it. Forcing the option off here skips it; bench/setup.md has the timings.
set(LLAMA_BUILD_COMMON OFF CACHE BOOL "llama: build common utils library" FORCE)
