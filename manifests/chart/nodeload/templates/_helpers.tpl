{{/* Labels every object carries: the kustomize base's plus Helm's own. */}}
{{- define "nodeload.labels" -}}
app.kubernetes.io/name: nodeload
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
{{- end -}}

{{- define "nodeload.selectorLabels" -}}
app.kubernetes.io/name: nodeload
app.kubernetes.io/component: gateway
{{- end -}}

{{- define "nodeload.image" -}}
{{- if .Values.image.digest -}}
{{ .Values.image.repository }}@{{ .Values.image.digest }}
{{- else -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end -}}
{{- end -}}

{{/* The Secret the Deployment mounts (cert-manager, provided); none with self-signed. */}}
{{- define "nodeload.servingSecret" -}}
{{- if eq .Values.certificates.mode "provided" -}}
{{ .Values.certificates.provided.secretName }}
{{- else -}}
nodeload-gateway-serving
{{- end -}}
{{- end -}}

{{- define "nodeload.validate" -}}
{{- if not (has .Values.certificates.mode (list "cert-manager" "self-signed" "provided")) -}}
{{- fail (printf "certificates.mode must be cert-manager, self-signed or provided, not %q" .Values.certificates.mode) -}}
{{- end -}}
{{- if not (has .Values.mode (list "standalone" "extender")) -}}
{{- fail (printf "mode must be standalone or extender, not %q" .Values.mode) -}}
{{- end -}}
{{- if and (eq .Values.certificates.mode "provided") (not .Values.certificates.provided.caBundle) -}}
{{- fail "certificates.mode=provided needs certificates.provided.caBundle (base64 PEM of the CA)" -}}
{{- end -}}
{{- if and .Values.userPort.tls.clientCAConfigMap (not .Values.userPort.tls.secretName) -}}
{{- fail "userPort.tls.clientCAConfigMap authenticates TLS client certificates: give userPort.tls.secretName too (8080 must serve HTTPS)" -}}
{{- end -}}
{{- end -}}

{{/* The annotation cainjector reads, with certificates.mode=cert-manager. */}}
{{- define "nodeload.injectCA" -}}
{{- if eq .Values.certificates.mode "cert-manager" }}
annotations:
  cert-manager.io/inject-ca-from: {{ .Release.Namespace }}/nodeload-gateway-serving
{{- end }}
{{- end -}}
