{{- define "intake.fullname" -}}
{{- printf "%s" .Release.Name | trunc 40 | trimSuffix "-" -}}
{{- end -}}

{{- define "intake.labels" -}}
app.kubernetes.io/name: intake
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{- define "intake.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}{{ default (include "intake.fullname" .) .Values.serviceAccount.name }}{{- else -}}{{ default "default" .Values.serviceAccount.name }}{{- end -}}
{{- end -}}

{{/* The image of one service: (dict "root" $ "name" "ingest") */}}
{{- define "intake.image" -}}
{{- printf "%s/intake-%s:%s" .root.Values.image.registry .name (default .root.Chart.AppVersion .root.Values.image.tag) -}}
{{- end -}}

{{/* Environment shared by every container (services and the migrations Job). */}}
{{- define "intake.env" -}}
- name: NODE_ENV
  value: production
- name: PORT
  value: "8080"
- name: PUBLIC_BASE_URL
  value: {{ .Values.publicBaseUrl | quote }}
- name: NATS_URL
  value: {{ .Values.nats.url | quote }}
- name: NATS_PREFIX
  value: {{ .Values.nats.prefix | quote }}
- name: NATS_STREAM_REPLICAS
  value: {{ .Values.nats.streamReplicas | default 3 | quote }}
{{- with .Values.nats.streamMaxBytes }}
- name: NATS_STREAM_MAX_BYTES
  value: {{ . | int64 | quote }}
{{- end }}
{{- with .Values.nats.eventsMaxBytes }}
- name: NATS_EVENTS_MAX_BYTES
  value: {{ . | int64 | quote }}
{{- end }}
{{- with .Values.nats.deliveriesMaxBytes }}
- name: NATS_DELIVERIES_MAX_BYTES
  value: {{ . | int64 | quote }}
{{- end }}
{{- with .Values.nats.eventsMaxAge }}
- name: NATS_EVENTS_MAX_AGE
  value: {{ . | quote }}
{{- end }}
- name: SHUTDOWN_DELAY_SECONDS
  value: {{ .Values.shutdownDelaySeconds | quote }}
- name: PG_POOL_MAX
  value: {{ .Values.postgres.poolMax | quote }}
- name: TRUST_PROXY
  value: "true"
- name: TRUSTED_PROXY_HOPS
  value: {{ .Values.config.trustedProxyHops | default 1 | quote }}
- name: LOG_LEVEL
  value: {{ .Values.config.logLevel | quote }}
- name: RATE_LIMIT_POINTS
  value: {{ .Values.config.rateLimitPoints | quote }}
- name: RATE_LIMIT_WINDOW_SECONDS
  value: {{ .Values.config.rateLimitWindowSeconds | quote }}
- name: WEBHOOK_RETRY_SCHEDULE
  value: {{ .Values.config.webhookRetrySchedule | quote }}
- name: WEBHOOK_TIMEOUT_MS
  value: {{ .Values.config.webhookTimeoutMs | quote }}
- name: SEND_CONCURRENCY
  value: {{ .Values.config.sendConcurrency | default 64 | quote }}
- name: WEBHOOK_ENDPOINT_CONCURRENCY
  value: {{ .Values.config.webhookEndpointConcurrency | default 8 | quote }}
{{- with .Values.config.sendMaxAckPending }}
- name: SEND_MAX_ACK_PENDING
  value: {{ . | quote }}
{{- end }}
- name: RECONCILE_AFTER
  value: {{ .Values.config.reconcileAfter | default "15m" | quote }}
- name: WEBHOOK_ALLOW_PRIVATE_NETWORKS
  value: {{ .Values.config.webhookAllowPrivateNetworks | quote }}
- name: MAIL_FROM
  value: {{ .Values.smtp.mailFrom | quote }}
- name: FILES_DIR
  value: /app/.data/files
{{- include "intake.secretEnv" (dict "root" . "env" "DATABASE_URL" "credential" "databaseUrl") }}
{{- if or .Values.secrets.keys.databaseDirectUrl (index .Values.secrets.from "databaseDirectUrl") }}
{{- include "intake.secretEnv" (dict "root" . "env" "DATABASE_DIRECT_URL" "credential" "databaseDirectUrl") }}
{{- end }}
{{- include "intake.secretEnv" (dict "root" . "env" "SECRETS_KEY" "credential" "secretsKey") }}
{{- if .Values.redis.enabled }}
{{- include "intake.secretEnv" (dict "root" . "env" "REDIS_URL" "credential" "redisUrl") }}
{{- end }}
{{- if .Values.smtp.enabled }}
{{- include "intake.secretEnv" (dict "root" . "env" "SMTP_URL" "credential" "smtpUrl") }}
{{- end }}
{{- if eq .Values.nats.auth.method "userPassword" }}
{{- include "intake.secretEnv" (dict "root" . "env" "NATS_USER" "credential" "natsUser") }}
{{- include "intake.secretEnv" (dict "root" . "env" "NATS_PASSWORD" "credential" "natsPassword") }}
{{- else if eq .Values.nats.auth.method "token" }}
{{- include "intake.secretEnv" (dict "root" . "env" "NATS_TOKEN" "credential" "natsToken") }}
{{- else if eq .Values.nats.auth.method "creds" }}
- name: NATS_CREDS_FILE
  value: /etc/intake/nats-auth/{{ .Values.nats.auth.fileKey }}
{{- else if eq .Values.nats.auth.method "nkey" }}
- name: NATS_NKEY_SEED_FILE
  value: /etc/intake/nats-auth/{{ .Values.nats.auth.fileKey }}
{{- end }}
{{- with .Values.nats.tls.secret }}
- name: NATS_TLS_CA_FILE
  value: /etc/intake/nats-tls/ca.crt
{{- if $.Values.nats.tls.clientCertificate }}
- name: NATS_TLS_CERT_FILE
  value: /etc/intake/nats-tls/tls.crt
- name: NATS_TLS_KEY_FILE
  value: /etc/intake/nats-tls/tls.key
{{- end }}
{{- end }}
{{- with .Values.postgres.tls.caSecret }}
- name: DATABASE_CA_FILE
  value: /etc/intake/postgres-ca/ca.crt
{{- end }}
{{- with .Values.redis.tls.caSecret }}
- name: REDIS_CA_FILE
  value: /etc/intake/redis-ca/ca.crt
{{- end }}
{{- with .Values.oidc.issuer }}
- name: OIDC_ISSUER
  value: {{ . | quote }}
- name: OIDC_CLIENT_ID
  value: {{ $.Values.oidc.clientId | quote }}
{{- include "intake.secretEnv" (dict "root" $ "env" "OIDC_CLIENT_SECRET" "credential" "oidcClientSecret") }}
{{- with $.Values.oidc.allowedDomains }}
- name: OIDC_ALLOWED_DOMAINS
  value: {{ . | quote }}
{{- end }}
- name: OIDC_ONLY
  value: {{ $.Values.oidc.only | quote }}
{{- end }}
{{- if .Values.s3.enabled }}
- name: S3_BUCKET
  value: {{ .Values.s3.bucket | quote }}
- name: S3_REGION
  value: {{ .Values.s3.region | quote }}
- name: S3_FORCE_PATH_STYLE
  value: {{ .Values.s3.forcePathStyle | quote }}
{{- if .Values.s3.endpoint }}
- name: S3_ENDPOINT
  value: {{ .Values.s3.endpoint | quote }}
{{- end }}
{{- include "intake.secretEnv" (dict "root" . "env" "AWS_ACCESS_KEY_ID" "credential" "awsAccessKeyId") }}
{{- include "intake.secretEnv" (dict "root" . "env" "AWS_SECRET_ACCESS_KEY" "credential" "awsSecretAccessKey") }}
{{- end }}
{{- if .Values.telemetry.otlpEndpoint }}
- name: OTEL_EXPORTER_OTLP_ENDPOINT
  value: {{ .Values.telemetry.otlpEndpoint | quote }}
- name: OTEL_EXPORTER_OTLP_PROTOCOL
  value: {{ .Values.telemetry.protocol | quote }}
{{- end }}
{{- if .Values.metrics.port }}
- name: METRICS_PORT
  value: {{ .Values.metrics.port | quote }}
{{- end }}
- name: OTEL_TRACES_SAMPLER
  value: {{ .Values.telemetry.sampler | quote }}
- name: OTEL_TRACES_SAMPLER_ARG
  value: {{ .Values.telemetry.samplerArg | quote }}
- name: K8S_POD_NAME
  valueFrom: { fieldRef: { fieldPath: metadata.name } }
- name: OTEL_RESOURCE_ATTRIBUTES
  value: {{ printf "service.version=%s,k8s.namespace.name=%s,k8s.pod.name=$(K8S_POD_NAME)%s" .Chart.AppVersion .Release.Namespace (ternary (printf ",%s" .Values.telemetry.resourceAttributes) "" (ne .Values.telemetry.resourceAttributes "")) | quote }}
{{- if kindIs "map" .Values.config.extraEnv }}
{{- range $name, $value := .Values.config.extraEnv }}
- name: {{ $name }}
  value: {{ $value | quote }}
{{- end }}
{{- end }}
{{- with .Values.extraEnv }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{/*
The grace a pod has after SIGTERM: a preStop sleep (it runs first, within the grace), the shutdown delay, the requests
in flight (10 s), one webhook attempt, a margin.
*/}}
{{- define "intake.terminationGrace" -}}
{{- if kindIs "invalid" .Values.terminationGracePeriodSeconds -}}
{{- $sleep := 0 -}}
{{- with (get .Values.preStop "sleep") }}{{ $sleep = int (.seconds | default 0) }}{{ end -}}
{{- add $sleep .Values.shutdownDelaySeconds 10 (div (add .Values.config.webhookTimeoutMs 999) 1000) 5 -}}
{{- else -}}
{{- .Values.terminationGracePeriodSeconds -}}
{{- end -}}
{{- end -}}

{{/*
One service's topologySpreadConstraints: (dict "root" $ "name" "ingest" "svc" $svc). The service's own, else the chart's,
else (null) a soft spread over nodes and zones; a constraint without a labelSelector gets the service's pods'.
*/}}
{{- define "intake.topologySpread" -}}
{{- $given := .root.Values.topologySpreadConstraints -}}
{{- if hasKey .svc "topologySpreadConstraints" }}{{ $given = .svc.topologySpreadConstraints }}{{ end -}}
{{- $selector := dict "matchLabels" (dict "app.kubernetes.io/instance" .root.Release.Name "app.kubernetes.io/component" .name) -}}
{{- if kindIs "invalid" $given -}}
{{- $given = list (dict "maxSkew" 1 "topologyKey" "kubernetes.io/hostname" "whenUnsatisfiable" "ScheduleAnyway") (dict "maxSkew" 1 "topologyKey" "topology.kubernetes.io/zone" "whenUnsatisfiable" "ScheduleAnyway") -}}
{{- end -}}
{{- $out := list -}}
{{- range $given -}}
{{- $out = append $out (merge (deepCopy .) (dict "labelSelector" $selector)) -}}
{{- end -}}
{{- toYaml $out -}}
{{- end -}}

{{/* Refuses values that render something Kubernetes would reject or that cannot work. */}}
{{- define "intake.validate" -}}
{{- range $name, $svc := .Values.services -}}
{{- if gt (int $svc.autoscaling.minReplicas) (int $svc.autoscaling.maxReplicas) -}}
{{- fail (printf "services.%s.autoscaling: minReplicas (%v) is above maxReplicas (%v)" $name $svc.autoscaling.minReplicas $svc.autoscaling.maxReplicas) -}}
{{- end -}}
{{- $fewest := ternary $svc.autoscaling.minReplicas $svc.replicas $svc.autoscaling.enabled -}}
{{- if and $svc.pdb.enabled (not (kindIs "string" $svc.pdb.minAvailable)) (ge (int $svc.pdb.minAvailable) (int $fewest)) -}}
{{- fail (printf "services.%s.pdb: minAvailable (%v) is not below the service's fewest pods (%v): no pod could ever be evicted, and every node drain would wait for it" $name $svc.pdb.minAvailable $fewest) -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/*
One credential's env var from a Secret: (dict "root" $ "env" "DATABASE_URL" "credential" "databaseUrl"). Its own
Secret and key when secrets.from.<credential> names them (a Secret an operator made, as CloudNativePG's app Secret),
else secrets.keys.<credential> in secrets.existingSecret.
*/}}
{{- define "intake.secretEnv" -}}
{{- $from := index .root.Values.secrets.from .credential | default dict -}}
{{- $name := $from.name | default .root.Values.secrets.existingSecret -}}
{{- $key := $from.key | default (index .root.Values.secrets.keys .credential) -}}
{{- if not $key }}{{ fail (printf "secrets.keys.%s (or secrets.from.%s) is needed for %s" .credential .credential .env) }}{{ end }}
- name: {{ .env }}
  valueFrom: { secretKeyRef: { name: {{ $name }}, key: {{ $key }} } }
{{- end -}}

{{/*
The volumes of the credentials given as files (NATS's credentials or seed, the CAs), and extraVolumes. Of a CA Secret
only the certificate is mounted (items): an operator's CA Secret may hold the CA's private key too (CloudNativePG's
<cluster>-ca does), which a pod that only verifies servers must not be able to read.
*/}}
{{- define "intake.credentialVolumes" -}}
{{- if has .Values.nats.auth.method (list "creds" "nkey") }}
- name: nats-auth
  secret: { secretName: {{ .Values.nats.auth.fileSecret }}, defaultMode: 0440 }
{{- end }}
{{- with .Values.nats.tls.secret }}
- name: nats-tls
  secret:
    secretName: {{ . }}
    defaultMode: 0440
    items:
      - { key: ca.crt, path: ca.crt }
      {{- if $.Values.nats.tls.clientCertificate }}
      - { key: tls.crt, path: tls.crt }
      - { key: tls.key, path: tls.key }
      {{- end }}
{{- end }}
{{- with .Values.postgres.tls.caSecret }}
- name: postgres-ca
  secret: { secretName: {{ . }}, defaultMode: 0444, items: [{ key: {{ $.Values.postgres.tls.caKey }}, path: ca.crt }] }
{{- end }}
{{- with .Values.redis.tls.caSecret }}
- name: redis-ca
  secret: { secretName: {{ . }}, defaultMode: 0444, items: [{ key: {{ $.Values.redis.tls.caKey }}, path: ca.crt }] }
{{- end }}
{{- with .Values.extraVolumes }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{/* Where those volumes are mounted (read-only), and extraVolumeMounts. */}}
{{- define "intake.credentialMounts" -}}
{{- if has .Values.nats.auth.method (list "creds" "nkey") }}
- { name: nats-auth, mountPath: /etc/intake/nats-auth, readOnly: true }
{{- end }}
{{- if .Values.nats.tls.secret }}
- { name: nats-tls, mountPath: /etc/intake/nats-tls, readOnly: true }
{{- end }}
{{- if .Values.postgres.tls.caSecret }}
- { name: postgres-ca, mountPath: /etc/intake/postgres-ca, readOnly: true }
{{- end }}
{{- if .Values.redis.tls.caSecret }}
- { name: redis-ca, mountPath: /etc/intake/redis-ca, readOnly: true }
{{- end }}
{{- with .Values.extraVolumeMounts }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{/* The NetworkPolicy rule that lets Prometheus scrape metrics.port (none when metrics are off). */}}
{{- define "intake.metricsIngress" -}}
{{- if .Values.metrics.port }}
- from:
    - namespaceSelector:
        {{- with .Values.networkPolicy.metricsNamespaceSelector }}
        matchLabels: {{- toYaml . | nindent 10 }}
        {{- else }} {}
        {{- end }}
  ports:
    - port: {{ .Values.metrics.port }}
{{- end }}
{{- end -}}
