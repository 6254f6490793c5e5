{{/* The labels every object of the chart carries. */}}
{{- define "traefik.labels" -}}
app.kubernetes.io/name: traefik
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/version: {{ .Values.global.imageTag | default .Chart.AppVersion | quote }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end }}

{{/* What the Deployment's pods are selected by; never changes across upgrades. */}}
{{- define "traefik.selectorLabels" -}}
app.kubernetes.io/name: traefik
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/* The image make images builds, unless .Values.image overrides it. */}}
{{- define "traefik.image" -}}
{{- $repo := .Values.image.repository | default (printf "%s/trireme-traefik" .Values.global.imageRegistry) -}}
{{- $tag := .Values.image.tag | default .Values.global.imageTag | default .Chart.AppVersion -}}
{{- printf "%s:%s" $repo $tag -}}
{{- end }}

{{/* The replicas the Deployment runs. */}}
{{- define "traefik.replicas" -}}
{{- if .Values.global.singleNode }}1{{ else }}{{ .Values.replicas }}{{ end }}
{{- end }}
