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
- name: DATABASE_URL
  valueFrom: { secretKeyRef: { name: {{ .Values.secrets.existingSecret }}, key: {{ .Values.secrets.keys.databaseUrl }} } }
{{- with .Values.secrets.keys.databaseDirectUrl }}
- name: DATABASE_DIRECT_URL
  valueFrom: { secretKeyRef: { name: {{ $.Values.secrets.existingSecret }}, key: {{ . }} } }
{{- end }}
- name: SECRETS_KEY
  valueFrom: { secretKeyRef: { name: {{ .Values.secrets.existingSecret }}, key: {{ .Values.secrets.keys.secretsKey }} } }
{{- if .Values.redis.enabled }}
- name: REDIS_URL
  valueFrom: { secretKeyRef: { name: {{ .Values.secrets.existingSecret }}, key: {{ .Values.secrets.keys.redisUrl }} } }
{{- end }}
{{- if .Values.smtp.enabled }}
- name: SMTP_URL
  valueFrom: { secretKeyRef: { name: {{ .Values.secrets.existingSecret }}, key: {{ .Values.secrets.keys.smtpUrl }} } }
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
- name: AWS_ACCESS_KEY_ID
  valueFrom: { secretKeyRef: { name: {{ .Values.secrets.existingSecret }}, key: {{ .Values.secrets.keys.awsAccessKeyId }} } }
- name: AWS_SECRET_ACCESS_KEY
  valueFrom: { secretKeyRef: { name: {{ .Values.secrets.existingSecret }}, key: {{ .Values.secrets.keys.awsSecretAccessKey }} } }
{{- end }}
{{- if .Values.telemetry.otlpEndpoint }}
- name: OTEL_EXPORTER_OTLP_ENDPOINT
  value: {{ .Values.telemetry.otlpEndpoint | quote }}
- name: OTEL_EXPORTER_OTLP_PROTOCOL
  value: {{ .Values.telemetry.protocol | quote }}
- name: OTEL_RESOURCE_ATTRIBUTES
  value: {{ printf "k8s.namespace.name=%s%s" .Release.Namespace (ternary (printf ",%s" .Values.telemetry.resourceAttributes) "" (ne .Values.telemetry.resourceAttributes "")) | quote }}
{{- end }}
{{- range $name, $value := .Values.config.extraEnv }}
- name: {{ $name }}
  value: {{ $value | quote }}
{{- end }}
{{- end -}}

{{/* The grace a pod has after SIGTERM: the shutdown delay, the requests in flight (10 s), one webhook attempt, a margin. */}}
{{- define "intake.terminationGrace" -}}
{{- if kindIs "invalid" .Values.terminationGracePeriodSeconds -}}
{{- add .Values.shutdownDelaySeconds 10 (div (add .Values.config.webhookTimeoutMs 999) 1000) 5 -}}
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
{{- end -}}
{{- end -}}
