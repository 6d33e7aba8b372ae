{{/* Names: <release>-weft, and <release>-weft-<component> (kept within 63 characters). */}}
{{- define "weft.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "weft.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 52 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 52 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 52 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{/* dict "root" $ "component" "gateway" */}}
{{- define "weft.componentName" -}}
{{- printf "%s-%s" (include "weft.fullname" .root) .component }}
{{- end }}

{{- define "weft.selectorLabels" -}}
app.kubernetes.io/name: {{ include "weft.name" .root }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end }}

{{- define "weft.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .root.Chart.Name .root.Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "weft.selectorLabels" . }}
app.kubernetes.io/version: {{ .root.Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .root.Release.Service }}
app.kubernetes.io/part-of: weft
{{- end }}

{{- define "weft.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}

{{- define "weft.secretName" -}}
{{- default (include "weft.fullname" .) .Values.secret.existingSecret }}
{{- end }}

{{/* The main each role runs, as docker-compose.yml runs it. */}}
{{- define "weft.command" -}}
{{- if eq . "migrate" }}
- node
- dist/cli.mjs
- migrate
{{- else }}
- node
- dist/{{ . }}.mjs
{{- end }}
{{- end }}

{{/*
A config value as an env string. Helm reads numbers of values files as float64, which would
print 33554432 as 3.3554432e+07: integers are printed as integers.
*/}}
{{- define "weft.envValue" -}}
{{- if kindIs "float64" . }}
{{- if eq (float64 (int64 .)) . }}{{ int64 . | toString | quote }}{{ else }}{{ toString . | quote }}{{ end }}
{{- else }}
{{- toString . | quote }}
{{- end }}
{{- end }}

{{/*
The environment of a service or of the migrate job: dict "root" $ "component" <role|migrate>.
What the distributed mode needs is set here (Kafka bus, the external ClickHouse, migrations
waited for); `config` and the role's `env` add the rest, the role's winning.
*/}}
{{- define "weft.env" -}}
{{- $root := .root }}
{{- $v := $root.Values }}
{{- $role := .component }}
- name: PORT
  value: "6345"
- name: WEFT_BUS
  value: kafka
- name: KAFKA_BROKERS
  value: {{ $v.kafka.brokers | quote }}
- name: KAFKA_TOPIC_PARTITIONS
  value: {{ include "weft.envValue" $v.kafka.topicPartitions }}
- name: KAFKA_REPLICATION_FACTOR
  value: {{ include "weft.envValue" $v.kafka.replicationFactor }}
{{- if $v.kafka.topicPrefix }}
- name: KAFKA_TOPIC_PREFIX
  value: {{ $v.kafka.topicPrefix | quote }}
{{- end }}
- name: CLICKHOUSE_URL
  value: {{ $v.clickhouse.url | quote }}
- name: CLICKHOUSE_USER
  value: {{ $v.clickhouse.user | quote }}
- name: CLICKHOUSE_PASSWORD
  valueFrom:
    secretKeyRef:
      name: {{ include "weft.secretName" $root }}
      key: {{ $v.secret.clickhousePasswordKey }}
- name: CLICKHOUSE_DATABASE
  value: {{ $v.clickhouse.database | quote }}
{{- if $v.clickhouse.cluster }}
- name: CLICKHOUSE_CLUSTER
  value: {{ $v.clickhouse.cluster | quote }}
{{- end }}
{{- if ne $role "migrate" }}
- name: WEFT_MIGRATE
  value: wait
{{- end }}
{{- if eq $role "gateway" }}
- name: WEFT_OTLP_GRPC_PORT
  value: {{ ternary "4317" "off" $v.gateway.otlpGrpc | quote }}
- name: WEFT_BOOTSTRAP_API_KEY
  valueFrom:
    secretKeyRef:
      name: {{ include "weft.secretName" $root }}
      key: {{ $v.secret.bootstrapApiKeyKey }}
      # Absent: the gateway makes a first admin key and logs it once.
      optional: true
{{- end }}
{{- if and (eq $role "inference") $v.inference.upstreams }}
- name: WEFT_UPSTREAMS_FILE
  value: /etc/weft/upstreams.json
{{- end }}
{{- $roleValues := get $v $role }}
{{- range $name, $value := merge (deepCopy (default dict $roleValues.env)) $v.config }}
- name: {{ $name }}
  value: {{ include "weft.envValue" $value }}
{{- end }}
{{- with $v.extraEnv }}
{{ toYaml . }}
{{- end }}
{{- with $roleValues.extraEnv }}
{{ toYaml . }}
{{- end }}
{{- end }}
