# syntax=docker/dockerfile:1
# Multi-stage build: a static binary on a distroless, non-root base.
FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
# The version --version prints: docker build --build-arg VERSION=1.2.0 .
ARG VERSION=dev
# TestDockerfileBuildRecipe runs this same command and checks the result is static.
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w -X main.version=${VERSION}" -o /out/wpsidecar ./cmd/wpsidecar

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/wpsidecar /usr/local/bin/wpsidecar
USER nonroot:nonroot
EXPOSE 8080 9090
ENTRYPOINT ["/usr/local/bin/wpsidecar"]
