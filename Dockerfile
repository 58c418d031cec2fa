# The autoscaler daemon's image (docs/install.md). Two stages: the builder makes the project's wheel and
# installs it with its dependencies into a virtualenv; the final stage is the same slim Python base with only
# that virtualenv copied in: no compiler, no build tools, no pip cache, no source tree.
#
# At run time the image writes nothing outside /tmp (the chart mounts an emptyDir there), so it runs with a
# read-only root filesystem: bytecode is compiled at build time and never written at run time.
#
#   docker build -t autoscaler:0.1.0 .
#   docker run --rm --read-only --tmpfs /tmp -v "$PWD/config:/etc/autoscaler:ro" autoscaler:0.1.0

ARG PYTHON_IMAGE=python:3.11.11-slim-bookworm

FROM ${PYTHON_IMAGE} AS builder
ENV PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PYTHONDONTWRITEBYTECODE=1
WORKDIR /src
# Only what the wheel is built from (.dockerignore keeps the rest of the tree out of the context).
COPY pyproject.toml README.md ./
COPY autoscaler ./autoscaler
# Every runtime dependency ships manylinux wheels, so nothing is compiled here either; pip compiles the
# installed modules' bytecode, so the read-only final image never needs to write any.
RUN python -m pip wheel --no-deps --wheel-dir /wheels . \
 && python -m venv /opt/autoscaler \
 && /opt/autoscaler/bin/pip install /wheels/autoscaler-*.whl \
 && /opt/autoscaler/bin/pip uninstall --yes pip

FROM ${PYTHON_IMAGE}
LABEL org.opencontainers.image.title="autoscaler" \
      org.opencontainers.image.description="A Prometheus-driven Kubernetes autoscaler that makes exactly the HPA's decisions." \
      org.opencontainers.image.licenses="Apache-2.0"
ENV PATH=/opt/autoscaler/bin:$PATH \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    HOME=/tmp
COPY --from=builder /opt/autoscaler /opt/autoscaler
# A numeric non-root user (the distroless "nonroot" ids), so runAsNonRoot can verify it without /etc/passwd.
USER 65532:65532
WORKDIR /tmp
EXPOSE 8080
ENTRYPOINT ["/opt/autoscaler/bin/autoscaler", "run"]
CMD ["--config", "/etc/autoscaler/daemon.yaml"]
