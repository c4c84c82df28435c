{{- define "roost.name" -}}
{{- .Values.nameOverride | default .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "roost.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else if contains (include "roost.name" .) .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name (include "roost.name" .) | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "roost.labels" -}}
app.kubernetes.io/name: {{ include "roost.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{- define "roost.selectorLabels" -}}
app.kubernetes.io/name: {{ include "roost.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "roost.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end -}}

{{- define "roost.secretName" -}}
{{- .Values.existingSecret | default (include "roost.fullname" .) -}}
{{- end -}}

{{/* Settings Roost cannot start without, checked before anything renders. */}}
{{- define "roost.validate" -}}
{{- if and (not .Values.existingSecret) (not .Values.secret.DATABASE_URL) -}}
{{- fail "roost: set secret.DATABASE_URL (postgresql://user:password@host:5432/roost) or existingSecret (a Secret with a DATABASE_URL key)" -}}
{{- end -}}
{{- $replicas := ternary .Values.autoscaling.minReplicas .Values.replicaCount .Values.autoscaling.enabled -}}
{{- $redis := or .Values.secret.REDIS_URL .Values.config.REDIS_CLUSTER_NODES .Values.config.REDIS_SENTINELS .Values.existingSecret -}}
{{- if and (gt (int $replicas) 1) (not $redis) -}}
{{- fail "roost: more than one replica needs Redis: set secret.REDIS_URL, config.REDIS_CLUSTER_NODES, or config.REDIS_SENTINELS with config.REDIS_SENTINEL_MASTER" -}}
{{- end -}}
{{- if and .Values.config.REDIS_SENTINELS (not .Values.config.REDIS_SENTINEL_MASTER) -}}
{{- fail "roost: config.REDIS_SENTINEL_MASTER must be set with config.REDIS_SENTINELS" -}}
{{- end -}}
{{- if and .Values.config.REDIS_SENTINEL_MASTER (not .Values.config.REDIS_SENTINELS) -}}
{{- fail "roost: config.REDIS_SENTINELS must be set with config.REDIS_SENTINEL_MASTER" -}}
{{- end -}}
{{- $ways := 0 -}}
{{- range (list .Values.secret.REDIS_URL .Values.config.REDIS_CLUSTER_NODES .Values.config.REDIS_SENTINELS) -}}
{{- if . }}{{ $ways = add1 $ways }}{{ end -}}
{{- end -}}
{{- if gt $ways 1 -}}
{{- fail "roost: secret.REDIS_URL, config.REDIS_CLUSTER_NODES and config.REDIS_SENTINELS are alternatives: set only one" -}}
{{- end -}}
{{- if and .Values.serviceMonitor.enabled (not .Values.existingSecret) (not .Values.secret.METRICS_TOKEN) -}}
{{- fail "roost: serviceMonitor.enabled needs secret.METRICS_TOKEN (or existingSecret with a METRICS_TOKEN key)" -}}
{{- end -}}
{{- end -}}

{{/* Environment shared by the Deployment and the migration Job. */}}
{{- define "roost.env" -}}
- name: HOST
  value: "0.0.0.0"
- name: PORT
  value: "9991"
- name: DATA_DIR
  value: /data
{{- range $name, $value := .Values.config }}
{{- if $value }}
- name: {{ $name }}
  value: {{ $value | quote }}
{{- end }}
{{- end }}
{{- $secretName := include "roost.secretName" . }}
{{- range $name, $value := .Values.secret }}
{{- if or $.Values.existingSecret $value }}
- name: {{ $name }}
  valueFrom:
    secretKeyRef:
      name: {{ $secretName }}
      key: {{ $name }}
      optional: {{ ne $name "DATABASE_URL" }}
{{- end }}
{{- end }}
{{- with .Values.extraEnv }}
{{ toYaml . }}
{{- end }}
{{- end -}}
