# roce_qos_exporter container image: multi-stage, Debian 12 (bookworm) in both stages.
#   docker build -t roce-qos-exporter:0.1.0 .
#   scripts/build-image                  (no Docker engine: Debian's buildah, same Dockerfile)
# Build stage packages = `scripts/install-deps --build-only`; runtime stage = only the shared
# libraries the binary links (the second line: what libsystemd0 itself links, which ldd lists
# once the exporter calls sd_notify; the last line: the kubelet client's gRPC and protobuf and
# what they link, docs/decisions.md "Kubelet PodResources"). tests/checks/deploy/dockerfile.sh keeps both
# lists honest;
# tests/checks/deploy/container-image.sh builds this file with buildah in CI and runs the image
# (docs/deployment.md "Container image" says what differs from docker build/run).
ARG DEBIAN_IMAGE=debian:bookworm-slim

FROM ${DEBIAN_IMAGE} AS build
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      build-essential cmake pkg-config git ccache \
      libmnl-dev prometheus-cpp-dev libspdlog-dev libfmt-dev libyaml-cpp-dev \
      libsystemd-dev libcap-dev libcli11-dev zlib1g-dev libdeflate-dev liblldpctl-dev \
      libgrpc++-dev libprotobuf-dev protobuf-compiler protobuf-compiler-grpc \
      libgtest-dev libgmock-dev googletest libbenchmark-dev \
      help2man \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
# As scripts/run-exporter builds it: no tests, no benchmarks; installed stripped under /out.
# -Werror and the build directory /src/build as in CI's own build (scripts/test-all), so with
# scripts/build-image, which mounts the host's ccache, every compile here is a cache hit.
RUN scripts/build -DROCEQOS_WERROR=ON -DROCEQOS_BUILD_TESTS=OFF -DROCEQOS_BUILD_BENCHMARKS=OFF \
 && cmake --install build --prefix /out --strip

FROM ${DEBIAN_IMAGE}
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      libstdc++6 libgcc-s1 \
      libmnl0 \
      libspdlog1.10 libfmt9 libyaml-cpp0.7 libsystemd0 libcap2 zlib1g libdeflate0 \
      libgcrypt20 libgpg-error0 liblzma5 libzstd1 liblz4-1 \
      libbsd0 libmd0 \
      libgrpc++1.51 libgrpc29 libprotobuf32 libabsl20220623 libc-ares2 libre2-9 libssl3 \
 && rm -rf /var/lib/apt/lists/*
COPY --from=build /out/bin/roce_qos_exporter /usr/local/bin/roce_qos_exporter
# liblldpctl, which the exporter loads at run time to read the host's lldpd (docs/lldp.md). Debian
# ships it inside the lldpd package; the daemon itself has no place in this image.
COPY --from=build /usr/lib/x86_64-linux-gnu/liblldpctl.so.4* /usr/lib/x86_64-linux-gnu/
# nobody: observe mode needs no privilege. The Kubernetes enforce overlay runs it as uid 0 with
# CAP_NET_ADMIN only (docs/operations.md "Privilege analysis").
USER 65534:65534
EXPOSE 9879
ENTRYPOINT ["/usr/local/bin/roce_qos_exporter"]
