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

{{- define "roost.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- .Values.serviceAccount.name | default (include "roost.fullname" .) -}}
{{- else -}}
{{- .Values.serviceAccount.name | default "default" -}}
{{- end -}}
{{- end -}}

{{/* "true" when uploads go to S3 (config.S3_ENDPOINT and config.S3_BUCKET), else "". */}}
{{- define "roost.s3" -}}
{{- if and .Values.config.S3_ENDPOINT .Values.config.S3_BUCKET }}true{{ end -}}
{{- end -}}

{{/* "true" when uploads go to a volume every replica can mount (ReadWriteMany). */}}
{{- define "roost.sharedUploadsVolume" -}}
{{- if and (not (include "roost.s3" .)) .Values.uploads.persistence.enabled (eq .Values.uploads.persistence.accessMode "ReadWriteMany") }}true{{ end -}}
{{- end -}}

{{/* "true" when uploads go to a volume of the chart's (not S3). */}}
{{- define "roost.uploadsVolume" -}}
{{- if and (not (include "roost.s3" .)) .Values.uploads.persistence.enabled }}true{{ end -}}
{{- end -}}

{{- define "roost.uploadsClaimName" -}}
{{- .Values.uploads.persistence.existingClaim | default (printf "%s-uploads" (include "roost.fullname" .)) -}}
{{- end -}}

{{- define "roost.pushFcm" -}}
{{- if or .Values.pushKeyFiles.fcm .Values.secret.FCM_SERVICE_ACCOUNT_JSON }}true{{ end -}}
{{- end -}}

{{- define "roost.pushApns" -}}
{{- if or .Values.pushKeyFiles.apns .Values.secret.APNS_KEY_P8 }}true{{ end -}}
{{- end -}}

{{- define "roost.secretName" -}}
{{- .Values.existingSecret | default (include "roost.fullname" .) -}}
{{- end -}}

{{/* Settings Roost cannot start without, checked before anything renders. */}}
{{- define "roost.validate" -}}
{{- if and (not .Values.existingSecret) (not .Values.secret.DATABASE_URL) -}}
{{- fail "roost: set secret.DATABASE_URL (postgresql://user:password@host:5432/roost) or existingSecret (a Secret with a DATABASE_URL key)" -}}
{{- end -}}
{{- if not .Values.config.EXTERNAL_URL -}}
{{- fail "roost: set config.EXTERNAL_URL to the organization's URL as users reach it (https://chat.example.com): links in mails, the API's realm_uri and subdomain organizations depend on it" -}}
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
{{- $s3 := list .Values.config.S3_ENDPOINT .Values.config.S3_BUCKET .Values.config.S3_REGION -}}
{{- if and (has "" $s3) (not (eq (join "" $s3) "")) -}}
{{- fail "roost: config.S3_ENDPOINT, config.S3_BUCKET and config.S3_REGION go together (with secret.S3_ACCESS_KEY_ID and secret.S3_SECRET_ACCESS_KEY): set all or none" -}}
{{- end -}}
{{- $many := or .Values.autoscaling.enabled (gt (int .Values.replicaCount) 1) -}}
{{- if and $many (not (include "roost.s3" .)) (not (include "roost.sharedUploadsVolume" .)) -}}
{{- fail "roost: more than one replica (replicaCount above 1, or autoscaling.enabled) needs uploads that every replica sees: set config.S3_ENDPOINT, config.S3_BUCKET and config.S3_REGION (S3-compatible storage), or uploads.persistence.accessMode=ReadWriteMany with a storage class (or existingClaim) that provides it; otherwise a file uploaded through one pod is missing on the others" -}}
{{- end -}}
{{- if and (not (include "roost.s3" .)) (not .Values.uploads.persistence.enabled) -}}
{{- fail "roost: uploads need S3 (config.S3_*) or uploads.persistence.enabled: on the pod's own disk every upload is lost when the pod restarts" -}}
{{- end -}}
{{- if and .Values.pushKeyFiles.fcm (not .Values.existingSecret) (not .Values.secret.FCM_SERVICE_ACCOUNT_JSON) -}}
{{- fail "roost: pushKeyFiles.fcm needs secret.FCM_SERVICE_ACCOUNT_JSON (or existingSecret with that key)" -}}
{{- end -}}
{{- if and .Values.pushKeyFiles.apns (not .Values.existingSecret) (not .Values.secret.APNS_KEY_P8) -}}
{{- fail "roost: pushKeyFiles.apns needs secret.APNS_KEY_P8 (or existingSecret with that key)" -}}
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
{{- if and (or $.Values.existingSecret $value) (not (has $name (list "FCM_SERVICE_ACCOUNT_JSON" "APNS_KEY_P8"))) }}
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

{{/* The push key files' paths (Deployment only: the migration Job sends no push). */}}
{{- define "roost.pushKeyEnv" -}}
{{- if include "roost.pushFcm" . -}}
- name: FCM_SERVICE_ACCOUNT_FILE
  value: /etc/roost/push/fcm-service-account.json
{{ end -}}
{{- if include "roost.pushApns" . -}}
- name: APNS_KEY_FILE
  value: /etc/roost/push/apns-key.p8
{{- end }}
{{- end -}}

{{/* Pod-level settings shared by the Deployment, the migration Job and the test pod.
The pre-install Job runs before the ServiceAccount exists: it keeps the
namespace's default account, without its token too. */}}
{{- define "roost.podSpecCommon" -}}
automountServiceAccountToken: false
{{- with .Values.imagePullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
securityContext:
  {{- toYaml .Values.podSecurityContext | nindent 2 }}
{{- end -}}
