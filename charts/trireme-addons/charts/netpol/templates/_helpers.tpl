{{/* netpol.image is the image the agent runs from. */}}
{{- define "netpol.image" -}}
{{- $repo := .Values.image.repository | default (printf "%s/trireme-netpol" .Values.global.imageRegistry) -}}
{{- $tag := .Values.image.tag | default .Values.global.imageTag | default .Chart.AppVersion -}}
{{- printf "%s:%s" $repo $tag -}}
{{- end -}}

{{/* netpol.labels are every object's labels. */}}
{{- define "netpol.labels" -}}
app.kubernetes.io/name: trireme-netpol
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: trireme-addons
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{/* netpol.selectorLabels select the DaemonSet's pods; never changes across upgrades. */}}
{{- define "netpol.selectorLabels" -}}
app.kubernetes.io/name: trireme-netpol
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}
