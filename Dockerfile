# syntax=docker/dockerfile:1
# ns serve in a container: a static binary on an empty image, run as a non-root user.
#
#   docker build --build-arg VERSION=v1.2.0 --build-arg COMMIT=$(git rev-parse HEAD) -t nameservice .
#   docker run -p 8090:8090 -v /etc/ns:/etc/ns:ro nameservice \
#     --url 'dynamodb://fluree-nameservice?region=eu-west-1' serve --listen 0.0.0.0:8090 --tokens /etc/ns/tokens.json
#
# deploy/compose.yaml runs it beside DynamoDB Local (docs/serve.md, "Containers").
ARG GO_VERSION=1.26

FROM golang:${GO_VERSION} AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=(devel)
ARG COMMIT=
RUN CGO_ENABLED=0 go build -trimpath -buildvcs=false \
      -ldflags "-s -w -X nameservice.dev/nameservice/internal/buildinfo.version=${VERSION} -X nameservice.dev/nameservice/internal/buildinfo.commit=${COMMIT}" \
      -o /out/ns ./cmd/ns

FROM scratch
# CA certificates for HTTPS to AWS, GCS and Azure; nothing else: no shell, no package manager.
COPY --from=build /etc/ssl/certs/ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
COPY --from=build /out/ns /usr/local/bin/ns
# 65532 is nobody's uid on distroless images: no name needed on scratch.
USER 65532:65532
EXPOSE 8090
ENTRYPOINT ["/usr/local/bin/ns"]
CMD ["serve", "--listen", "0.0.0.0:8090"]
