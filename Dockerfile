# toolscore grading service: a static binary on a distroless, non-root
# base. Build: docker build -t toolscore-server .
# Configuration is by environment (see cmd/server/config.go): DATABASE_URL
# (required), TOOLSCORE_ADDR, TOOLSCORE_WORKERS, TOOLSCORE_QUEUE,
# TOOLSCORE_MAX_BODY_BYTES, TOOLSCORE_MAX_BATCH_BYTES, TOOLSCORE_EVAL_TIMEOUT,
# TOOLSCORE_SHUTDOWN_GRACE, TOOLSCORE_DB_MAX_CONNS, TOOLSCORE_LOG_LEVEL.

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
