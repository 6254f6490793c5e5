{{/* coredns.image is the CoreDNS image: .Values.image, else the registry and tag every addon shares. */}}
{{- define "coredns.image" -}}
{{- $repo := .Values.image.repository | default (printf "%s/coredns" .Values.global.imageRegistry) -}}
{{- $tag := .Values.image.tag | default .Values.global.imageTag | default .Chart.AppVersion -}}
{{- printf "%s:%s" $repo $tag -}}
{{- end -}}

{{/* coredns.labels are kubeadm's labels on CoreDNS's objects, which the Deployment's selector and the Service keep. */}}
{{- define "coredns.labels" -}}
k8s-app: kube-dns
{{- end -}}
