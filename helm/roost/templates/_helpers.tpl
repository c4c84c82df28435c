{{- define "roost.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "roost.labels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{- define "roost.selectorLabels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "roost.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end -}}

{{- define "roost.secretName" -}}
{{- .Values.existingSecret | default (include "roost.fullname" .) -}}
{{- end -}}

{{/* Environment shared by the Deployment and the migration Job. */}}
{{- define "roost.env" -}}
- name: HOST
  value: "0.0.0.0"
- name: PORT
  value: "9991"
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
{{- end -}}
