# syntax=docker/dockerfile:1
#
# hrsync, the daemon image.
#
#   docker build -t hrsync .
#   docker run -d --name hrsync --stop-timeout 45 \
#     -v hrsync-data:/data \
#     -v "$PWD/hrsync.toml:/config/hrsync.toml:ro" \
#     -v "$PWD/dx-token:/run/secrets/dx-token:ro" -e HRSYNC_DX__TOKEN_FILE=/run/secrets/dx-token \
#     hrsync
#
# Configuration: the TOML file mounted at /config/hrsync.toml, and any key overridden by
# HRSYNC_<SECTION>__<KEY> environment variables. To configure with variables alone, set
# HRSYNC_CONFIG= (empty). The SQLite state store lives on the /data volume.
#
# Stopping: hrsync finishes the step in progress within sync.shutdown_grace_s (30 s by
# default), so give the container more than that (--stop-timeout, or Kubernetes'
# terminationGracePeriodSeconds); Docker's default of 10 s would cut it short.
#
# Dependencies come from requirements.lock, pinned with hashes (pip --require-hashes),
# then hrsync's own wheel with --no-deps: the same versions on every build. The lock
# includes the postgres extra, so HRSYNC_STATE__DATABASE_URL=postgresql+psycopg://...
# works as is. The wheel is built with the build backend from requirements-build.lock
# (hashes too), the base image is pinned by digest and tini by Debian version: nothing
# the image holds is whatever was newest on the day of the build
# (docs/how-to/docker.md: Updating the pins).
#
# The two lines marked "ci:" are run verbatim by CI (with WHEEL_DIR and VENV_DIR set),
# so the wheel CI tests is built and installed exactly as in this image.

# python:3.11-slim-bookworm, pinned by digest (the multi-platform index). To move to a
# newer one: docker buildx imagetools inspect python:3.11-slim-bookworm, and put the
# "Digest:" it prints after the @ below.
ARG PYTHON_IMAGE=python:3.11-slim-bookworm@sha256:a36c24f9cbdf4fd0f52d67f0823eeac19c2028c637cecc392d97f980d4fec56b

# ---------------------------------------------------------------- build: source -> wheel
FROM ${PYTHON_IMAGE} AS build
ENV PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_NO_CACHE_DIR=1 \
    WHEEL_DIR=/dist
WORKDIR /src
COPY pyproject.toml README.md requirements.lock requirements-build.lock ./
COPY hrsync ./hrsync
COPY migrations ./migrations
COPY config ./config
# The build backend from its lock (hashes, wheels only) in a throwaway venv, then the
# wheel built with it: --no-build-isolation, so pip fetches no build tools of its own.
# ci:build-wheel
RUN tools="$(mktemp -d)" && python -m venv "$tools" && "$tools/bin/python" -m pip install --require-hashes --only-binary :all: -r requirements-build.lock && "$tools/bin/python" -m pip wheel --no-build-isolation --no-deps --wheel-dir "$WHEEL_DIR" . && rm -rf "$tools" && cp requirements.lock "$WHEEL_DIR/"

# ---------------------------------------------------------------- runtime: the wheel in a venv
FROM ${PYTHON_IMAGE} AS runtime
ENV PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_NO_CACHE_DIR=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    VENV_DIR=/opt/hrsync \
    WHEEL_DIR=/dist

# tini as PID 1: forwards SIGTERM to hrsync and reaps zombies. Pinned to bookworm's
# package (apt-cache policy tini, in the image, names the candidate).
RUN apt-get update \
    && apt-get install -y --no-install-recommends tini=0.19.0-1+b3 \
    && rm -rf /var/lib/apt/lists/*

RUN groupadd --system --gid 10001 hrsync \
    && useradd --system --uid 10001 --gid hrsync --no-create-home \
       --home-dir /nonexistent --shell /usr/sbin/nologin hrsync \
    && mkdir -p /data /config \
    && chown hrsync:hrsync /data

# The wheel and the lock are bind-mounted from the build stage, so neither becomes an
# image layer. Only wheels: the slim image has no compiler, and a source build would
# need build tools the lock does not pin. `pip check`: the lock satisfies the wheel.
# ci:install-wheel
RUN --mount=type=bind,from=build,source=/dist,target=/dist python -m venv "$VENV_DIR" && "$VENV_DIR/bin/pip" install --require-hashes --only-binary :all: -r "$WHEEL_DIR/requirements.lock" && "$VENV_DIR/bin/pip" install --no-deps "$WHEEL_DIR"/hrsync-*.whl && "$VENV_DIR/bin/pip" check

ENV PATH=/opt/hrsync/bin:$PATH \
    HRSYNC_CONFIG=/config/hrsync.toml \
    HRSYNC_STATE__DATABASE_URL=sqlite:////data/hrsync.db \
    HRSYNC_DAEMON__LISTEN=0.0.0.0:9464

# /healthz, /readyz and /metrics of `hrsync run` (daemon.listen).
EXPOSE 9464

VOLUME /data
WORKDIR /data
# Numeric, so Kubernetes' runAsNonRoot can verify it.
USER 10001:10001

STOPSIGNAL SIGTERM
HEALTHCHECK --interval=30s --timeout=10s --start-period=30s --retries=3 \
    CMD ["hrsync", "healthcheck"]
ENTRYPOINT ["tini", "--", "hrsync"]
CMD ["run"]
