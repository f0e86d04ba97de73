# syntax=docker/dockerfile:1
# The image of one Intake service. Build from the repository root, once per service:
#   docker build --build-arg SERVICE=ingest -t intake-ingest .
# SERVICE is ingest, management, delivery or usage. The image runs services/$SERVICE/dist/main.js.
# The management image also carries the migrations (node services/management/dist/cli/migrate.js),
# the operator CLI (node services/management/dist/cli/admin.js) and the built web console (console/dist).
# docker-compose.yml and the Helm chart (deploy/helm/intake) use these four images.
ARG NODE_IMAGE=node:22-bookworm-slim

# ---- build: every dependency, every workspace compiled (the same cached layers for the four images) ----
FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json tsconfig.base.json ./
COPY shared/package.json shared/tsconfig.json shared/
COPY console/package.json console/tsconfig.json console/
COPY services/ingest/package.json services/ingest/tsconfig.json services/ingest/
COPY services/management/package.json services/management/tsconfig.json services/management/
COPY services/delivery/package.json services/delivery/tsconfig.json services/delivery/
COPY services/usage/package.json services/usage/tsconfig.json services/usage/
# A workspace no image runs, whose manifest npm needs all the same (the lockfile names it).
COPY integrations/zapier/package.json integrations/zapier/
# --ignore-scripts: the root "prepare" script compiles, and the sources are not copied yet. --omit=peer leaves
# out what only test tools pull in (aws-cdk-lib, the peer of the package that ships helm); what the console's bundle
# needs of a peer (preact-render-to-string, which preact-iso imports) is a devDependency of the console.
RUN npm ci --ignore-scripts --omit=peer --no-audit --no-fund
# .dockerignore keeps tests, build output and node_modules out of these.
COPY shared shared
COPY console console
COPY services services
COPY scripts/openapi-document.js scripts/
# /out: what a runtime needs of each workspace (its package.json, compiled JavaScript, top-level .js such
# as shared/register.js), without declarations, source maps or build info.
# The OpenAPI document of the four services is built from their compiled routes into management's dist (openapi.json,
# which management serves at /openapi), so the management image carries no other service.
# The web console is built too: static files in console/dist, which management serves at /console.
RUN npx tsc -b shared services/ingest services/management services/delivery services/usage \
  && node scripts/openapi-document.js \
  && npm run --silent build -w console \
  && for ws in shared console services/*; do \
       mkdir -p "/out/$ws" && cp -R "$ws/package.json" "$ws/dist" "/out/$ws/" \
       && find "$ws" -maxdepth 1 -name '*.js' -exec cp {} "/out/$ws/" \; ; \
     done \
  && find /out \( -name '*.d.ts' -o -name '*.map' -o -name '*.tsbuildinfo' \) -type f -delete

# ---- prod: production dependencies of shared and SERVICE only (and of the workspaces SERVICE depends on) ----
FROM ${NODE_IMAGE} AS prod
ARG SERVICE
WORKDIR /app
COPY package.json package-lock.json ./
COPY shared/package.json shared/
COPY console/package.json console/
COPY services/ingest/package.json services/ingest/
COPY services/management/package.json services/management/
COPY services/delivery/package.json services/delivery/
COPY services/usage/package.json services/usage/
COPY integrations/zapier/package.json integrations/zapier/
RUN case "$SERVICE" in ingest|management|delivery|usage) ;; \
      *) echo "build with --build-arg SERVICE=ingest|management|delivery|usage (got '$SERVICE')" >&2; exit 1 ;; esac
# TypeScript (declarations and the sources some packages ship), source maps and Markdown are never read at run
# time: about half of node_modules.
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund --workspace shared --workspace "services/$SERVICE" \
  && find node_modules shared services \( -name '*.ts' -o -name '*.mts' -o -name '*.cts' -o -name '*.map' \
       -o -name '*.md' \) -type f -delete
COPY --from=build /out /out
# npm linked exactly the workspaces SERVICE needs (node_modules/@intake/*): give each its compiled code, drop the rest;
# then fail here, not at run time, if the compiled code requires a workspace that no package.json declares.
RUN for link in node_modules/@intake/*; do \
       ws="$(readlink "$link" | sed 's|^\.\./\.\./||')" && cp -R "/out/$ws/." "$ws/"; \
     done \
  && for ws in console services/*; do [ -d "$ws/dist" ] || rm -rf "$ws"; done \
  && test -f "services/$SERVICE/dist/main.js" \
  && for dep in $(grep -rhoE 'require\("@intake/[a-z]+' shared/dist services/*/dist | sed 's|.*@intake/||' | sort -u); do \
       [ -e "node_modules/@intake/$dep" ] || { echo "the $SERVICE image runs code that requires @intake/$dep," \
         "but no package.json on its way declares it (npm did not install it)" >&2; exit 1; }; \
     done

# ---- runtime: non-root, nothing written outside /tmp and /app/.data (read-only root filesystem) ----
FROM ${NODE_IMAGE} AS runtime
ARG SERVICE
ENV NODE_ENV=production PORT=8080 INTAKE_SERVICE=${SERVICE}
WORKDIR /app
COPY --from=prod /app ./
# uid 1000 is the image's `node` user; numeric so that Kubernetes' runAsNonRoot can check it.
USER 1000:1000
EXPOSE 8080
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s --retries=3 \
  CMD ["node", "-e", \
       "fetch('http://127.0.0.1:' + (process.env.PORT || 8080) + '/livez').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# `exec` replaces the shell: node is PID 1 and gets SIGTERM itself; it drains (stops accepting, finishes
# in-flight requests and messages, closes NATS and the pool) and exits 0. No child processes, so no tini.
CMD ["/bin/sh", "-c", "exec node services/$INTAKE_SERVICE/dist/main.js"]
