# syntax=docker/dockerfile:1
#
# Herald in one container:
#   docker build -t herald .
#   docker run -d -p 8080:8080 -v herald-data:/data \
#     -e HERALD_BASE_URL=https://herald.example.com herald
# A config file can be mounted as /data/herald.toml (read from the working
# directory) or anywhere with: ... herald serve --config /etc/herald/herald.toml
#
# Multi-arch (the build stage runs on the builder's own platform and
# cross-compiles, so no emulation is needed):
#   docker buildx build --platform linux/amd64,linux/arm64,linux/arm/v7 \
#     --build-arg VERSION=v1.0.0 --build-arg COMMIT=$(git rev-parse HEAD) -t herald .

# ---- build: a static binary (pure-Go SQLite, no cgo) ----
FROM --platform=$BUILDPLATFORM golang:1.26 AS build
ARG TARGETOS=linux
ARG TARGETARCH=amd64
ARG TARGETVARIANT=
ARG VERSION=dev
ARG COMMIT=
WORKDIR /src
# Dependencies first, so source edits do not refetch them.
COPY go.mod go.sum ./
RUN --mount=type=cache,target=/go/pkg/mod go mod download
COPY . .
RUN --mount=type=cache,target=/go/pkg/mod \
    --mount=type=cache,target=/root/.cache/go-build \
    CGO_ENABLED=0 GOOS=$TARGETOS GOARCH=$TARGETARCH GOARM=${TARGETVARIANT#v} \
    go build -trimpath -ldflags "-s -w -X main.version=$VERSION -X main.commit=$COMMIT" -o /herald . \
    && go run ./scripts/elfstatic -arch $TARGETARCH /herald

# ---- runtime ----
# alpine rather than distroless: the HEALTHCHECK needs wget, and the CLI has
# no health-check command of its own.
FROM alpine:3.20
# ca-certificates: outbound TLS (OIDC providers, APNs, FCM, callbacks);
# tzdata: local times in logs if TZ is set.
RUN apk add --no-cache ca-certificates tzdata \
    && adduser -D -H -h /data -u 10001 herald \
    && mkdir -p /data \
    && chown herald:herald /data
COPY --from=build /herald /herald

# Created and chowned above, before VOLUME, so a fresh named volume is
# writable by the non-root user.
VOLUME /data
WORKDIR /data
ENV HERALD_LISTEN=0.0.0.0:8080 \
    HERALD_DATA_DIR=/data
EXPOSE 8080
USER herald:herald

# GET /healthz answers 200 while the database answers. If you change
# HERALD_LISTEN's port, override this check too.
HEALTHCHECK --interval=30s --timeout=5s --start-period=10s --retries=3 \
    CMD wget -qO- http://127.0.0.1:8080/healthz >/dev/null || exit 1

ENTRYPOINT ["/herald"]
CMD ["serve"]
