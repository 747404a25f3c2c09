# krm-catalog container image: a static binary, CA certificates, and a passwd file so
# `docker run --user nobody` (what kpt and kustomize do) resolves. Runs as nobody and needs
# no writable file system.
#
# Two ways to build it:
#   docker build -t krm-catalog .                  # from source (pulls the pinned bases)
#   .ci/image localhost/krm-catalog:dev                      # from a host-built static binary (no pulls)
# The host-built target comes first so that the classic builder, which builds every stage up
# to --target in file order, never needs the Rust base image for it.

# --- from a host-built static binary (see .ci/image) -------------------------------------
FROM scratch AS prebuilt
COPY docker/passwd /etc/passwd
COPY docker/group /etc/group
COPY dist/ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
COPY dist/krm-catalog /usr/local/bin/krm-catalog
COPY dist/krm-catalog-starlark /usr/local/bin/krm-catalog-starlark
USER 65534:65534
ENTRYPOINT ["/usr/local/bin/krm-catalog"]

# --- from source --------------------------------------------------------------------------
FROM rust:1.95-bookworm@sha256:6258907abe69656e41cd992e0b705cdcfabcbbe3db374f92ed2d47121282d4a1 AS build
WORKDIR /src
COPY . .
ENV RUSTFLAGS='-C target-feature=+crt-static --cfg getrandom_backend="linux_getrandom"'
RUN cargo build --release --locked --target x86_64-unknown-linux-gnu \
 && cargo build --release --locked --target x86_64-unknown-linux-gnu \
      --manifest-path crates/starlark/Cargo.toml --target-dir target \
 && cp target/x86_64-unknown-linux-gnu/release/krm-catalog /krm-catalog \
 && cp target/x86_64-unknown-linux-gnu/release/krm-catalog-starlark /krm-catalog-starlark

# distroless/static carries CA certificates and a passwd with nobody (65534).
FROM gcr.io/distroless/static-debian12:nonroot@sha256:d093aa3e30dbadd3efe1310db061a14da60299baff8450a17fe0ccc514a16639 AS release
COPY --from=build /krm-catalog /usr/local/bin/krm-catalog
COPY --from=build /krm-catalog-starlark /usr/local/bin/krm-catalog-starlark
USER 65534:65534
ENTRYPOINT ["/usr/local/bin/krm-catalog"]
