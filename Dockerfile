# tallrow's image, for deploy/kubernetes/: `docker build -t REGISTRY/tallrow:TAG .`
#
# Built with the kerberos feature (SASL/GSSAPI and SPNEGO through MIT's GSSAPI), so that
# the same image reaches secured clusters: mount a krb5.conf and a keytab and set
# KRB5_CONFIG and KRB5_CLIENT_KTNAME. The runtime stage keeps what the binary links
# against, CA certificates for TLS, kinit for renewing tickets, and sleep and tar for
# `kubectl cp` (tallrow-k8s.sh report); it runs as an unprivileged user.

FROM rust:1.95-slim-bookworm AS build
RUN apt-get update \
 && apt-get install -y --no-install-recommends libkrb5-dev libclang-dev pkg-config \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY Cargo.toml Cargo.lock ./
COPY src src
COPY benches benches
COPY vendor vendor
RUN cargo build --release --locked --features kerberos --bin tallrow \
 && cp target/release/tallrow /usr/local/bin/tallrow

FROM debian:bookworm-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates libgssapi-krb5-2 krb5-user \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --uid 10001 --user-group --no-create-home --home-dir /work --shell /usr/sbin/nologin tallrow \
 && mkdir /work && chown tallrow:tallrow /work
COPY --from=build /usr/local/bin/tallrow /usr/local/bin/tallrow
USER 10001:10001
WORKDIR /work
ENTRYPOINT ["tallrow"]
CMD ["--help"]
