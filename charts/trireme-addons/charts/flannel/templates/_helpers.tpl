{{/* flannel.image is the image flanneld and flannel-cni-config run from. */}}
{{- define "flannel.image" -}}
{{- $repo := .Values.image.repository | default (printf "%s/flannel" .Values.global.imageRegistry) -}}
{{- $tag := .Values.image.tag | default .Values.global.imageTag | default .Chart.AppVersion -}}
{{- printf "%s:%s" $repo $tag -}}
{{- end -}}

{{/* flannel.labels are every object's labels. */}}
{{- define "flannel.labels" -}}
app.kubernetes.io/name: flannel
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: trireme-addons
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{/* flannel.conflist is the name of the CNI configuration the DaemonSet
writes: it sorts ahead of containerd's 10-containerd-net.conflist, and
triremeadm reset removes it by this name. */}}
{{- define "flannel.conflist" -}}05-flannel.conflist{{- end -}}

{{/*
flannel.daemonset renders one DaemonSet. It takes a dict: root (the chart's
context), name, key (the selector label's value), paths (cniConfDir,
cniDataDir, runDir) and affinity (a nodeSelectorTerm's matchFields, or nil).
*/}}
{{- define "flannel.daemonset" -}}
{{- $root := .root -}}
{{- $v := $root.Values -}}
{{- $image := include "flannel.image" $root -}}
apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: {{ .name }}
  namespace: {{ $root.Release.Namespace }}
  labels:
    {{- include "flannel.labels" $root | nindent 4 }}
spec:
  selector:
    matchLabels:
      app.kubernetes.io/name: flannel
      app.kubernetes.io/instance: {{ $root.Release.Name }}
      trireme.dev/flannel-paths: {{ .key | quote }}
  updateStrategy:
    type: RollingUpdate
    rollingUpdate: {maxUnavailable: 1}
  template:
    metadata:
      labels:
        app.kubernetes.io/name: flannel
        app.kubernetes.io/instance: {{ $root.Release.Name }}
        trireme.dev/flannel-paths: {{ .key | quote }}
      annotations:
        # A new network configuration restarts flanneld.
        checksum/config: {{ include (print $root.Template.BasePath "/configmap.yaml") $root | sha256sum }}
        kubectl.kubernetes.io/default-container: flannel
    spec:
      serviceAccountName: flannel
      hostNetwork: true
      priorityClassName: {{ $v.priorityClassName }}
      # Every node needs its pod network, whatever its taints.
      tolerations:
      - operator: Exists
      {{- with .affinity }}
      affinity:
        nodeAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
            nodeSelectorTerms:
            - matchFields:
              {{- toYaml . | nindent 14 }}
      {{- end }}
      nodeSelector:
        kubernetes.io/os: linux
      containers:
      - name: flannel
        image: {{ $image }}
        imagePullPolicy: IfNotPresent
        command: [/opt/bin/flanneld]
        args:
        - --kube-subnet-mgr
        - --ip-masq
        {{- with $v.iface }}
        - --iface={{ . }}
        {{- end }}
        - --iface=$(HOST_IP)
        - --subnet-file=/run/flannel/subnet.env
        - --net-config-path=/etc/kube-flannel/net-conf.json
        # Every address, the VXLAN device's too: the helm test reaches it
        # from a pod on another node through the overlay.
        - --healthz-ip=0.0.0.0
        - --healthz-port={{ $v.healthzPort }}
        env:
        - name: NODE_NAME
          valueFrom: {fieldRef: {fieldPath: spec.nodeName}}
        - name: POD_NAME
          valueFrom: {fieldRef: {fieldPath: metadata.name}}
        - name: POD_NAMESPACE
          valueFrom: {fieldRef: {fieldPath: metadata.namespace}}
        - name: HOST_IP
          valueFrom: {fieldRef: {fieldPath: status.hostIP}}
        securityContext:
          # Devices, routes, netfilter rules and sysctls of the node.
          privileged: true
        resources:
          {{- toYaml $v.resources.flannel | nindent 10 }}
        livenessProbe:
          httpGet: {path: /healthz, port: {{ $v.healthzPort }}}
          initialDelaySeconds: 10
          periodSeconds: 10
        readinessProbe:
          httpGet: {path: /readyz, port: {{ $v.healthzPort }}}
          periodSeconds: 2
        volumeMounts:
        - {name: run, mountPath: /run/flannel}
        - {name: config, mountPath: /etc/kube-flannel, readOnly: true}
        - {name: xtables-lock, mountPath: /run/xtables.lock}
      - name: cni-config
        image: {{ $image }}
        imagePullPolicy: IfNotPresent
        command: [/usr/local/bin/flannel-cni-config]
        args:
        - --subnet-file=/run/flannel/subnet.env
        - --conf-file=/host/cni/net.d/{{ include "flannel.conflist" $root }}
        - --data-dir={{ .paths.cniDataDir }}
        resources:
          {{- toYaml $v.resources.cniConfig | nindent 10 }}
        readinessProbe:
          exec:
            command: [/usr/local/bin/flannel-cni-config, --check, --conf-file=/host/cni/net.d/{{ include "flannel.conflist" $root }}]
          periodSeconds: 5
        volumeMounts:
        - {name: run, mountPath: /run/flannel, readOnly: true}
        - {name: cni-conf, mountPath: /host/cni/net.d}
      volumes:
      - name: run
        hostPath: {path: {{ .paths.runDir }}, type: DirectoryOrCreate}
      - name: cni-conf
        hostPath: {path: {{ .paths.cniConfDir }}, type: DirectoryOrCreate}
      - name: xtables-lock
        hostPath: {path: /run/xtables.lock, type: FileOrCreate}
      - name: config
        configMap: {name: flannel}
{{- end -}}
