# The Benchwarmers service in one container: the dashboard and gateway on port 8122, the data folder in /data.
#   docker build -t benchwarmers .
#   docker run --rm -p 127.0.0.1:8122:8122 -v bench-data:/data --env-file .env benchwarmers
# (any host port will do: -p 127.0.0.1:9000:8122 serves http://127.0.0.1:9000)
# (compose.yaml does the same; HOSTING.md compares the hosted options.)
ARG PYTHON_VERSION=3.13
# The official slim Python image; another with Python 3.11+ as `python` (with pip) and useradd can stand in,
# e.g. one made with debootstrap where Docker Hub cannot be reached: --build-arg BASE_IMAGE=NAME (HOSTING.md).
ARG BASE_IMAGE=python:${PYTHON_VERSION}-slim

# ---- build: the wheel, exactly as `pip wheel .` makes it from a checkout --------------------------------
FROM ${BASE_IMAGE} AS build
WORKDIR /src
COPY . .
RUN python -m pip wheel --no-cache-dir --disable-pip-version-check --no-deps --wheel-dir /dist .

# ---- run: the standard library, the wheel, and nothing to build or install anything else with ----------
FROM ${BASE_IMAGE}
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    BENCHWARMERS_HOME=/data \
    BENCHWARMERS_PORT=8122
COPY --from=build /dist /tmp/dist
# pip goes once the wheel is in: the running image has no package installer and no compiler.
RUN python -m pip install --no-cache-dir --disable-pip-version-check --no-deps /tmp/dist/*.whl \
    && rm -rf /tmp/dist \
    && python -m pip uninstall --yes pip \
    && groupadd --gid 10001 bench \
    && useradd --uid 10001 --gid 10001 --create-home --home-dir /home/bench --shell /usr/sbin/nologin bench \
    && mkdir -p /data \
    && chown 10001:10001 /data
# A named volume starts as a copy of /data above, so it belongs to the service's user.
VOLUME ["/data"]
# Numeric, so platforms that insist on a non-root user can check it without reading /etc/passwd.
USER 10001:10001
WORKDIR /home/bench
EXPOSE 8122
# The standard library only (no curl in the image); any answer but 200 from /healthz, or none, is unhealthy.
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
    CMD ["python", "-c", "import http.client, os, sys; c = http.client.HTTPConnection('127.0.0.1', int(os.environ.get('BENCHWARMERS_PORT') or 8122), timeout=4); c.request('GET', '/healthz'); sys.exit(0 if c.getresponse().status == 200 else 1)"]
# 0.0.0.0 inside the container, so a published port reaches it: the service then refuses to start without
# BENCHWARMERS_ADMIN_TOKEN (16+ characters) and says so in the log.
CMD ["benchwarmers", "serve", "--host", "0.0.0.0", "--no-browser"]
