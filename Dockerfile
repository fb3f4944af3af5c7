# toolscore grading service: a static binary on a distroless, non-root
# base. Build: docker build -t toolscore-server .
# Configuration is by environment (see cmd/server/config.go and the table
# in docs/api.md): DATABASE_URL (required), TOOLSCORE_ADDR, TOOLSCORE_WORKERS,
# TOOLSCORE_QUEUE, TOOLSCORE_MAX_BODY_BYTES, TOOLSCORE_MAX_BATCH_BYTES,
# TOOLSCORE_EVAL_TIMEOUT, TOOLSCORE_SHUTDOWN_GRACE, TOOLSCORE_DB_MAX_CONNS,
# TOOLSCORE_DB_WRITERS, TOOLSCORE_DB_WRITE_DELAY, TOOLSCORE_MAX_CONNS, TOOLSCORE_LOG_LEVEL,
# TOOLSCORE_GC_PERCENT, TOOLSCORE_REGRADE_RESCUE_AFTER, TOOLSCORE_RUN_RESCUE_AFTER,
# TOOLSCORE_REGRADE_WORKERS, and for authentication TOOLSCORE_AUTH (on),
# TOOLSCORE_BOOTSTRAP_KEY (the first admin key of an empty database),
# TOOLSCORE_METRICS_TOKEN and TOOLSCORE_METRICS_OPEN, and
# TOOLSCORE_RUN_ALLOWED_HOSTS (the agent hosts server-side runs may reach;
# none refuses runs), and the limits TOOLSCORE_HEADER_TIMEOUT,
# TOOLSCORE_BODY_TIMEOUT, TOOLSCORE_MAX_BODY_READERS,
# TOOLSCORE_MAX_CONNS_PER_IP (set 0 behind a proxy that connects from one
# address) and TOOLSCORE_CONTRACT_CACHE_BYTES. Pass the secrets
# (DATABASE_URL's password, the bootstrap key, the metrics token) at run
# time, never as build arguments.

FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
RUN CGO_ENABLED=0 go build -trimpath -buildvcs=false \
      -ldflags "-s -w -X main.version=${VERSION}" \
      -o /out/toolscore-server ./cmd/server

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/toolscore-server /usr/local/bin/toolscore-server
USER nonroot:nonroot
ENV TOOLSCORE_ADDR=:8080
EXPOSE 8080
# The server stops accepting on SIGTERM and finishes in-flight work within
# TOOLSCORE_SHUTDOWN_GRACE (25s by default).
STOPSIGNAL SIGTERM
ENTRYPOINT ["/usr/local/bin/toolscore-server"]
