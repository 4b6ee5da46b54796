#!/usr/bin/env bash
# Regenerates proto/ycsbctlpb from proto/ycsbctl.proto with pinned plugins,
# so that generated code only changes when the .proto does.
#
#   protoc                 Debian's protobuf-compiler (apt-get install -y protobuf-compiler)
#   protoc-gen-go          google.golang.org/protobuf/cmd/protoc-gen-go       (pinned below)
#   protoc-gen-go-grpc     google.golang.org/grpc/cmd/protoc-gen-go-grpc      (pinned below)
set -euo pipefail

PROTOC_GEN_GO_VERSION=v1.36.12
PROTOC_GEN_GO_GRPC_VERSION=v1.5.1

root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"

if ! command -v protoc >/dev/null 2>&1; then
	echo "protoc not found: apt-get install -y protobuf-compiler" >&2
	exit 1
fi

bin="$(go env GOPATH)/bin"
have() { [ -x "$bin/$1" ] && "$bin/$1" --version 2>/dev/null | grep -q -- "${2#v}"; }
# Plugins are tools, not module dependencies: install them at fixed
# versions into GOPATH/bin without touching go.mod.
if ! have protoc-gen-go "$PROTOC_GEN_GO_VERSION"; then
	GOFLAGS= go install "google.golang.org/protobuf/cmd/protoc-gen-go@$PROTOC_GEN_GO_VERSION"
fi
if ! have protoc-gen-go-grpc "$PROTOC_GEN_GO_GRPC_VERSION"; then
	GOFLAGS= go install "google.golang.org/grpc/cmd/protoc-gen-go-grpc@$PROTOC_GEN_GO_GRPC_VERSION"
fi

mkdir -p proto/ycsbctlpb
PATH="$bin:$PATH" protoc \
	--proto_path=proto \
	--go_out=proto/ycsbctlpb --go_opt=paths=source_relative \
	--go-grpc_out=proto/ycsbctlpb --go-grpc_opt=paths=source_relative \
	ycsbctl.proto
echo "generated proto/ycsbctlpb"
