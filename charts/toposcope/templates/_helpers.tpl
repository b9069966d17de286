{{/* The chart name, or nameOverride. */}}
{{- define "toposcope.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* The prefix of every object name: fullnameOverride, else release-chart (the release alone when it holds the chart name). */}}
{{- define "toposcope.fullname" -}}
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

{{/* Labels of every object. */}}
{{- define "toposcope.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
app.kubernetes.io/name: {{ include "toposcope.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{/* Selector labels of the serve pods. */}}
{{- define "toposcope.selectorLabels" -}}
app.kubernetes.io/name: {{ include "toposcope.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: serve
{{- end -}}

{{/* Selector labels of the agent pods. */}}
{{- define "toposcope.agentSelectorLabels" -}}
app.kubernetes.io/name: {{ include "toposcope.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: agent
{{- end -}}

{{/* The serve ServiceAccount's name. */}}
{{- define "toposcope.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "toposcope.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{/* The agent ServiceAccount's name. */}}
{{- define "toposcope.agentServiceAccountName" -}}
{{- printf "%s-agent" (include "toposcope.fullname" .) | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* The image reference. */}}
{{- define "toposcope.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}

{{/* The node agent's image reference. */}}
{{- define "toposcope.agentImage" -}}
{{- printf "%s:%s" .Values.agent.image.repository (default .Chart.AppVersion .Values.agent.image.tag) -}}
{{- end -}}

{{/* The container port of the API. */}}
{{- define "toposcope.port" -}}49021{{- end -}}

{{/* Where the serve container mounts the token Secret. */}}
{{- define "toposcope.tokensDir" -}}/etc/toposcope/tokens{{- end -}}

{{/*
The configuration file: .Values.config with what the chart decides set on
top (listen address, store, tokens, leader election).
*/}}
{{- define "toposcope.config" -}}
{{- $c := deepCopy .Values.config -}}
{{- if not $c.provider -}}
{{- $_ := set $c "provider" (dict "name" "sim" "params" (dict "model" "small-tree")) -}}
{{- end -}}
{{- $server := deepCopy (default dict $c.server) -}}
{{- $_ := set $server "listen" (printf "0.0.0.0:%s" (include "toposcope.port" .)) -}}
{{- $auth := deepCopy (default dict $server.auth) -}}
{{- if .Values.auth.existingSecret -}}
{{- $_ := set $auth "tokensFile" (printf "%s/%s" (include "toposcope.tokensDir" .) .Values.auth.key) -}}
{{- else -}}
{{- $_ := set $auth "anonymous" .Values.auth.anonymous -}}
{{- end -}}
{{- if .Values.schedulerExtender.enabled -}}
{{- /* kube-scheduler calls the Service by its DNS name: without tokens, a write-like POST is only let through for a known Host */ -}}
{{- $hosts := default list $auth.allowedHosts -}}
{{- $_ := set $auth "allowedHosts" (append $hosts (printf "%s.%s.svc" (include "toposcope.fullname" .) .Release.Namespace)) -}}
{{- end -}}
{{- $_ := set $server "auth" $auth -}}
{{- $_ := set $c "server" $server -}}
{{- $store := deepCopy (default dict $c.store) -}}
{{- $_ := set $store "path" "/var/lib/toposcope/toposcope.db" -}}
{{- if .Values.database.driver -}}
{{- $db := deepCopy (default dict $store.database) -}}
{{- $_ := set $db "driver" .Values.database.driver -}}
{{- $_ := set $db "dsnFile" "/etc/toposcope/database/dsn" -}}
{{- $_ := set $store "database" $db -}}
{{- end -}}
{{- $_ := set $c "store" $store -}}
{{- if .Values.schedulerExtender.enabled -}}
{{- $placement := deepCopy (default dict $c.placement) -}}
{{- $ext := deepCopy (default dict $placement.extender) -}}
{{- $_ := set $ext "enabled" true -}}
{{- if .Values.schedulerExtender.clients -}}
{{- if not (default dict (default dict .Values.config.server).tls).clientCA -}}
{{- fail "schedulerExtender.clients names client certificates, which need config.server.tls.clientCA (and cert, key) to be verified" -}}
{{- end -}}
{{- $_ := set $ext "clients" .Values.schedulerExtender.clients -}}
{{- end -}}
{{- $_ := set $placement "extender" $ext -}}
{{- $_ := set $c "placement" $placement -}}
{{- end -}}
{{- if gt (int .Values.replicaCount) 1 -}}
{{- $kube := deepCopy (default dict $c.kubernetes) -}}
{{- $le := deepCopy (default dict $kube.leaderElection) -}}
{{- $_ := set $le "enabled" true -}}
{{- $_ := set $le "namespace" .Release.Namespace -}}
{{- $_ := set $le "name" (include "toposcope.fullname" .) -}}
{{- if and .Values.auth.existingSecret (not .Values.database.driver) -}}
{{- if not .Values.auth.peerTokenKey -}}
{{- fail "auth.peerTokenKey must name the Secret's read token for the followers when replicaCount > 1 and auth.existingSecret is set (or set database.driver: followers then read the shared database)" -}}
{{- end -}}
{{- $_ := set $le "peerTokenFile" (printf "%s/%s" (include "toposcope.tokensDir" .) .Values.auth.peerTokenKey) -}}
{{- end -}}
{{- $_ := set $kube "leaderElection" $le -}}
{{- $_ := set $c "kubernetes" $kube -}}
{{- end -}}
{{- toYaml $c -}}
{{- end -}}

{{/*
The RBAC rule files (rbac/NAME.yaml) that the configuration needs, as a
list of dicts {file, namespace, resourceName}: one per engine, provider or
ledger source that talks to Kubernetes. Cluster rules of a file are bound
once; its namespaced rules go in namespace, their resourceNames replaced
by resourceName.
*/}}
{{- define "toposcope.rbacNeeds" -}}
{{- $needs := list -}}
{{- $c := .Values.config -}}
{{- if and $c.provider (eq (toString $c.provider.name) "k8s-labels") -}}
{{- $needs = append $needs (dict "file" "provider-k8s-labels") -}}
{{- end -}}
{{- if and $c.provider (eq (toString $c.provider.name) "dra") -}}
{{- $needs = append $needs (dict "file" "provider-dra") -}}
{{- end -}}
{{- if and $c.provider (eq (toString $c.provider.name) "infiniband") (default dict $c.provider.params).configMap -}}
{{- $ref := splitList "/" (toString $c.provider.params.configMap) -}}
{{- $needs = append $needs (dict "file" "provider-infiniband-report" "namespace" (first $ref) "resourceName" (last $ref)) -}}
{{- end -}}
{{- range $e := (default list $c.engines) -}}
{{- $p := default dict $e.params -}}
{{- if has (toString $e.name) (list "k8s-labels" "kueue" "kai" "kueue-budgets") -}}
{{- $needs = append $needs (dict "file" $e.name) -}}
{{- if and (eq (toString $e.name) "kueue") $p.manageFlavors -}}
{{- $needs = append $needs (dict "file" "kueue-flavors") -}}
{{- end -}}
{{- else if eq (toString $e.name) "nfd" -}}
{{- $needs = append $needs (dict "file" "nfd" "namespace" (default "node-feature-discovery" $p.namespace)) -}}
{{- else if eq (toString $e.name) "volcano" -}}
{{- $needs = append $needs (dict "file" "volcano") -}}
{{- else if eq (toString $e.name) "slinky" -}}
{{- $needs = append $needs (dict "file" "slinky" "namespace" (default "slurm" $p.namespace) "resourceName" (default "toposcope-topology" $p.configMap)) -}}
{{- end -}}
{{- end -}}
{{- $extender := or .Values.schedulerExtender.enabled (default dict (default dict $c.placement).extender).enabled -}}
{{- range $s := (default list (default dict $c.placement).sources) -}}
{{- if eq (toString $s.name) "kubernetes" -}}
{{- $needs = append $needs (dict "file" "ledger-kubernetes") -}}
{{- if $extender -}}
{{- $needs = append $needs (dict "file" "extender") -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- toJson (dict "needs" $needs) -}}
{{- end -}}

{{/* rules renders the rules of kind (ClusterRole or Role) in rbac/FILE.yaml, with resourceNames replaced by resourceName. */}}
{{- define "toposcope.rules" -}}
{{- $rules := list -}}
{{- range $doc := splitList "\n---\n" (.root.Files.Get (printf "rbac/%s.yaml" .file)) -}}
{{- $obj := fromYaml $doc -}}
{{- if eq (toString $obj.kind) $.kind -}}
{{- range $r := $obj.rules -}}
{{- $r = deepCopy $r -}}
{{- if and (hasKey $r "resourceNames") $.resourceName -}}
{{- $_ := set $r "resourceNames" (list $.resourceName) -}}
{{- end -}}
{{- $rules = append $rules $r -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- toYaml $rules -}}
{{- end -}}

{{/* Whether the service listens with TLS (config.server.tls.cert or key). */}}
{{- define "toposcope.tls" -}}
{{- $tls := (default dict (default dict .Values.config.server).tls) -}}
{{- if or $tls.cert $tls.key }}true{{ end -}}
{{- end -}}

{{/* A probe of the serve container (.probe), its httpGet scheme HTTPS when the service listens with TLS and the probe names none. */}}
{{- define "toposcope.probe" -}}
{{- if .probe -}}
{{- $p := deepCopy .probe -}}
{{- if and $p.httpGet (include "toposcope.tls" .root) (not $p.httpGet.scheme) -}}
{{- $_ := set $p.httpGet "scheme" "HTTPS" -}}
{{- end -}}
{{- toYaml $p -}}
{{- end -}}
{{- end -}}

{{/*
The endpoints that config.provider (and, for merge, its sources) calls,
as JSON {"rules": [{"cidrs": [...], "port": N}]}: each endpoint, url,
tokenURL, metadataURL, instanceURL and server.url param, to its address
when it is an IP and to networkPolicy.egress.endpointCIDRs when it is a
name; port 443 to those CIDRs for a cloud provider left on its default
API.
*/}}
{{- define "toposcope.providerEndpoints" -}}
{{- $anywhere := .Values.networkPolicy.egress.endpointCIDRs -}}
{{- $plugins := list -}}
{{- $p := .Values.config.provider -}}
{{- if $p -}}
{{- $plugins = append $plugins (dict "name" (toString $p.name) "params" (default dict $p.params)) -}}
{{- if eq (toString $p.name) "merge" -}}
{{- range $src := (default list (default dict $p.params).sources) -}}
{{- $plugins = append $plugins (dict "name" (toString $src.provider) "params" (default dict $src.params)) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- $rules := list -}}
{{- range $pl := $plugins -}}
{{- $urls := list -}}
{{- range $k := list "endpoint" "url" "tokenURL" "metadataURL" "instanceURL" -}}
{{- with get $pl.params $k }}{{ $urls = append $urls (toString .) }}{{ end -}}
{{- end -}}
{{- if kindIs "map" $pl.params.server -}}
{{- with $pl.params.server.url }}{{ $urls = append $urls (toString .) }}{{ end -}}
{{- end -}}
{{- if and (not $urls) (has $pl.name (list "aws" "gcp" "oci" "nebius" "lambda" "nscale")) -}}
{{- $rules = append $rules (dict "cidrs" $anywhere "port" 443) -}}
{{- end -}}
{{- range $u := $urls -}}
{{- $url := urlParse $u -}}
{{- $port := regexFind "[0-9]+$" (regexFind ":[0-9]+$" $url.host) -}}
{{- if not $port -}}{{- $port = ternary "80" "443" (eq $url.scheme "http") -}}{{- end -}}
{{- $cidrs := $anywhere -}}
{{- if regexMatch "^[0-9]+\\.[0-9]+\\.[0-9]+\\.[0-9]+$" $url.hostname -}}
{{- $cidrs = list (printf "%s/32" $url.hostname) -}}
{{- else if contains ":" $url.hostname -}}
{{- $cidrs = list (printf "%s/128" $url.hostname) -}}
{{- end -}}
{{- $rules = append $rules (dict "cidrs" $cidrs "port" (atoi $port)) -}}
{{- end -}}
{{- end -}}
{{- toJson (dict "rules" (uniq $rules)) -}}
{{- end -}}

{{/* Labels of the helm test Pod. */}}
{{- define "toposcope.testSelectorLabels" -}}
app.kubernetes.io/name: {{ include "toposcope.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: test
{{- end -}}

{{/* "true" when the helm test Pod is rendered: tests.enabled, no TLS, and a read token for it when the API has tokens. */}}
{{- define "toposcope.testPod" -}}
{{- $tokenKey := .Values.tests.tokenKey | default .Values.auth.peerTokenKey -}}
{{- if and .Values.tests.enabled (not (include "toposcope.tls" .)) (or (not .Values.auth.existingSecret) $tokenKey) }}true{{ end -}}
{{- end -}}
