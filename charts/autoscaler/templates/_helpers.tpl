{{/* The chart name. */}}
{{- define "autoscaler.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* The prefix of every object name: the release name, plus the chart name unless it holds it. */}}
{{- define "autoscaler.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "autoscaler.selectorLabels" -}}
app.kubernetes.io/name: {{ include "autoscaler.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "autoscaler.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "autoscaler.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/component: controller
{{- end -}}

{{- define "autoscaler.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "autoscaler.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- required "serviceAccount.name: the existing ServiceAccount to use when serviceAccount.create is false" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{- define "autoscaler.leaseName" -}}
{{- default (include "autoscaler.fullname" .) .Values.leaderElection.leaseName -}}
{{- end -}}

{{- define "autoscaler.image" -}}
{{- if .Values.image.digest -}}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest -}}
{{- else -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}
{{- end -}}

{{/* Whether the daemon watches PrometheusAutoscaler objects (the settings' specs.customResources, default true). */}}
{{- define "autoscaler.customResources" -}}
{{- $specs := default (dict) .Values.config.specs -}}
{{- if hasKey $specs "customResources" -}}{{ ternary "true" "" $specs.customResources }}{{- else -}}true{{- end -}}
{{- end -}}

{{/*
The daemon's settings: .Values.config, plus what the chart owns. A key the chart owns is refused in
.Values.config with the value to set instead, never silently replaced.
*/}}
{{- define "autoscaler.config" -}}
{{- $config := deepCopy .Values.config -}}
{{- $owned := dict "namespaces" "watchNamespaces" "http" "service.port" "kubernetes" "nothing: the daemon uses its in-cluster ServiceAccount" -}}
{{- range $key, $instead := $owned -}}
{{- if hasKey $config $key -}}
{{- fail (printf "config.%s is set by the chart: set %s instead" $key $instead) -}}
{{- end -}}
{{- end -}}
{{- $election := default (dict) $config.leaderElection -}}
{{- range $key, $instead := dict "enabled" "leaderElection.enabled" "namespace" "nothing: the Lease is in the release namespace" -}}
{{- if hasKey $election $key -}}
{{- fail (printf "config.leaderElection.%s is set by the chart: set %s instead" $key $instead) -}}
{{- end -}}
{{- end -}}
{{- if hasKey (default (dict) $config.state) "namespace" -}}
{{- fail "config.state.namespace is set by the chart: the state ConfigMaps are in the release namespace" -}}
{{- end -}}
{{- if hasKey (default (dict) $config.specs) "files" -}}
{{- fail "config.specs.files is set by the chart: put spec files in fileSpecs instead" -}}
{{- end -}}
{{- $_ := set $config "namespaces" .Values.watchNamespaces -}}
{{- $_ := set $config "http" (dict "listenAddress" (printf "0.0.0.0:%d" (int .Values.service.port))) -}}
{{- $_ := set $election "enabled" .Values.leaderElection.enabled -}}
{{- $_ := set $election "leaseName" (default (include "autoscaler.leaseName" .) $election.leaseName) -}}
{{- $_ := set $config "leaderElection" $election -}}
{{- if .Values.fileSpecs -}}
{{- $specs := default (dict) $config.specs -}}
{{- $_ := set $specs "files" (list "specs") -}}
{{- $_ := set $config "specs" $specs -}}
{{- end -}}
{{- toYaml $config -}}
{{- end -}}

{{/* Whether the chart grants the state ConfigMaps (file specs' behaviour state). */}}
{{- define "autoscaler.fileSpecs" -}}
{{- if .Values.fileSpecs -}}true{{- end -}}
{{- end -}}

{{/*
The rules the daemon needs in the namespaces of its targets (docs/rbac.md), as a YAML list.
`cache` false leaves out the caches' list/watch (granted cluster-wide instead).
*/}}
{{- define "autoscaler.targetRules" -}}
{{- $root := .root -}}
- apiGroups: ["apps"]
  resources: ["deployments/scale", "statefulsets/scale", "replicasets/scale"]
  verbs: ["get", "update"]
{{- if .cache }}
{{ include "autoscaler.cacheRules" $root }}
{{- end }}
- apiGroups: [""]
  resources: ["events"]
  verbs: ["create", "patch"]
{{- if include "autoscaler.customResources" $root }}
- apiGroups: ["autoscaler.dev"]
  resources: ["prometheusautoscalers"]
  verbs: ["get", "list", "watch"]
- apiGroups: ["autoscaler.dev"]
  resources: ["prometheusautoscalers/status"]
  verbs: ["update"]
{{- end }}
{{- range $root.Values.rbac.customScaleKinds }}
- apiGroups: [{{ .apiGroup | quote }}]
  resources: [{{ range $i, $r := .resources }}{{ if $i }}, {{ end }}{{ printf "%s/scale" $r | quote }}{{ end }}]
  verbs: ["get", "update"]
{{- end }}
{{- if $root.Values.rbac.podDeletionCost }}
- apiGroups: [""]
  resources: ["pods"]
  verbs: ["patch"]
{{- end }}
{{- end -}}

{{/*
list/watch for the daemon's caches: pods and workloads, and shadow mode's HPAs and KEDA ScaledObjects (never a
get: each is read from its cache, which lists them in the watched namespace, or in all when there are several).
*/}}
{{- define "autoscaler.cacheRules" -}}
- apiGroups: ["apps"]
  resources: ["deployments", "statefulsets", "replicasets"]
  verbs: ["list", "watch"]
- apiGroups: [""]
  resources: ["pods"]
  verbs: ["list", "watch"]
{{- /* Beside a ScaledObject the comparison reads the HPA KEDA made for it: kedaScaledObjects grants HPAs too. */}}
{{- if or .Values.rbac.shadowMode.horizontalPodAutoscalers .Values.rbac.shadowMode.kedaScaledObjects }}
- apiGroups: ["autoscaling"]
  resources: ["horizontalpodautoscalers"]
  verbs: ["list", "watch"]
{{- end }}
{{- if .Values.rbac.shadowMode.kedaScaledObjects }}
- apiGroups: ["keda.sh"]
  resources: ["scaledobjects"]
  verbs: ["list", "watch"]
{{- end }}
{{- end -}}
