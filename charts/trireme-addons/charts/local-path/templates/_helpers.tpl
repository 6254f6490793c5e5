{{/* The namespace of the provisioner and its helper pods: they mount host directories, so it is labelled PodSecurity privileged. */}}
{{- define "local-path.namespace" -}}
local-path-storage
{{- end -}}

{{/* Common labels. */}}
{{- define "local-path.labels" -}}
app.kubernetes.io/name: local-path-provisioner
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: trireme-addons
helm.sh/chart: {{ .Chart.Name }}-{{ .Chart.Version }}
{{- end -}}

{{/* An image reference: dict "image" (repository/tag overrides), "name" (the image's name under the registry) and "root" (the top context). */}}
{{- define "local-path.imageRef" -}}
{{- $root := .root -}}
{{- $repo := .image.repository | default (printf "%s/%s" $root.Values.global.imageRegistry .name) -}}
{{- $tag := .image.tag | default $root.Values.global.imageTag | default $root.Chart.AppVersion -}}
{{- printf "%s:%s" $repo $tag -}}
{{- end -}}

{{/* The provisioner's image. */}}
{{- define "local-path.image" -}}
{{- include "local-path.imageRef" (dict "image" .Values.image "name" "local-path-provisioner" "root" .) -}}
{{- end -}}

{{/* The helper pods' image (and the test's): our busybox. */}}
{{- define "local-path.helperImage" -}}
{{- include "local-path.imageRef" (dict "image" .Values.helperImage "name" "busybox" "root" .) -}}
{{- end -}}
