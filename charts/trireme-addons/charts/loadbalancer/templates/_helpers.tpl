{{/* loadbalancer.image is the announcer's image: trireme-vip's. */}}
{{- define "loadbalancer.image" -}}
{{- $repo := .Values.announcer.image.repository | default (printf "%s/trireme-vip" .Values.global.imageRegistry) -}}
{{- $tag := .Values.announcer.image.tag | default .Values.global.imageTag | default .Chart.AppVersion -}}
{{- printf "%s:%s" $repo $tag -}}
{{- end -}}

{{/* loadbalancer.labels are the announcer's objects' labels. */}}
{{- define "loadbalancer.labels" -}}
app.kubernetes.io/name: trireme-lb-announcer
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: trireme-addons
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{/* loadbalancer.selectorLabels select the DaemonSet's pods; never changes across upgrades. */}}
{{- define "loadbalancer.selectorLabels" -}}
app.kubernetes.io/name: trireme-lb-announcer
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}
