{{/* The release's base name, kept short enough for the suffixes below. */}}
{{- define "patchbay.name" -}}
{{- .Release.Name | lower | trunc 40 | trimSuffix "-" -}}
{{- end -}}

{{- define "patchbay.serverName" -}}
{{- printf "%s-server" (include "patchbay.name" .) -}}
{{- end -}}

{{- define "patchbay.routerName" -}}
{{- printf "%s-router" (include "patchbay.name" .) -}}
{{- end -}}

{{- define "patchbay.image" -}}
{{- printf "%s:%s" .Values.image.repository (.Values.image.tag | default .Chart.AppVersion) -}}
{{- end -}}

{{- define "patchbay.labels" -}}
app.kubernetes.io/name: patchbay
app.kubernetes.io/instance: {{ .Release.Name | quote }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
{{- end -}}

{{- define "patchbay.serverSelectorLabels" -}}
app.kubernetes.io/name: patchbay
app.kubernetes.io/instance: {{ .Release.Name | quote }}
app.kubernetes.io/component: model-server
{{- end -}}

{{- define "patchbay.routerSelectorLabels" -}}
app.kubernetes.io/name: patchbay
app.kubernetes.io/instance: {{ .Release.Name | quote }}
app.kubernetes.io/component: router
{{- end -}}

{{/* The labels that select the pool's model servers: modelServers.matchLabels, else the chart's own. */}}
{{- define "patchbay.poolSelector" -}}
{{- if .Values.modelServers.matchLabels -}}
{{- range $k, $v := .Values.modelServers.matchLabels }}
{{ $k }}: {{ $v | quote }}
{{- end -}}
{{- else -}}
{{ include "patchbay.serverSelectorLabels" . }}
{{- end -}}
{{- end -}}

{{/* The pool selector as a label selector string (kubectl -l). */}}
{{- define "patchbay.poolSelectorString" -}}
{{- $pairs := list -}}
{{- range $k, $v := (include "patchbay.poolSelector" . | fromYaml) -}}
{{- $pairs = append $pairs (printf "%s=%s" $k $v) -}}
{{- end -}}
{{- join "," $pairs -}}
{{- end -}}

{{- define "patchbay.serverPort" -}}
{{- (index .Values.modelServers.targetPorts 0).number -}}
{{- end -}}

{{- define "patchbay.validate" -}}
{{- if ne (len .Values.modelServers.targetPorts) 1 -}}
{{- fail "modelServers.targetPorts must have exactly one entry: a Patchbay pod runs one server" -}}
{{- end -}}
{{- if not (has .Values.inferencePool.failureMode (list "FailOpen" "FailClose")) -}}
{{- fail "inferencePool.failureMode must be FailOpen or FailClose" -}}
{{- end -}}
{{- if and .Values.inferencePool.create (not .Values.epp.enabled) -}}
{{- fail "inferencePool.create needs epp.enabled: the router is the pool's endpoint picker" -}}
{{- end -}}
{{- if and .Values.httpRoute.create (not .Values.inferencePool.create) -}}
{{- fail "httpRoute.create needs inferencePool.create: the route's backend is the InferencePool" -}}
{{- end -}}
{{- if and .Values.epp.pluginsConfigFile (not (hasKey .Values.epp.pluginsCustomConfig .Values.epp.pluginsConfigFile)) -}}
{{- fail "epp.pluginsConfigFile must name a file of epp.pluginsCustomConfig" -}}
{{- end -}}
{{- end -}}
