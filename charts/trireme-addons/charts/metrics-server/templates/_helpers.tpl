{{/* The labels every object of the chart carries. */}}
{{- define "metrics-server.labels" -}}
app.kubernetes.io/name: metrics-server
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/version: {{ .Values.global.imageTag | default .Chart.AppVersion | quote }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
k8s-app: metrics-server
{{- end }}

{{/* What the Deployment's pods are selected by; never changes across upgrades. */}}
{{- define "metrics-server.selectorLabels" -}}
app.kubernetes.io/name: metrics-server
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/* The image make images builds, unless .Values.image overrides it. */}}
{{- define "metrics-server.image" -}}
{{- $repo := .Values.image.repository | default (printf "%s/metrics-server" .Values.global.imageRegistry) -}}
{{- $tag := .Values.image.tag | default .Values.global.imageTag | default .Chart.AppVersion -}}
{{- printf "%s:%s" $repo $tag -}}
{{- end }}
