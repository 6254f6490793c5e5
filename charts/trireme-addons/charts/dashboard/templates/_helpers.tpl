{{/* dashboard.image is the image the console runs from. */}}
{{- define "dashboard.image" -}}
{{- $repo := .Values.image.repository | default (printf "%s/trireme-dashboard" .Values.global.imageRegistry) -}}
{{- $tag := .Values.image.tag | default .Values.global.imageTag | default .Chart.AppVersion -}}
{{- printf "%s:%s" $repo $tag -}}
{{- end -}}

{{/* dashboard.labels are every object's labels. */}}
{{- define "dashboard.labels" -}}
app.kubernetes.io/name: trireme-dashboard
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: trireme-addons
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{/* dashboard.selectorLabels select the Deployment's pods; never changes across upgrades. */}}
{{- define "dashboard.selectorLabels" -}}
app.kubernetes.io/name: trireme-dashboard
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}
